//! An axum router over [`Sessions`] (feature `http`): a run's events as
//! Server-Sent Events, approvals, the session's mode and its plan, each
//! request authenticated into a [`Principal`] and acting only on that
//! principal's sessions.
//!
//! | route | what |
//! |---|---|
//! | `GET /health` | `200 {"status": "ok"}`, without credentials: for load balancers |
//! | `GET /me` | who the credentials prove: `200 {"principal": ..., "mayChangePolicy": ...}` |
//! | `POST /sessions` `{"mode": "plan"}` (optional) | opens a session owned by the caller, with a fresh id; `201 {"id": ..., "mode": ...}` |
//! | `GET /sessions` | the caller's sessions, oldest first: `200 {"sessions": [{"id", "mode"}]}`; never another principal's |
//! | `POST /sessions/{id}/messages` `{"content": "..."}` | starts a run; `201 {"runId": ..., "messageId": ...}` (the same id) |
//! | `GET /sessions/{id}/messages` | the session's history: `200 {"messages": [...]}`, each user or assistant message with its `toolCalls` and their `card`s ([`HistoryMessage`](crate::session::HistoryMessage)), to rebuild the cards after a reload |
//! | `GET /sessions/{id}/messages/{messageId}/stream` | the run the message started, as SSE (`event:` the name, `id:` the position, `data:` the JSON), from its first event |
//! | `GET /runs/{runId}/events` | the same stream, by run id |
//! | `POST /runs/{runId}/tools/{toolCallId}/approve` | approves a pending write; `204` |
//! | `POST /runs/{runId}/tools/{toolCallId}/reject` | rejects it; `204` |
//! | `PATCH /sessions/{id}` `{"mode": "auto"}` | changes the mode; `200 {"id": ..., "mode": ...}` |
//! | `GET /sessions/{id}/plan` | the plan collected in `plan_collect`; `200 {"steps": [{"index", "callId", "tool", "input"}]}` |
//! | `POST /sessions/{id}/plan/execute` | runs the plan; `201 {"runId": ...}` |
//! | `DELETE /sessions/{id}/plan` | discards the plan; `204` |
//! | `GET /plans?sessionId=` | the caller's plans (a plan's id is its session's): `200 {"plans": [{"planId", "sessionId", "steps"}]}`; with `sessionId`, that session's only |
//! | `POST /plans/{planId}/execute` | runs the plan; `201 {"runId": ...}` |
//! | `DELETE /plans/{planId}` | discards it; `204` |
//! | `GET /policy` | every permission's setting per channel: `200 {"channels": [...], "permissions": [{"permission", "settings": {"chat": {"setting", "source", "editable"}, ...}}], "mayChange": ...}` |
//! | `PUT /policy` `{"permission", "channel", "setting"}` | changes one setting for every session, kept in the store and effective on the next call; `200` the row |
//!
//! Every route but `/health` first asks the [`Authenticate`] seam who is
//! calling ([`BearerTokens`] by default): no or bad credentials are `401`
//! with a `WWW-Authenticate` challenge. A session belongs to the principal
//! whose request opened it; a request on a session (or a run, a plan, or
//! an approval) of another principal, or of none, is `403` and nothing
//! runs. Reading a session, or its plan, or running or discarding the
//! plan, never opens one: an unknown session id is `404 not-found`, and
//! nothing is stored. The policy is every session's: anyone signed in reads it, only a
//! principal the seam lets [change it](Authenticate::may_change_policy)
//! (e.g. [`BearerTokens::with_admin`]) changes it; `internal` rows are
//! shown but not editable.
//!
//! Errors, axum's own rejections included, are JSON
//! `{"error": "<what to do>", "code": "<kebab-case>"}`: `401 unauthorized`,
//! `403 not-owner` (another principal's session), `403 forbidden` (a policy
//! change by a non-administrator), `404 not-found` (an unknown run, session
//! or route, or a message of another session), `405`, `409 not-pending` /
//! `empty-plan` / `not-editable`, `413` (a body over
//! [`errors::BODY_LIMIT`]), `415`, `422 invalid-body`, `500 store-failed`
//! or `503 overloaded` (with `Retry-After`): see [`errors`] for the codes.

mod auth;
mod console;
pub mod errors;
mod policy;
mod tools;

use errors::error;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{FromRequestParts, Path, RawQuery, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, patch, post};
use futures::StreamExt;
use serde_json::{Value, json};

pub use auth::{Authenticate, BearerTokens, TokenError, Unauthorized};
pub use console::{console, console_at};
pub use tools::ToolsApi;

use crate::session::error::SessionError;
use crate::session::mode::Mode;
use crate::session::owner::AsPrincipal;
use crate::session::sessions::Sessions;
use crate::turn::Principal;

/// The router; serve it with `axum::serve`, or nest it in an app. `auth`
/// decides who each request comes from.
///
/// ```no_run
/// use chalie_core::turn::Principal;
/// use chalie_core::session::{BearerTokens, Sessions, router};
///
/// # async fn serve(sessions: Sessions) -> Result<(), Box<dyn std::error::Error>> {
/// let tokens = BearerTokens::new()
///     .with(&std::env::var("ALICE_TOKEN")?, Principal::new("alice"))?;
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, router(sessions, tokens)).await?;
/// # Ok(()) }
/// ```
pub fn router<A: Authenticate>(sessions: Sessions, auth: A) -> Router {
    let max_streams = sessions.core.config.max_streams;
    let routes = Router::new()
        .route("/health", get(health))
        .route("/me", get(me::<A>))
        .route(
            "/sessions",
            post(create_session::<A>).get(list_sessions::<A>),
        )
        .route("/sessions/{id}/messages", post(send::<A>).get(history::<A>))
        .route(
            "/sessions/{id}/messages/{message_id}/stream",
            get(message_stream::<A>),
        )
        .route("/sessions/{id}", patch(set_mode::<A>))
        .route(
            "/sessions/{id}/plan",
            get(plan::<A>).delete(discard_plan::<A>),
        )
        .route("/sessions/{id}/plan/execute", post(execute_plan::<A>))
        .route("/runs/{run_id}/events", get(events::<A>))
        .route("/runs/{run_id}/tools/{call_id}/approve", post(approve::<A>))
        .route("/runs/{run_id}/tools/{call_id}/reject", post(reject::<A>))
        .route("/plans", get(plans::<A>))
        .route("/plans/{plan_id}/execute", post(execute_plan::<A>))
        .route("/plans/{plan_id}", delete(discard_plan::<A>))
        .route("/policy", get(policy::show::<A>).put(policy::change::<A>))
        .with_state(Api {
            sessions,
            auth: Arc::new(auth),
        });
    errors::harden(routes, max_streams)
}

/// What every handler shares.
struct Api<A> {
    sessions: Sessions,
    auth: Arc<A>,
}

impl<A> Clone for Api<A> {
    fn clone(&self) -> Self {
        Self {
            sessions: self.sessions.clone(),
            auth: Arc::clone(&self.auth),
        }
    }
}

/// The authenticated caller. Every handler takes it first, so no route
/// runs, or even reads its body, for a request that proved no principal.
struct Caller(Principal);

/// A router's state that holds the [`Authenticate`] seam: what [`Caller`]
/// needs, whichever router (the API's, the Tools view's) extracts it.
trait Authenticated {
    /// The seam's type.
    type Auth: Authenticate;
    /// The seam that authenticates each request.
    fn auth(&self) -> &Self::Auth;
}

impl<A: Authenticate> Authenticated for Api<A> {
    type Auth = A;
    fn auth(&self) -> &A {
        &self.auth
    }
}

impl<S: Authenticated + Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        match state.auth().authenticate(&parts.headers).await {
            Ok(principal) => Ok(Caller(principal)),
            Err(unauthorized) => Err(unauthorized.into_response()),
        }
    }
}

impl Caller {
    fn on<'a>(&'a self, sessions: &'a Sessions) -> AsPrincipal<'a> {
        sessions.as_principal(&self.0)
    }
}

fn session_error(failure: SessionError) -> Response {
    let (status, code) = match failure {
        SessionError::NotOwner { .. } => (StatusCode::FORBIDDEN, "not-owner"),
        SessionError::UnknownSession(_) => (StatusCode::NOT_FOUND, "not-found"),
        SessionError::NotPending { .. } => (StatusCode::CONFLICT, "not-pending"),
        SessionError::EmptyPlan(_) => (StatusCode::CONFLICT, "empty-plan"),
        SessionError::BadPermission(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid-body"),
        SessionError::Overloaded { .. } => return errors::overloaded("running runs"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "store-failed"),
    };
    error(status, code, failure)
}

/// The 422 for a body without the string field `key`.
fn missing(key: &str, example: &str) -> Response {
    error(
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid-body",
        format!("the body needs a string `{key}`, e.g. {example}"),
    )
}

fn started(run: Result<crate::session::Run, SessionError>) -> Response {
    match run {
        Ok(run) => (StatusCode::CREATED, Json(json!({ "runId": run.id() }))).into_response(),
        Err(failure) => session_error(failure),
    }
}

/// `GET /health`: the process answers. No credentials: a load balancer
/// has none, and the answer says nothing about anyone.
async fn health() -> Response {
    Json(json!({ "status": "ok" })).into_response()
}

/// `GET /me`: who the credentials prove, for a client's header.
async fn me<A: Authenticate>(caller: Caller, State(api): State<Api<A>>) -> Response {
    Json(json!({
        "principal": caller.0.id(),
        "mayChangePolicy": api.auth.may_change_policy(&caller.0),
    }))
    .into_response()
}

/// `GET /sessions`: the caller's sessions, oldest first.
async fn list_sessions<A: Authenticate>(caller: Caller, State(api): State<Api<A>>) -> Response {
    match caller.on(&api.sessions).sessions() {
        Ok(sessions) => {
            let sessions: Vec<Value> = sessions
                .iter()
                .map(|session| json!({ "id": session.id, "mode": session.mode }))
                .collect();
            Json(json!({ "sessions": sessions })).into_response()
        }
        Err(failure) => session_error(failure),
    }
}

/// `GET /plans?sessionId=`: the caller's plans, or one session's.
async fn plans<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    RawQuery(query): RawQuery,
) -> Response {
    let session_id = query.as_deref().and_then(|query| {
        form_urlencoded::parse(query.as_bytes())
            .find(|(key, _)| key == "sessionId")
            .map(|(_, value)| value.into_owned())
    });
    match caller.on(&api.sessions).plans(session_id.as_deref()) {
        Ok(plans) => {
            let plans: Vec<Value> = plans
                .into_iter()
                .map(|(session_id, steps)| {
                    json!({ "planId": session_id, "sessionId": session_id, "steps": steps })
                })
                .collect();
            Json(json!({ "plans": plans })).into_response()
        }
        Err(failure) => session_error(failure),
    }
}

async fn send<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path(id): Path<String>,
    body: Option<Json<Value>>,
) -> Response {
    let body = body.map(|Json(body)| body).unwrap_or_default();
    let Some(content) = body.get("content").and_then(Value::as_str) else {
        return missing("content", r#"{"content": "what are my tasks?"}"#);
    };
    match caller.on(&api.sessions).send(&id, content) {
        // A message starts one run: its id names both.
        Ok(run) => (
            StatusCode::CREATED,
            Json(json!({ "runId": run.id(), "messageId": run.id() })),
        )
            .into_response(),
        Err(failure) => session_error(failure),
    }
}

/// `POST /sessions` (`{"mode": "plan"}`, optional): a new session, owned
/// by the caller, with a fresh id nobody else knows.
async fn create_session<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    body: Option<Json<Value>>,
) -> Response {
    let body = body.map(|Json(body)| body).unwrap_or_default();
    let mode = match body.get("mode") {
        None | Some(Value::Null) => Mode::default(),
        Some(Value::String(name)) => match name.parse::<Mode>() {
            Ok(mode) => mode,
            Err(unknown) => {
                return error(StatusCode::UNPROCESSABLE_ENTITY, "invalid-body", unknown);
            }
        },
        Some(_) => return missing("mode", r#"{"mode": "plan"}"#),
    };
    let id = fresh_session_id();
    match caller.on(&api.sessions).set_mode(&id, mode) {
        Ok(()) => (StatusCode::CREATED, Json(json!({ "id": id, "mode": mode }))).into_response(),
        Err(failure) => session_error(failure),
    }
}

/// A session id no other caller can guess: `s-` and 128 random bits.
fn fresh_session_id() -> String {
    format!("s-{}", crate::token::fresh_token())
}

async fn set_mode<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path(id): Path<String>,
    body: Option<Json<Value>>,
) -> Response {
    let body = body.map(|Json(body)| body).unwrap_or_default();
    let Some(name) = body.get("mode").and_then(Value::as_str) else {
        return missing("mode", r#"{"mode": "auto"}"#);
    };
    let mode = match name.parse::<Mode>() {
        Ok(mode) => mode,
        Err(unknown) => return error(StatusCode::UNPROCESSABLE_ENTITY, "invalid-body", unknown),
    };
    match caller.on(&api.sessions).set_mode(&id, mode) {
        Ok(()) => Json(json!({ "id": id, "mode": mode })).into_response(),
        Err(failure) => session_error(failure),
    }
}

async fn history<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path(id): Path<String>,
) -> Response {
    match caller.on(&api.sessions).history(&id) {
        Ok(messages) => Json(json!({ "messages": messages })).into_response(),
        Err(failure) => session_error(failure),
    }
}

async fn plan<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path(id): Path<String>,
) -> Response {
    match caller.on(&api.sessions).plan(&id) {
        Ok(steps) => Json(json!({ "steps": steps })).into_response(),
        Err(failure) => session_error(failure),
    }
}

async fn execute_plan<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path(id): Path<String>,
) -> Response {
    started(caller.on(&api.sessions).execute_plan(&id))
}

async fn discard_plan<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path(id): Path<String>,
) -> Response {
    match caller.on(&api.sessions).discard_plan(&id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(failure) => session_error(failure),
    }
}

async fn events<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path(run_id): Path<String>,
) -> Response {
    stream(&caller, &api.sessions, &run_id, None)
}

/// `GET /sessions/{id}/messages/{messageId}/stream`: the run the message
/// started, which must be of that session.
async fn message_stream<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path((session_id, message_id)): Path<(String, String)>,
) -> Response {
    stream(&caller, &api.sessions, &message_id, Some(&session_id))
}

/// The run's events as SSE, from the first, for its session's owner;
/// with `session_id`, only when the run is that session's.
fn stream(
    caller: &Caller,
    sessions: &Sessions,
    run_id: &str,
    session_id: Option<&str>,
) -> Response {
    let run = match caller.on(sessions).run(run_id) {
        Ok(Some(run)) if session_id.is_none_or(|id| id == run.session_id()) => run,
        Ok(_) => {
            return error(
                StatusCode::NOT_FOUND,
                "not-found",
                format!(
                    "no run `{run_id}` here; start one with POST /sessions/{{id}}/messages and use the `messageId` it answers"
                ),
            );
        }
        Err(failure) => return session_error(failure),
    };
    let stream = run
        .events()
        .into_stream()
        .enumerate()
        .map(|(position, event)| {
            Ok::<_, Infallible>(
                SseEvent::default()
                    .event(event.name())
                    .id(position.to_string())
                    .data(event.to_json()),
            )
        });
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

async fn approve<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path((run_id, call_id)): Path<(String, String)>,
) -> Response {
    match caller.on(&api.sessions).approve(&run_id, &call_id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(failure) => session_error(failure),
    }
}

async fn reject<A: Authenticate>(
    caller: Caller,
    State(api): State<Api<A>>,
    Path((run_id, call_id)): Path<(String, String)>,
) -> Response {
    match caller.on(&api.sessions).reject(&run_id, &call_id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(failure) => session_error(failure),
    }
}
