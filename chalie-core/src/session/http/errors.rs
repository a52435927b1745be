//! The router's one error shape, and the guard that keeps every answer in it.
//!
//! Every `4xx` and `5xx` the router gives is JSON,
//! `{"error": "<what went wrong and how to fix it>", "code": "<kebab-case>"}`,
//! with `content-type: application/json`: the handlers' own errors
//! ([`error`]), and also what axum answers by itself before a handler runs
//! (a body that is not JSON, a wrong content type, a body over the limit, a
//! path segment that is not UTF-8, an unknown route, a method the route
//! does not take). `harden` installs that on the API router, `shape` (all
//! but the catch-all fallback) on a router merged beside it.
//!
//! | code | status | when |
//! |---|---|---|
//! | `invalid-body` | `400`, `422` | the body is not JSON, or not the JSON the route takes |
//! | `invalid-path` | `400` | a path segment is not valid (e.g. percent-encoded bytes that are not UTF-8) |
//! | `invalid-query` | `400` | the query string is not what the route takes |
//! | `unauthorized` | `401` | no or bad credentials |
//! | `not-owner` | `403` | the session is another principal's |
//! | `not-found` | `404` | no such route, run or object |
//! | `method-not-allowed` | `405` | the route exists, not with that method (`Allow` lists those it takes) |
//! | `conflict` | `409` | the object is not in a state that allows it (routes give finer codes) |
//! | `payload-too-large` | `413` | the body is over [`BODY_LIMIT`] bytes |
//! | `unsupported-media-type` | `415` | a body without `content-type: application/json` |
//! | `store-failed` | `500` | the store failed; retry later |
//! | `overloaded` | `503` | the process is at its limit of running runs or open streams; `Retry-After` says when to retry |

use std::fmt::Display;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// The largest request body the router reads, in bytes (1 MiB); a larger
/// one is `413` with code `payload-too-large`, read no further than the limit.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// How many seconds an `overloaded` answer asks the client to wait
/// (`Retry-After`) before it tries again.
pub const RETRY_AFTER_SECONDS: u32 = 1;

/// The largest error body [`harden`] reads to rewrite it: axum's own
/// rejections are one line.
const REWRITE_LIMIT: usize = 16 * 1024;

/// An error answer: `status`, and `{"error": message, "code": code}`.
/// `message` says what to do about it; `code` is kebab-case and stable,
/// for clients to branch on.
pub fn error(status: StatusCode, code: &str, message: impl Display) -> Response {
    (
        status,
        axum::Json(json!({ "error": message.to_string(), "code": code })),
    )
        .into_response()
}

/// `503 overloaded` with `Retry-After`: the process is at its limit of
/// `what` (running runs, open streams); nothing was started.
pub fn overloaded(what: impl Display) -> Response {
    let mut response = error(
        StatusCode::SERVICE_UNAVAILABLE,
        "overloaded",
        format!(
            "the service is at its limit of {what}; retry after {RETRY_AFTER_SECONDS} s (`Retry-After`)"
        ),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
    response
}

/// The router with the error shape enforced on everything it answers: a
/// JSON `404` for unknown routes (the catch-all fallback), the open event
/// streams limited to `max_streams`, and everything [`shape`] installs.
///
/// Only one router of an app may have it: axum refuses to merge two
/// routers that both have a fallback. A router merged beside it (e.g.
/// [`ToolsApi::router`](super::ToolsApi::router)) takes [`shape`] alone.
pub(crate) fn harden(router: Router, max_streams: usize) -> Router {
    let streams = Arc::new(Semaphore::new(max_streams.min(Semaphore::MAX_PERMITS)));
    shape(router.fallback(|| async {
        error(
            StatusCode::NOT_FOUND,
            "not-found",
            "no such route; the routes are listed in the API documentation (e.g. POST /sessions)",
        )
    }))
    .layer(axum::middleware::map_response(move |response| {
        limit_streams(Arc::clone(&streams), response)
    }))
}

/// The error shape on a router's own routes, without a fallback (so it can
/// be merged beside the [`harden`]ed one): a JSON `405` (with `Allow`) for
/// a method a route does not take, the [`BODY_LIMIT`], paths with an
/// empty segment refused, and every other error answer not already in the
/// shape (axum's extractor rejections: JSON, path, query, content type,
/// length) rewritten into it, with its code.
pub(crate) fn shape(router: Router) -> Router {
    router
        .method_not_allowed_fallback(|| async {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                "method-not-allowed",
                "this route does not take that method; the `Allow` header lists those it takes",
            )
        })
        .layer(axum::middleware::map_request(no_empty_segment))
        .layer(axum::middleware::map_response(in_error_shape))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
}

/// Refuses a path with an empty segment (`/sessions//messages`): axum
/// would hand the route an empty id, which names no object and must not
/// open one.
async fn no_empty_segment(request: Request) -> Result<Request, Response> {
    let path = request.uri().path();
    if path.len() > 1 && path[1..].split('/').any(str::is_empty) {
        return Err(error(
            StatusCode::NOT_FOUND,
            "not-found",
            format!("no route has an empty segment, as `{path}` does; name every id"),
        ));
    }
    Ok(request)
}

/// An event stream holds one of `streams`' permits for as long as the
/// client reads it; with none left it is not started, and the client is
/// told `503 overloaded`.
async fn limit_streams(streams: Arc<Semaphore>, response: Response) -> Response {
    let is_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
    if !is_stream {
        return response;
    }
    let Ok(permit) = streams.try_acquire_owned() else {
        return overloaded("open event streams");
    };
    let (parts, body) = response.into_parts();
    // The permit goes with the body: released when the stream ends or the
    // connection drops it.
    let body = body.into_data_stream().map(move |chunk| {
        let _held = &permit;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// Leaves successes and answers already in the shape alone; rewrites any
/// other error answer into it.
async fn in_error_shape(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, REWRITE_LIMIT)
        .await
        .unwrap_or_default();
    let json: Option<Value> = is_json
        .then(|| serde_json::from_slice(&text).ok())
        .flatten();
    if let Some(Value::Object(object)) = &json
        && object.get("code").is_some_and(Value::is_string)
        && object.get("error").is_some_and(Value::is_string)
    {
        return Response::from_parts(parts, Body::from(text));
    }
    // A handler's JSON error without a code keeps its message; axum's
    // plain-text rejection becomes the message, with the fix after it.
    let said = match &json {
        Some(Value::Object(object)) => object
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        _ => String::from_utf8_lossy(&text).trim().to_owned(),
    };
    let (code, mut fix) = classify(status, &said);
    // A handler's own message already says the fix.
    if json.is_some() && !said.is_empty() {
        fix = "";
    }
    let message = match (said.is_empty(), fix.is_empty()) {
        (true, _) => fix.to_owned(),
        (false, true) => said,
        (false, false) => format!("{said}; {fix}"),
    };
    let body = json!({ "error": message, "code": code }).to_string();
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

/// The code of an error answer, and the fix to add to its message, from
/// its status and (for axum's `400`s, which share a status) its text.
fn classify(status: StatusCode, said: &str) -> (&'static str, &'static str) {
    match status {
        StatusCode::BAD_REQUEST if said.starts_with("Invalid URL") => (
            "invalid-path",
            "percent-encode each path segment as UTF-8, e.g. /sessions/s-1",
        ),
        StatusCode::BAD_REQUEST if said.contains("query string") => (
            "invalid-query",
            "send the query parameters the route documents",
        ),
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => (
            "invalid-body",
            "send one JSON object with the fields the route documents, e.g. {\"content\": \"hello\"}",
        ),
        StatusCode::UNAUTHORIZED => (
            "unauthorized",
            "send `Authorization: Bearer <token>` with a token the service knows",
        ),
        StatusCode::FORBIDDEN => ("not-owner", ""),
        StatusCode::NOT_FOUND => ("not-found", "check the id and the route"),
        StatusCode::METHOD_NOT_ALLOWED => (
            "method-not-allowed",
            "the `Allow` header lists the methods this route takes",
        ),
        StatusCode::CONFLICT => ("conflict", ""),
        StatusCode::PAYLOAD_TOO_LARGE => (
            "payload-too-large",
            "request bodies are limited to 1 MiB; send a smaller body",
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            "unsupported-media-type",
            "send the body as JSON with `content-type: application/json`",
        ),
        StatusCode::SERVICE_UNAVAILABLE => ("overloaded", "retry later"),
        StatusCode::INTERNAL_SERVER_ERROR => ("store-failed", "retry later"),
        status if status.is_server_error() => ("server-error", "retry later"),
        _ => ("bad-request", ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axum_400s_are_told_apart_by_what_they_say() {
        let code = |said| classify(StatusCode::BAD_REQUEST, said).0;
        assert_eq!(
            code("Invalid URL: Cannot parse `\u{fffd}` to a `String`"),
            "invalid-path"
        );
        assert_eq!(
            code("Failed to deserialize query string: missing field `q`"),
            "invalid-query"
        );
        assert_eq!(
            code("Failed to parse the request body as JSON: EOF"),
            "invalid-body"
        );
    }
}
