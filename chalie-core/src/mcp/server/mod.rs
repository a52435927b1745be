//! A chalie [`Dispatcher`] served as an MCP server.

mod approval;
mod call;
mod catalog;
mod skills;
mod transport;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{CacheScope, ProtocolVersion, Tool};
use rmcp::service::{RequestContext, RoleServer};

use crate::{Dispatcher, contracts::OutputSchemas, dispatch::ExternalTools, turn::ActionTrail};
use catalog::Listed;

pub use approval::APPROVAL_INPUT;
pub use catalog::CALL_PROXY;
pub use skills::ServedSkill;
pub use transport::{HTTP_PATH, HttpServer, McpServeError};

/// How long a client may keep a listing by default: an hour.
pub const DEFAULT_LIST_TTL: Duration = Duration::from_secs(3600);

/// The abilities `on_demand` keeps listed when the registry has them.
pub const DEFAULT_PINNED: [&str; 3] = ["find_tools", "find_skills", "memory"];

/// Which tools `tools/list` carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exposure {
    /// Every discoverable ability (and every external tool given with
    /// [`McpServerBuilder::external_tools`]).
    Full,
    /// Only the pinned abilities the registry has (e.g. `find_tools`) and
    /// the call proxy [`CALL_PROXY`]; the client's model finds the rest
    /// with `find_tools` and calls them through the proxy. The default
    /// ([`Exposure::default`]): the listing stays small and never changes,
    /// and the client's model reaches the rest the way a chalie session's
    /// does, through discovery.
    OnDemand {
        /// The always-on core, by name.
        pinned: Vec<String>,
    },
}

impl Default for Exposure {
    /// [`Exposure::on_demand`]: discovery is how a model reaches a large
    /// catalog, over MCP as in a session; `full` is the opt-in.
    fn default() -> Self {
        Exposure::on_demand()
    }
}

impl Exposure {
    /// `on_demand` with [`DEFAULT_PINNED`].
    pub fn on_demand() -> Self {
        Exposure::OnDemand {
            pinned: DEFAULT_PINNED
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
        }
    }
}

/// A problem with how the server was configured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpServerError {
    /// An ability is named like the call proxy.
    #[error("ability `{0}` has the call proxy's name; rename it or serve with `Exposure::Full`")]
    ProxyNameTaken(String),
    /// Two linked outputs for one ability.
    #[error(transparent)]
    DuplicateOutput(#[from] crate::contracts::DuplicateOutput),
}

/// Serves a [`Dispatcher`] over MCP. Every call runs through the
/// dispatcher on [`Channel::External`](crate::Channel::External), so a
/// permission set to `ask` is `deny` there, except for a client on protocol
/// 2026-07-28 or newer that declares form elicitation: its user is asked
/// through an input-required result (question [`APPROVAL_INPUT`], a form
/// with a boolean `approve`), and the call runs once if the user approved
/// when the client retries with the answer.
///
/// Cheap to clone; clones share the dispatcher and the listing. Each
/// connection gets its own chalie session (rate window, reuse cache).
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    session_id: String,
    /// Whether this value serves one connection, to which the approval
    /// questions it asks are bound; not so for a streamable HTTP request,
    /// which on 2026-07-28 comes without a session.
    on_connection: bool,
}

struct Shared {
    dispatcher: Arc<Dispatcher>,
    exposure: Exposure,
    listed: Vec<Listed>,
    by_name: HashMap<String, usize>,
    /// The listed names, pinned on every call's turn.
    listed_names: Arc<crate::turn::Pins>,
    next_session: AtomicU64,
    name: String,
    version: String,
    /// The approval questions sent to clients and not yet answered.
    approvals: approval::Approvals,
    /// Where every call's record is kept, when the host asked for it.
    trail: Option<ActionTrail>,
    /// How long a client may keep a listing before asking again.
    list_ttl: Duration,
    /// The skills served (SEP-2640); none unless the host gave some.
    skills: skills::Skills,
    /// Whom every call runs for, if anyone.
    principal: Option<crate::turn::Principal>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("exposure", &self.shared.exposure)
            .field("tools", &self.shared.listed.len())
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

/// Configures an [`McpServer`].
pub struct McpServerBuilder {
    dispatcher: Arc<Dispatcher>,
    exposure: Exposure,
    outputs: Option<OutputSchemas>,
    external: Vec<Arc<dyn ExternalTools>>,
    name: String,
    version: String,
    trail: Option<ActionTrail>,
    list_ttl: Duration,
    skills: Vec<ServedSkill>,
    principal: Option<crate::turn::Principal>,
}

impl std::fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("exposure", &self.exposure)
            .finish_non_exhaustive()
    }
}

impl McpServerBuilder {
    /// Which tools are listed (default [`Exposure::on_demand`]: the pinned
    /// core and the call proxy).
    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// The declared outputs that become `outputSchema` and
    /// `structuredContent` (default: every `declare_output!` linked).
    pub fn outputs(mut self, outputs: OutputSchemas) -> Self {
        self.outputs = Some(outputs);
        self
    }

    /// Lists `proxy`'s tools too in `full` mode, as they are now. Give the
    /// same proxy to the dispatcher, which routes their calls.
    pub fn external_tools(mut self, proxy: Arc<dyn ExternalTools>) -> Self {
        self.external.push(proxy);
        self
    }

    /// Runs every call on behalf of `principal` ([`Turn::principal`](crate::Turn::principal)),
    /// e.g. the one local user a stdio server serves. Without it calls run
    /// for nobody, and abilities that keep each user's data apart refuse
    /// them.
    pub fn principal(mut self, principal: crate::turn::Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// The implementation name and version sent at `initialize` (default
    /// `chalie` and this crate's version).
    pub fn implementation(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.name = name.into();
        self.version = version.into();
        self
    }

    /// Records every call served, on every connection, on `trail` (what
    /// the gate decided, how it ended), in the order they finish. A call
    /// that stopped to ask the client's user is recorded once, when the
    /// answer came back and the call ran or was refused.
    pub fn trail(mut self, trail: ActionTrail) -> Self {
        self.trail = Some(trail);
        self
    }

    /// How long a client may treat a listing as fresh (`ttlMs` on
    /// protocol 2026-07-28, SEP-2549; default [`DEFAULT_LIST_TTL`]). The
    /// listing is fixed when the server is built, so this only bounds how
    /// long a client keeps one across a restart with another configuration.
    pub fn list_ttl(mut self, ttl: Duration) -> Self {
        self.list_ttl = ttl;
        self
    }

    /// Serves `skills` per the MCP skills extension (SEP-2640): listed by
    /// name with `skills/list`, each a `skill://<name>/SKILL.md` file read
    /// with `resources/read`. A name is served in the extension's form
    /// (`plan_trip` as `plan-trip`); of two that map to one, the first is kept.
    pub fn skills(mut self, skills: impl IntoIterator<Item = ServedSkill>) -> Self {
        self.skills.extend(skills);
        self
    }

    /// The server, its listing fixed from here on.
    pub fn build(self) -> Result<McpServer, McpServerError> {
        let outputs = match self.outputs {
            Some(outputs) => outputs,
            None => OutputSchemas::linked()?,
        };
        let registry = self.dispatcher.registry();
        let mut listed: Vec<Listed> = match &self.exposure {
            Exposure::Full => {
                let mut listed: Vec<Listed> = catalog::exposed(registry)
                    .into_iter()
                    .map(|entry| catalog::ability_tool(entry, &outputs))
                    .collect();
                listed.extend(
                    self.external
                        .iter()
                        .flat_map(|proxy| proxy.tools())
                        .map(|tool| catalog::external_tool(&tool)),
                );
                listed
            }
            Exposure::OnDemand { pinned } => {
                if registry.get(CALL_PROXY).is_some() {
                    return Err(McpServerError::ProxyNameTaken(CALL_PROXY.to_owned()));
                }
                // A pinned ability is listed even when kept out of
                // discovery: pinning is how such an ability is used.
                let mut listed: Vec<Listed> = pinned
                    .iter()
                    .filter_map(|name| registry.get(name))
                    .map(|entry| catalog::ability_tool(entry, &outputs))
                    .collect();
                listed.push(catalog::proxy_tool());
                listed
            }
        };
        // Deterministic order: by name, whatever the link or config order.
        listed.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
        listed.dedup_by(|a, b| a.tool.name == b.tool.name);
        let by_name = listed
            .iter()
            .enumerate()
            .map(|(index, listed)| (listed.tool.name.to_string(), index))
            .collect();
        let listed_names = Arc::new(crate::turn::Pins::from_names(
            listed.iter().map(|listed| listed.tool.name.to_string()),
        ));
        Ok(McpServer {
            shared: Arc::new(Shared {
                dispatcher: self.dispatcher,
                exposure: self.exposure,
                listed,
                by_name,
                listed_names,
                next_session: AtomicU64::new(1),
                name: self.name,
                version: self.version,
                approvals: approval::Approvals::default(),
                trail: self.trail,
                list_ttl: self.list_ttl,
                skills: skills::Skills::new(self.skills),
                principal: self.principal,
            }),
            session_id: "mcp-0".to_owned(),
            on_connection: true,
        })
    }
}

impl McpServer {
    /// Starts configuring a server over `dispatcher`.
    pub fn builder(dispatcher: Arc<Dispatcher>) -> McpServerBuilder {
        McpServerBuilder {
            dispatcher,
            exposure: Exposure::default(),
            outputs: None,
            external: Vec::new(),
            name: "chalie".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            trail: None,
            list_ttl: DEFAULT_LIST_TTL,
            skills: Vec::new(),
            principal: None,
        }
    }

    /// The tools `tools/list` returns, in order; the same on every
    /// connection.
    pub fn tools(&self) -> Vec<Tool> {
        self.shared
            .listed
            .iter()
            .map(|listed| listed.tool.clone())
            .collect()
    }

    /// The exposure mode.
    pub fn exposure(&self) -> &Exposure {
        &self.shared.exposure
    }

    /// The dispatcher every call goes through.
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.shared.dispatcher
    }

    /// The chalie session this connection's calls belong to.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The cache hints a listing carries on protocol 2026-07-28 or newer
    /// (SEP-2549): the configured freshness, and `public`, since every
    /// client is listed the same bytes. Older protocols have no such fields.
    pub(crate) fn cache_hints(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<(u64, CacheScope)> {
        has_input_required(context).then(|| {
            let ttl = u64::try_from(self.shared.list_ttl.as_millis()).unwrap_or(u64::MAX);
            (ttl, CacheScope::Public)
        })
    }

    /// The same server for a new connection: shared listing, its own
    /// chalie session.
    pub fn for_connection(&self) -> McpServer {
        let number = self.shared.next_session.fetch_add(1, Ordering::Relaxed);
        McpServer {
            shared: Arc::clone(&self.shared),
            session_id: format!("mcp-{number}"),
            on_connection: true,
        }
    }

    /// The same server for one streamable HTTP request: on protocol
    /// 2026-07-28 every request is served on its own, with no connection
    /// an approval question could be bound to.
    pub(crate) fn for_http(&self) -> McpServer {
        McpServer {
            on_connection: false,
            ..self.for_connection()
        }
    }

    /// The connection approval questions are bound to, if there is one.
    pub(crate) fn connection(&self) -> Option<&str> {
        self.on_connection.then_some(self.session_id.as_str())
    }
}

/// Whether the request is on protocol 2026-07-28 or newer, the first with
/// input-required results and listing cache hints.
pub(crate) fn has_input_required(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}
