//! An axum router over [`Sessions`] (feature `http`): a run's events as
//! Server-Sent Events, approvals, and the session's mode.
//!
//! | route | what |
//! |---|---|
//! | `POST /sessions/{id}/messages` `{"content": "..."}` | starts a run; `201 {"runId": ...}` |
//! | `GET /runs/{runId}/events` | the run's events from the first, as SSE (`event:` the name, `id:` the position, `data:` the JSON) |
//! | `POST /runs/{runId}/tools/{toolCallId}/approve` | approves a pending write; `204` |
//! | `POST /runs/{runId}/tools/{toolCallId}/reject` | rejects it; `204` |
//! | `PATCH /sessions/{id}` `{"mode": "auto"}` | changes the mode; `200 {"id": ..., "mode": ...}` |
//!
//! Errors are JSON `{"error": "..."}` with `404` (unknown run), `409` (no
//! such pending approval), `422` (a bad body) or `500` (the store).

use std::convert::Infallible;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, post};
use futures::StreamExt;
use serde_json::{Value, json};

use super::mode::Mode;
use super::sessions::{SessionError, Sessions};

/// The router; serve it with `axum::serve`, or nest it in an app.
///
/// ```no_run
/// # async fn serve(sessions: chalie_core::session::Sessions) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, chalie_core::session::router(sessions)).await
/// # }
/// ```
pub fn router(sessions: Sessions) -> Router {
    Router::new()
        .route("/sessions/{id}/messages", post(send))
        .route("/sessions/{id}", patch(set_mode))
        .route("/runs/{run_id}/events", get(events))
        .route("/runs/{run_id}/tools/{call_id}/approve", post(approve))
        .route("/runs/{run_id}/tools/{call_id}/reject", post(reject))
        .with_state(sessions)
}

fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    (status, Json(json!({ "error": message.to_string() }))).into_response()
}

fn session_error(failure: SessionError) -> Response {
    let status = match failure {
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

async fn send(
    State(sessions): State<Sessions>,
    Path(id): Path<String>,
    body: Option<Json<Value>>,
) -> Response {
    let body = body.map(|Json(body)| body).unwrap_or_default();
    let Some(content) = body.get("content").and_then(Value::as_str) else {
        return missing("content", r#"{"content": "what are my tasks?"}"#);
    };
    match sessions.send(&id, content) {
        Ok(run) => (StatusCode::CREATED, Json(json!({ "runId": run.id() }))).into_response(),
        Err(failure) => session_error(failure),
    }
}

async fn set_mode(
    State(sessions): State<Sessions>,
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
    match sessions.set_mode(&id, mode) {
        Ok(()) => Json(json!({ "id": id, "mode": mode })).into_response(),
        Err(failure) => session_error(failure),
    }
}

async fn events(State(sessions): State<Sessions>, Path(run_id): Path<String>) -> Response {
    let Some(run) = sessions.run(&run_id) else {
        return error(
            StatusCode::NOT_FOUND,
            format!(
                "no run `{run_id}` in this process; start one with POST /sessions/{{id}}/messages"
            ),
        );
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

async fn approve(
    State(sessions): State<Sessions>,
    Path((run_id, call_id)): Path<(String, String)>,
) -> Response {
    match sessions.approve(&run_id, &call_id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(failure) => session_error(failure),
    }
}

async fn reject(
    State(sessions): State<Sessions>,
    Path((run_id, call_id)): Path<(String, String)>,
) -> Response {
    match sessions.reject(&run_id, &call_id) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(failure) => session_error(failure),
    }
}
