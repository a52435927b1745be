//! The policy manager: `GET /policy` shows every permission's setting on
//! each channel, `PUT /policy` changes one, for every session at once.
//!
//! A row is a permission of the dispatcher's
//! [`policy_entries`](crate::Dispatcher::policy_entries), or an ability
//! declared `internal`. A cell that is `internal` — the ability declared
//! so, or the operator's policy setting the permission or its `tool.*` so
//! on that channel — is shown so the operator sees the whole gate, but not
//! editable: changing it is `409 not-editable`; the row's other cells are. A
//! change is kept in the sessions' store and swapped into the live policy
//! ([`Sessions::set_policy`]), so it survives a restart and gates the next
//! call of every run. Only a principal the [`Authenticate`] seam lets
//! [change the policy](Authenticate::may_change_policy) may `PUT`; anyone
//! else is `403 forbidden`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::{Api, Caller, error, session_error};
use crate::Channel;
use crate::dispatch::{Setting, SettingSource};
use crate::session::sessions::Sessions;

use super::Authenticate;

/// One channel's cell of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cell {
    setting: Setting,
    source: &'static str,
    editable: bool,
}

/// One permission and its cell on each channel, in [`Channel::ALL`] order.
struct Row {
    permission: String,
    cells: [Cell; 3],
}

impl Row {
    fn to_json(&self) -> Value {
        let mut settings = Map::new();
        for (channel, cell) in Channel::ALL.iter().zip(&self.cells) {
            settings.insert(
                channel.as_str().to_owned(),
                json!({
                    "setting": cell.setting.as_str(),
                    "source": cell.source,
                    "editable": cell.editable,
                }),
            );
        }
        json!({ "permission": self.permission, "settings": settings })
    }
}

fn source_name(source: SettingSource) -> &'static str {
    match source {
        SettingSource::Explicit => "explicit",
        SettingSource::EveryAction => "every-action",
        SettingSource::Default => "default",
    }
}

/// Every row, sorted by permission: the dispatcher's
/// [`policy_entries`](crate::Dispatcher::policy_entries), each cell
/// editable unless `internal` (set so, or covered by a `tool.*` set so),
/// then the abilities declared internal.
fn rows(sessions: &Sessions) -> Vec<Row> {
    let dispatcher = sessions.dispatcher();
    let mut rows: Vec<Row> = dispatcher
        .policy_entries()
        .into_iter()
        .map(|entry| Row {
            cells: Channel::ALL.map(|channel| Cell {
                setting: entry.setting(channel),
                source: source_name(entry.source(channel)),
                editable: entry.setting(channel) != Setting::Internal,
            }),
            permission: entry.permission,
        })
        .collect();
    let declared = Cell {
        setting: Setting::Internal,
        source: "declared",
        editable: false,
    };
    for entry in dispatcher.registry().iter() {
        if entry.spec().internal() {
            rows.push(Row {
                permission: entry.name().to_owned(),
                cells: [declared; 3],
            });
        }
    }
    rows.sort_by(|a, b| a.permission.cmp(&b.permission));
    rows
}

/// `GET /policy`: every row, and whether the caller may change them.
pub(super) async fn show<A: Authenticate>(caller: Caller, State(api): State<Api<A>>) -> Response {
    let permissions: Vec<Value> = rows(&api.sessions).iter().map(Row::to_json).collect();
    let channels: Vec<&str> = Channel::ALL
        .iter()
        .map(|channel| channel.as_str())
        .collect();
    Json(json!({
        "channels": channels,
        "permissions": permissions,
        "mayChange": api.auth.may_change_policy(&caller.0),
    }))
    .into_response()
}

/// The 422 for a `PUT /policy` body that does not name a change.
fn invalid(message: impl std::fmt::Display) -> Response {
    error(
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid-body",
        format!(
            "{message}; send e.g. {{\"permission\": \"calendar.create\", \"channel\": \"chat\", \"setting\": \"allow\"}}"
        ),
    )
}

/// `PUT /policy` `{"permission", "channel", "setting"}`: changes one cell
/// for every session, effective on the next call; answers the row.
pub(super) async fn change<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    body: Option<Json<Value>>,
) -> Response {
    if !api.auth.may_change_policy(&caller.0) {
        return error(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!(
                "`{}` may read the policy but not change it; ask an administrator of this service",
                caller.0
            ),
        );
    }
    let body = body.map(|Json(body)| body).unwrap_or_default();
    let field = |key: &str| body.get(key).and_then(Value::as_str);
    let (Some(permission), Some(channel), Some(setting)) =
        (field("permission"), field("channel"), field("setting"))
    else {
        return invalid("the body needs the strings `permission`, `channel` and `setting`");
    };
    let Some(channel) = Channel::parse(channel) else {
        return invalid(format!(
            "no channel `{channel}`; the channels are chat, subconscious and external"
        ));
    };
    let setting = match Setting::parse(setting) {
        Some(Setting::Internal) => {
            return invalid(
                "`internal` is declared by an ability, not chosen here; set allow, ask or deny",
            );
        }
        Some(setting) => setting,
        None => return invalid(format!("no setting `{setting}`; set allow, ask or deny")),
    };
    let Some(row) = rows(&api.sessions)
        .into_iter()
        .find(|row| row.permission == permission)
    else {
        return invalid(format!(
            "no permission `{permission}` in the policy; GET /policy lists them"
        ));
    };
    let position = Channel::ALL
        .iter()
        .position(|known| *known == channel)
        .unwrap_or_default();
    if !row.cells[position].editable {
        return error(
            StatusCode::CONFLICT,
            "not-editable",
            format!(
                "`{permission}` is internal on {}: it runs without approval by design and is not a choice",
                channel.as_str()
            ),
        );
    }
    if let Err(failure) = api.sessions.set_policy(channel, permission, setting) {
        return session_error(failure);
    }
    tracing::info!(
        principal = %caller.0,
        permission,
        channel = channel.as_str(),
        setting = setting.as_str(),
        "policy changed"
    );
    match rows(&api.sessions)
        .into_iter()
        .find(|row| row.permission == permission)
    {
        Some(row) => Json(row.to_json()).into_response(),
        None => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "store-failed",
            format!("`{permission}` left the policy as it was changed; GET /policy shows it now"),
        ),
    }
}
