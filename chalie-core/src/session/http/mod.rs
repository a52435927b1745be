//! An axum router over [`Sessions`] (feature `http`): a run's events as
//! Server-Sent Events, approvals, the session's mode and its plan, each
//! request authenticated into a [`Principal`] and acting only on that
//! principal's sessions.
//!
//! | route | what |
//! |---|---|
//! | `POST /sessions` `{"mode": "plan"}` (optional) | opens a session owned by the caller, with a fresh id; `201 {"id": ..., "mode": ...}` |
//! | `POST /sessions/{id}/messages` `{"content": "..."}` | starts a run; `201 {"runId": ...}` |
//! | `GET /sessions/{id}/messages` | the session's history: `200 {"messages": [...]}`, each user or assistant message with its `toolCalls` and their `card`s ([`HistoryMessage`](crate::session::HistoryMessage)), to rebuild the cards after a reload |
//! | `GET /runs/{runId}/events` | the run's events from the first, as SSE (`event:` the name, `id:` the position, `data:` the JSON) |
//! | `POST /runs/{runId}/tools/{toolCallId}/approve` | approves a pending write; `204` |
//! | `POST /runs/{runId}/tools/{toolCallId}/reject` | rejects it; `204` |
//! | `PATCH /sessions/{id}` `{"mode": "auto"}` | changes the mode; `200 {"id": ..., "mode": ...}` |
//! | `GET /sessions/{id}/plan` | the plan collected in `plan_collect`; `200 {"steps": [...]}` |
//! | `POST /sessions/{id}/plan/execute` | runs the plan; `201 {"runId": ...}` |
//! | `DELETE /sessions/{id}/plan` | discards the plan; `204` |
//!
//! Every route first asks the [`Authenticate`] seam who is calling
//! ([`BearerTokens`] by default): no or bad credentials are `401` with a
//! `WWW-Authenticate` challenge. A session belongs to the principal whose
//! request opened it; a request on a session (or a run, or an approval) of
//! another principal, or of none, is `403` and nothing runs.
//!
//! Errors are JSON `{"error": "..."}` with `401` (not authenticated),
//! `403` (not the session's owner), `404` (unknown run), `409` (no such
//! pending approval, no plan), `422` (a bad body) or `500` (the store).

mod auth;
mod console;
mod tools;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
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
    Router::new()
        .route("/sessions", post(create_session::<A>))
        .route("/sessions/{id}/messages", post(send::<A>).get(history::<A>))
        .route("/sessions/{id}", patch(set_mode::<A>))
        .route(
            "/sessions/{id}/plan",
            get(plan::<A>).delete(discard_plan::<A>),
        )
        .route("/sessions/{id}/plan/execute", post(execute_plan::<A>))
        .route("/runs/{run_id}/events", get(events::<A>))
        .route("/runs/{run_id}/tools/{call_id}/approve", post(approve::<A>))
        .route("/runs/{run_id}/tools/{call_id}/reject", post(reject::<A>))
        .with_state(Api {
            sessions,
            auth: Arc::new(auth),
        })
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

impl<A: Authenticate> FromRequestParts<Api<A>> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, api: &Api<A>) -> Result<Self, Response> {
        match api.auth.authenticate(&parts.headers).await {
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

fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    (status, Json(json!({ "error": message.to_string() }))).into_response()
}

fn session_error(failure: SessionError) -> Response {
    let status = match failure {
        SessionError::NotOwner { .. } => StatusCode::FORBIDDEN,
        SessionError::NotPending { .. } => StatusCode::CONFLICT,
        SessionError::EmptyPlan(_) => StatusCode::CONFLICT,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, failure)
}

/// The 422 for a body without the string field `key`.
fn missing(key: &str, example: &str) -> Response {
    error(
        StatusCode::UNPROCESSABLE_ENTITY,
        format!("the body needs a string `{key}`, e.g. {example}"),
    )
}

fn started(run: Result<crate::session::Run, SessionError>) -> Response {
    match run {
        Ok(run) => (StatusCode::CREATED, Json(json!({ "runId": run.id() }))).into_response(),
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
    started(caller.on(&api.sessions).send(&id, content))
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
            Err(unknown) => return error(StatusCode::UNPROCESSABLE_ENTITY, unknown),
        },
        Some(_) => return missing("mode", r#"{"mode": "plan"}"#),
    };
    let id = fresh_session_id();
    match caller.on(&api.sessions).set_mode(&id, mode) {
        Ok(()) => (StatusCode::CREATED, Json(json!({ "id": id, "mode": mode }))).into_response(),
        Err(failure) => session_error(failure),
    }
}

/// 128 bits from the process's random hasher seeds and a counter: unique,
/// and not guessable from another session's id.
fn fresh_session_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let count = NEXT.fetch_add(1, Ordering::Relaxed);
    let half = |salt: u64| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(count);
        hasher.write_u64(salt);
        hasher.finish()
    };
    format!("s-{:016x}{:016x}", half(1), half(2))
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
        Err(unknown) => return error(StatusCode::UNPROCESSABLE_ENTITY, unknown),
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
    let run = match caller.on(&api.sessions).run(&run_id) {
        Ok(Some(run)) => run,
        Ok(None) => {
            return error(
                StatusCode::NOT_FOUND,
                format!(
                    "no run `{run_id}` in this process; start one with POST /sessions/{{id}}/messages"
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
