//! `GET /tools` and `GET /tools/discover?q=`: what the console's Tools view
//! shows, each ability as the model receives it and what discovery would
//! make of a request.
//!
//! Counting tokens and searching the discovery index take crates chalie-core
//! does not depend on (a tokenizer, the index engine), so the app hands them
//! in through two seams, [`CountTokens`] and [`Discover`]; without them the
//! answers say so (`"tokens": null`, a `404` from the playground) instead of
//! guessing.

use std::sync::{Arc, OnceLock};

use axum::Json;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};

use super::{Authenticate, Authenticated, Caller};
use crate::ability::Effect;
use crate::descriptor::{AssembleOptions, Provider, assemble};
use crate::session::inspect::{CountTokens, Discover};
use crate::{Channel, Registry};

/// The Tools view's routes. Merge [`ToolsApi::router`] into the API router
/// (under the same mount), giving the registry the dispatcher serves.
///
/// ```no_run
/// use chalie_core::turn::Principal;
/// use chalie_core::session::{BearerTokens, Sessions, ToolsApi, router};
///
/// # fn app(sessions: Sessions, tokens: BearerTokens) -> axum::Router {
/// let tools = ToolsApi::new(chalie_core::registry().unwrap().clone());
/// let api = router(sessions, tokens.clone()).merge(tools.router(tokens));
/// axum::Router::new().nest("/ai", api)
/// # }
/// ```
#[derive(Clone)]
pub struct ToolsApi {
    registry: Registry,
    tokens: Option<Arc<dyn CountTokens>>,
    discovery: Option<Arc<dyn Discover>>,
    /// `GET /tools`'s body, made on the first request: the registry never
    /// changes, and rendering every provider's definition and counting its
    /// tokens is too much work to redo for each request.
    listing: OnceLock<axum::body::Bytes>,
}

impl ToolsApi {
    /// The abilities of `registry`, with no token counts and no playground
    /// until [`tokens`](Self::tokens) and [`discovery`](Self::discovery).
    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            tokens: None,
            discovery: None,
            listing: OnceLock::new(),
        }
    }

    /// Counts each definition's tokens with `counter`.
    pub fn tokens(mut self, counter: impl CountTokens) -> Self {
        self.tokens = Some(Arc::new(counter));
        self.listing = OnceLock::new();
        self
    }

    /// Answers the discovery playground with `discovery`.
    pub fn discovery(mut self, discovery: impl Discover) -> Self {
        self.discovery = Some(Arc::new(discovery));
        self
    }

    /// `GET /tools` and `GET /tools/discover?q=`, both authenticated by
    /// `auth` like every other route, their errors in the API's shape (a
    /// JSON `405`, the body limit). It has no fallback of its own: merge it
    /// into [`router`](super::router), whose `404` covers unknown routes.
    pub fn router<A: Authenticate>(self, auth: A) -> Router {
        let state = ToolsState {
            tools: Arc::new(self),
            auth: Arc::new(auth),
        };
        super::errors::shape(
            Router::new()
                .route("/tools", get(list::<A>))
                .route("/tools/discover", get(discover::<A>))
                .with_state(state),
        )
    }

    fn describe(&self) -> Vec<Value> {
        let options = AssembleOptions::for_channel(Channel::Chat);
        self.registry
            .iter()
            .map(|entry| {
                let spec = entry.spec();
                let descriptor = assemble(entry, options);
                let mut providers = Map::new();
                for provider in Provider::ALL {
                    let definition = descriptor.render(provider);
                    let tokens = self
                        .tokens
                        .as_ref()
                        .map(|counter| counter.count(&definition.to_string()));
                    providers.insert(
                        provider_name(provider).to_owned(),
                        json!({ "definition": definition, "tokens": tokens }),
                    );
                }
                json!({
                    "name": spec.name(),
                    "summary": spec.summary(),
                    "tooltip": spec.tooltip(),
                    "examples": spec.examples(),
                    "effect": match spec.effect() {
                        Effect::Read => "read",
                        Effect::Write => "write",
                    },
                    "parameters": descriptor.parameters(),
                    "providers": providers,
                })
            })
            .collect()
    }
}

/// The key each provider's definition goes under.
fn provider_name(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAiChat => "openai_chat",
        Provider::OpenAiResponses => "openai_responses",
        Provider::Anthropic => "anthropic",
        Provider::Gemini => "gemini",
        Provider::Mcp => "mcp",
    }
}

/// What the two handlers share.
struct ToolsState<A> {
    tools: Arc<ToolsApi>,
    auth: Arc<A>,
}

impl<A> Clone for ToolsState<A> {
    fn clone(&self) -> Self {
        Self {
            tools: Arc::clone(&self.tools),
            auth: Arc::clone(&self.auth),
        }
    }
}

impl<A: Authenticate> Authenticated for ToolsState<A> {
    type Auth = A;
    fn auth(&self) -> &A {
        &self.auth
    }
}

async fn list<A: Authenticate>(_caller: Caller, State(state): State<ToolsState<A>>) -> Response {
    let listing = state.tools.listing.get_or_init(|| {
        let encoding = state.tools.tokens.as_ref().map(|c| c.encoding().to_owned());
        json!({ "tools": state.tools.describe(), "encoding": encoding })
            .to_string()
            .into()
    });
    (
        [(
            axum::http::header::CONTENT_TYPE,
            axum::http::HeaderValue::from_static("application/json"),
        )],
        listing.clone(),
    )
        .into_response()
}

/// The longest query the playground searches: a request, not a document.
const MAX_QUERY: usize = 500;

async fn discover<A: Authenticate>(
    _caller: Caller,
    State(state): State<ToolsState<A>>,
    RawQuery(query): RawQuery,
) -> Response {
    let Some(discovery) = &state.tools.discovery else {
        return super::errors::error(
            StatusCode::NOT_FOUND,
            "not-found",
            "this app serves no discovery playground; give `ToolsApi::discovery` its index",
        );
    };
    let text = form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(key, _)| key == "q")
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default();
    let text = text.trim();
    if text.is_empty() || text.len() > MAX_QUERY {
        return super::errors::error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid-body",
            format!(
                "give the request to search as `?q=`, 1 to {MAX_QUERY} bytes, e.g. `?q=rename a task`"
            ),
        );
    }
    match discovery.discover(text) {
        Ok(report) => Json(report).into_response(),
        Err(why) => super::errors::error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "discovery-failed",
            format!("discovery could not search: {why}"),
        ),
    }
}
