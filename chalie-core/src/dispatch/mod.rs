//! The dispatcher: the one chokepoint every tool call goes through, in
//! [the steps](Dispatcher#the-steps-of-a-call) its type lists (`flow.rs`
//! runs them, one file per step beside it). Nothing a call does can crash
//! the turn: panics and non-canonical results become error envelopes.

mod admit;
mod approver;
mod background;
mod call;
mod call_state;
mod errors;
mod execute;
mod external;
mod flow;
mod gate;
mod hook;
mod limits;
pub(crate) mod mode;
mod policy;
mod reach;
pub(crate) mod remote;
pub(crate) mod resolve;
mod reuse;
mod session_state;
mod store;
mod surface;
pub(crate) mod trace;
mod validate;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use dashmap::DashMap;

pub use approver::{Approval, ApprovalRequest, Approver};
pub use background::BackgroundCalls;
pub use call::{Dispatched, Refusal, ToolCall};
pub use external::{ExternalOutput, ExternalTool, ExternalTools, SOURCE_SEPARATOR, source_of};
pub(crate) use hook::{GateHook, HookError};
pub use limits::{Admission, RateCounter, RateCounterError, RateLimit, RateScope};
pub(crate) use policy::split_permission;
pub use policy::{Policy, PolicyError, Setting, SettingSource};
pub use reach::ChannelTools;
pub use store::PolicyStore;
pub use surface::SurfaceEntry;

use crate::{Channel, Registry, Turn, turn::Extensions};
use reach::Channels;
use session_state::SessionState;

/// How long a call waits for a human's answer before it is rejected,
/// unless configured otherwise (the dispatcher's and the sessions' alike).
pub(crate) const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(60);

/// The one chokepoint every tool call goes through.
///
/// # The steps of a call
///
/// The one written order of the steps; the code (`dispatch/flow.rs`) runs
/// them in it, and each step's file links here.
///
/// 1. **resolve** the name to an ability (or, by prefix, an
///    [`ExternalTools`] proxy); an unknown name is `unknown-tool` with the
///    closest names as valid values;
/// 2. **reach**: the turn may call only what it was offered — its
///    channel's core and pins ([`ChannelTools`]), what code pinned on the
///    turn ([`TurnBuilder::pin`](crate::turn::TurnBuilder::pin)) and what
///    `find_tools` activated in it, within the channel's profile. Anything
///    else is `tool-not-available` (call `find_tools`), before any
///    validation or approver;
/// 3. **pre-validate**: `act_summary` and `async` come off, the `action`
///    is checked against the declared actions and the parameters each
///    requires, the typed parameters are parsed; a malformed call bounces
///    as `invalid-arguments` before any approver is asked;
/// 4. **admit**: the tags the tool requires (`missing-permission-tag`),
///    declared on the ability or configured, then the session's rate limit
///    and the ability's declared one (`rate-limited`, with when to retry);
///    a call that stopped to ask a remote user (an MCP client's) was
///    counted then, and its answered retry is not counted again;
/// 5. the permission **gate** on `tool` or `tool.action` (see [`Policy`]),
///    tightened by the session's mode as
///    [the gate table](crate::session#modes-and-the-permission-gate) says;
/// 6. **execute**: reuse an earlier read of the same run, or run inline, or
///    in the background for `async: true` on a chat;
/// 7. **render** the envelope and **record** the call on the turn's trail.
///
/// Every refusal carries a typed [`Refusal`] beside the envelope the model
/// reads. A panicking ability is `ability-panicked`; a result that is not
/// canonical is `non-canonical-result`.
///
/// `Send + Sync`: build one and share it between sessions behind an
/// [`Arc`]. Per-session state (rate window, reuse caches, background
/// calls) sits in a sharded map, and the policy is read lock-free, so
/// sessions do not contend on a global lock.
///
/// ```rust,standalone_crate
/// use chalie_core::{Channel, Dispatcher, Params, dispatch::Policy, dispatch::Setting, ToolCall, ToolResult, Turn, ability};
///
/// #[derive(Params)]
/// struct GreetParams {
///     /// Who to greet.
///     name: String,
/// }
///
/// /// Greets someone by name.
/// #[ability(
///     effect = read,
///     examples = ["say hello", "greet Ann", "wave at Bo", "hello to Cy", "greet the team", "say hi"],
/// )]
/// async fn greet(params: GreetParams) -> ToolResult {
///     ToolResult::success(format!("hello, {}", params.name))
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut policy = Policy::new();
/// policy.set(Channel::Chat, "greet", Setting::Allow).expect("a valid permission");
/// let registry = chalie_core::registry().expect("unique names").clone();
/// // `greet` is discoverable, so a chat reaches it after `find_tools`
/// // found it, or when it is pinned on the channel, as here.
/// let dispatcher = Dispatcher::builder(registry)
///     .policy(policy)
///     .pin(Channel::Chat, ["greet"])
///     .build();
/// let turn = Turn::builder(Channel::Chat).build();
/// let done = dispatcher.dispatch(&turn, ToolCall::new("greet", serde_json::json!({ "name": "Ann" }))).await;
/// assert_eq!(done.envelope, "[greet(status=success)]\nhello, Ann\n[end:greet]");
/// assert_eq!(turn.trail().len(), 1);
/// # }
/// ```
pub struct Dispatcher {
    registry: Registry,
    policy: PolicyStore,
    approver: Option<Arc<dyn Approver>>,
    approval_timeout: Duration,
    rate_limit: Option<RateLimit>,
    rate_counter: Option<Arc<dyn RateCounter>>,
    external: Vec<Arc<dyn ExternalTools>>,
    required_tags: HashMap<String, Vec<String>>,
    granted_tags: HashSet<String>,
    channels: Channels,
    trace_payloads: bool,
    extensions: Arc<Extensions>,
    // Looked up only by what needs a session's state; the hasher is fast
    // and seeded per process.
    sessions: DashMap<String, Arc<SessionState>, foldhash::fast::RandomState>,
    /// Whether any session's state was ever created: until then a write
    /// has no observations to forget and skips the lookup.
    any_session: AtomicBool,
    next_call: AtomicU64,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("abilities", &self.registry.len())
            .field("rate_limit", &self.rate_limit)
            .field("sessions", &self.sessions.len())
            .finish_non_exhaustive()
    }
}

// One dispatcher serves every session from many threads.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<Dispatcher>();
};

/// Configures a [`Dispatcher`].
pub struct DispatcherBuilder {
    registry: Registry,
    policy: Policy,
    approver: Option<Arc<dyn Approver>>,
    approval_timeout: Duration,
    rate_limit: Option<RateLimit>,
    rate_counter: Option<Arc<dyn RateCounter>>,
    external: Vec<Arc<dyn ExternalTools>>,
    required_tags: HashMap<String, Vec<String>>,
    granted_tags: HashSet<String>,
    channels: Channels,
    trace_payloads: bool,
    extensions: Extensions,
}

impl std::fmt::Debug for DispatcherBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DispatcherBuilder")
            .field("abilities", &self.registry.len())
            .finish_non_exhaustive()
    }
}

impl DispatcherBuilder {
    /// The starting policy (default: empty, so everything asks).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Allows `names` on `channel` without asking: the shortcut for a
    /// [`Policy`] whose only settings are [`Setting::Allow`]. It changes the
    /// builder's policy, so call it after [`policy`](Self::policy), which
    /// replaces the whole policy.
    ///
    /// Each name is a permission, `tool` or `tool.action`, whose tool is an
    /// ability of the registry or routes to an [`ExternalTools`] added
    /// before with [`external_tools`](Self::external_tools). Allowing is
    /// not offering: a turn still reaches only its channel's tools
    /// ([`pin`](Self::pin)) and what it discovered.
    ///
    /// # Errors
    ///
    /// [`PolicyError::BadPermission`] for a name that is not a permission
    /// and [`PolicyError::UnknownTool`] for a tool this dispatcher would
    /// not find, with the closest names: a typo fails here rather than
    /// leaving the tool asking on every call.
    ///
    /// ```
    /// use chalie_core::{Channel, Dispatcher, dispatch::PolicyError};
    ///
    /// let registry = chalie_core::registry().expect("unique ability names");
    /// let error = Dispatcher::builder(registry).allow(Channel::Chat, ["wether"]).err().unwrap();
    /// assert!(matches!(error, PolicyError::UnknownTool { .. }));
    /// ```
    pub fn allow<S: AsRef<str>>(
        mut self,
        channel: Channel,
        names: impl IntoIterator<Item = S>,
    ) -> Result<Self, PolicyError> {
        for name in names {
            let permission = name.as_ref();
            let (tool, _) = policy::split_permission(permission)?;
            let external = self
                .external
                .iter()
                .any(|proxy| !proxy.prefix().is_empty() && tool.starts_with(proxy.prefix()));
            if !external && self.registry.get(tool).is_none() {
                let known = self.registry.iter().map(|entry| entry.spec().name());
                return Err(PolicyError::UnknownTool {
                    permission: permission.to_owned(),
                    suggestions: resolve::suggest(tool, known),
                });
            }
            self.policy.set(channel, permission, Setting::Allow)?;
        }
        Ok(self)
    }

    /// Who is asked when the policy says `ask` on a channel with a human.
    /// Without one, such calls are rejected.
    pub fn approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// What `channel` offers every turn and what its turns may discover
    /// (default: [`ChannelTools::new`], the always-on core).
    pub fn channel_tools(mut self, channel: Channel, tools: ChannelTools) -> Self {
        self.channels.set(channel, tools);
        self
    }

    /// Also offers `names` on every turn of `channel` (see
    /// [`ChannelTools::pin`]).
    pub fn pin<S: Into<String>>(
        mut self,
        channel: Channel,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        let tools = std::mem::take(self.channels.entry(channel));
        *self.channels.entry(channel) = tools.pin(names);
        self
    }

    /// Also records each call's arguments and envelope on its span
    /// (`gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Off by
    /// default: they may hold private data.
    pub fn trace_payloads(mut self, record: bool) -> Self {
        self.trace_payloads = record;
        self
    }

    /// How long to wait for an approval before rejecting (default 60 s).
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.approval_timeout = timeout;
        self
    }

    /// The per-session rate limit (default [`RateLimit::default`], 30 a
    /// minute).
    pub fn rate_limit(mut self, limit: RateLimit) -> Self {
        self.rate_limit = Some(limit);
        self
    }

    /// Counts calls for the rate limit in `counter` (e.g. a `PgStore` the
    /// replicas share) instead of this dispatcher's memory, so the limit
    /// holds across every dispatcher counting there.
    pub fn rate_counter(mut self, counter: Arc<dyn RateCounter>) -> Self {
        self.rate_counter = Some(counter);
        self
    }

    /// No rate limit.
    pub fn without_rate_limit(mut self) -> Self {
        self.rate_limit = None;
        self
    }

    /// Routes names starting with `proxy.prefix()` to `proxy`.
    pub fn external_tools(mut self, proxy: Arc<dyn ExternalTools>) -> Self {
        self.external.push(proxy);
        self
    }

    /// Declares permission tags `tool` requires (e.g. `orders:read`), in
    /// addition to those an ability declares with `#[ability(tags =
    /// [...])]`: a dispatcher not granted every tag a tool requires
    /// refuses its calls with `missing-permission-tag` before the handler
    /// runs. For an external tool, this is the only place to declare them.
    pub fn require_tags<S: Into<String>>(
        mut self,
        tool: &str,
        tags: impl IntoIterator<Item = S>,
    ) -> Self {
        self.required_tags
            .entry(tool.to_owned())
            .or_default()
            .extend(tags.into_iter().map(Into::into));
        self
    }

    /// Grants this dispatcher permission tags: the set every tag a tool
    /// requires (declared on the ability or with
    /// [`require_tags`](Self::require_tags)) is checked against.
    pub fn grant_tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.granted_tags.extend(tags.into_iter().map(Into::into));
        self
    }

    /// Makes `value` available to every ability through
    /// [`Turn::extension`](crate::Turn::extension): the host's state (a
    /// database pool, an index, a data folder). One value per type.
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// Like [`extension`](Self::extension), for a value the host keeps a
    /// handle to as well.
    pub fn shared_extension<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.extensions.insert_shared(value);
        self
    }

    /// The dispatcher.
    pub fn build(self) -> Dispatcher {
        let channels = self.channels.index(&self.registry);
        // The tags abilities declare join those configured here, so one
        // check (step 4) enforces both.
        let mut required_tags = self.required_tags;
        for entry in self.registry.iter() {
            let declared = entry.spec().tags();
            if !declared.is_empty() {
                required_tags
                    .entry(entry.name().to_owned())
                    .or_default()
                    .extend(declared.iter().map(|tag| (*tag).to_owned()));
            }
        }
        let policy = PolicyStore::new(self.policy, &self.registry);
        Dispatcher {
            registry: self.registry,
            policy,
            approver: self.approver,
            approval_timeout: self.approval_timeout,
            rate_limit: self.rate_limit,
            rate_counter: self.rate_counter,
            external: self.external,
            required_tags,
            granted_tags: self.granted_tags,
            channels,
            trace_payloads: self.trace_payloads,
            extensions: Arc::new(self.extensions),
            sessions: DashMap::with_hasher(foldhash::fast::RandomState::default()),
            any_session: AtomicBool::new(false),
            next_call: AtomicU64::new(1),
        }
    }
}

impl Dispatcher {
    /// Starts configuring a dispatcher over `registry`: the linked one,
    /// `chalie_core::registry()?`, or any [`Registry`]. A borrowed registry
    /// is copied; an owned one is moved in.
    pub fn builder(registry: impl Into<Registry>) -> DispatcherBuilder {
        DispatcherBuilder {
            registry: registry.into(),
            policy: Policy::new(),
            approver: None,
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            rate_limit: Some(RateLimit::default()),
            rate_counter: None,
            external: Vec::new(),
            required_tags: HashMap::new(),
            granted_tags: HashSet::new(),
            channels: Channels::default(),
            trace_payloads: false,
            extensions: Extensions::new(),
        }
    }

    /// A dispatcher over `registry` with the defaults.
    pub fn new(registry: Registry) -> Self {
        Self::builder(registry).build()
    }

    /// The abilities it dispatches to.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// What `channel` offers every turn and what its turns may discover.
    pub fn channel_tools(&self, channel: Channel) -> &ChannelTools {
        self.channels.of(channel)
    }

    /// Whether `turn` may call `name` now (step 2): offered on its channel,
    /// pinned on the turn, or activated by `find_tools` within the
    /// channel's profile.
    pub fn reaches(&self, turn: &Turn, name: &str) -> bool {
        self.channels.reaches(&self.registry, turn, name)
    }

    /// The names `turn` may call now, each once, in the order a model
    /// request offers them: the channel's core, its pins, the turn's pins,
    /// what was activated.
    pub fn offered(&self, turn: &Turn) -> Vec<String> {
        self.channels.offered(&self.registry, turn)
    }

    /// What the next model request of `turn` offers, assembled: the
    /// descriptor of each name of [`offered`](Self::offered), in that
    /// order, for an ability as [`assemble`](crate::descriptor::assemble)
    /// builds it and for an external tool as
    /// [`assemble_external`](crate::descriptor::assemble_external) does,
    /// from its proxy's listing now. A name neither resolves to (a pin of a
    /// tool a server no longer lists) is left out: the model is never shown
    /// a tool it cannot call.
    pub fn offered_descriptors(&self, turn: &Turn) -> Vec<crate::descriptor::ToolDescriptor> {
        use crate::descriptor::{AssembleOptions, assemble, assemble_external};
        let options = AssembleOptions::for_channel(turn.channel());
        // Each proxy is listed once per request, and only when asked.
        let mut listings: Vec<Option<Vec<ExternalTool>>> = vec![None; self.external.len()];
        self.offered(turn)
            .iter()
            .filter_map(|name| {
                if let Some(entry) = self.registry.get(name) {
                    return Some(assemble(entry, options));
                }
                let position = self.external.iter().position(|proxy| {
                    !proxy.prefix().is_empty() && name.starts_with(proxy.prefix())
                })?;
                let listing =
                    listings[position].get_or_insert_with(|| self.external[position].tools());
                listing
                    .iter()
                    .find(|tool| tool.name == *name)
                    .map(|tool| assemble_external(tool, options))
            })
            .collect()
    }

    /// The live policy: read, [`set`](PolicyStore::set), load and save it.
    pub fn policy(&self) -> &PolicyStore {
        &self.policy
    }

    /// The background calls of the session `session_id`.
    pub fn background(&self, session_id: &str) -> BackgroundCalls {
        self.session(session_id).background.clone()
    }

    /// Drops a session's state: rate window, reuse caches, and background
    /// results not yet taken (their calls still finish and are recorded).
    pub fn end_session(&self, session_id: &str) {
        self.sessions.remove(session_id);
    }

    fn session(&self, session_id: &str) -> Arc<SessionState> {
        if let Some(session) = self.sessions.get(session_id) {
            return Arc::clone(&session);
        }
        // Raised before the state exists, so that whoever then reads it
        // false knows no session's state was created before it looked.
        self.any_session.store(true, Ordering::SeqCst);
        Arc::clone(&self.sessions.entry(session_id.to_owned()).or_default())
    }

    /// Runs `use_state` on the session's state if anything created it,
    /// without creating it or holding on to it.
    fn with_existing_session(&self, session_id: &str, use_state: impl FnOnce(&SessionState)) {
        if !self.any_session.load(Ordering::SeqCst) {
            return;
        }
        if let Some(session) = self.sessions.get(session_id) {
            use_state(&session);
        }
    }
}
