//! The console: one page and its scripts, embedded in the crate, that talk
//! to the API router like any client (the bearer token, the same routes).
//! No build step and nothing fetched from elsewhere: it works offline.

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// The page; `{{API_BASE}}` becomes where the API is mounted.
const INDEX: &str = include_str!("console/index.html");

/// The static files under `/console/`, with their content types.
const ASSETS: [(&str, &str, &str); 8] = [
    ("style.css", "text/css", include_str!("console/style.css")),
    ("api.js", "text/javascript", include_str!("console/api.js")),
    ("app.js", "text/javascript", include_str!("console/app.js")),
    ("ui.js", "text/javascript", include_str!("console/ui.js")),
    (
        "chat.js",
        "text/javascript",
        include_str!("console/chat.js"),
    ),
    (
        "cards.js",
        "text/javascript",
        include_str!("console/cards.js"),
    ),
    (
        "policy.js",
        "text/javascript",
        include_str!("console/policy.js"),
    ),
    (
        "tools.js",
        "text/javascript",
        include_str!("console/tools.js"),
    ),
];

/// The console, calling the API under `/ai`: mount it at `/` beside
/// `Router::new().nest("/ai", api)`.
///
/// ```no_run
/// use chalie_core::session::{BearerTokens, Sessions, console, router};
///
/// # fn app(sessions: Sessions, tokens: BearerTokens) -> axum::Router {
/// axum::Router::new()
///     .nest("/ai", router(sessions, tokens))
///     .merge(console())
/// # }
/// ```
pub fn console() -> Router {
    console_at("/ai")
}

/// The console, calling the API mounted at `api_base`, a path on the same
/// origin such as `/api/v1` (the page's content security policy lets it
/// connect to its own origin only).
pub fn console_at(api_base: &str) -> Router {
    let page = INDEX.replace("{{API_BASE}}", &attribute(api_base.trim_end_matches('/')));
    let mut router = Router::new().route("/", get(move || page_response(page.clone())));
    for (name, content_type, body) in ASSETS {
        router = router.route(
            &format!("/console/{name}"),
            get(move || asset(content_type, body)),
        );
    }
    router
}

/// Scripts only from this origin, no inline script, no framing: the page
/// holds a bearer token.
const POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

async fn page_response(page: String) -> Response {
    let mut response = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        page,
    )
        .into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

async fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// `text` escaped for a double-quoted HTML attribute.
fn attribute(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '"' => escaped.push_str("&quot;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}
