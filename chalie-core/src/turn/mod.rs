//! `Turn`: the per-call context an ability may take as `&Turn`, and what
//! it carries: the channel, session and run, the principal, the clock, the
//! host's extensions, and the turn's action [trail](ActionTrail).

mod call_id;
mod clock;
mod extensions;
mod principal;
mod trail;

use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};

use crate::ToolResult;
use extensions::missing_extension;

// What a turn carries, kept beside it.
pub use clock::{Clock, ClockError};
pub use extensions::Extensions;
pub use principal::Principal;
pub use trail::{ActionRecord, ActionTrail, CallStatus, GateDecision};

pub(crate) use call_id::{Name, NumberedId};
pub(crate) use trail::{Timing, TrailEntry, permission};

/// Who is on the other end of a call, which decides what the gate allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    /// A human is present and can approve.
    Chat,
    /// A background pass; nobody to ask.
    Subconscious,
    /// A connected agent; nobody to ask.
    External,
}

impl Channel {
    /// Every channel, in the order a policy file and a policy manager list them.
    pub const ALL: [Channel; 3] = [Channel::Chat, Channel::Subconscious, Channel::External];

    /// The channel named `name`, as [`as_str`](Self::as_str) writes it.
    pub fn parse(name: &str) -> Option<Channel> {
        Self::ALL
            .into_iter()
            .find(|channel| channel.as_str() == name)
    }

    /// Whether a human can be asked for approval on this channel.
    pub const fn has_human(self) -> bool {
        matches!(self, Channel::Chat)
    }

    /// Whether calls on this channel may run in the background (`async:
    /// true`): only in a chat, where the turn goes on while they run.
    pub const fn allows_background_calls(self) -> bool {
        matches!(self, Channel::Chat)
    }

    /// The channel's name as used in configuration.
    pub const fn as_str(self) -> &'static str {
        match self {
            Channel::Chat => "chat",
            Channel::Subconscious => "subconscious",
            Channel::External => "external",
        }
    }
}

/// A progress message an ability reported during a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The call that reported it.
    pub call_id: String,
    /// The ability that reported it.
    pub tool: String,
    /// What it said.
    pub message: String,
}

/// Receives progress messages, e.g. to stream them to a UI.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

struct TurnShared {
    channel: Channel,
    session_id: String,
    run_id: String,
    principal: Option<Principal>,
    trail: ActionTrail,
    progress: Option<ProgressSink>,
    extensions: Extensions,
    activated: Mutex<Vec<String>>,
    pins: Arc<Pins>,
    offers_activated: bool,
    single_call: bool,
}

/// Names a turn may reach because code said so (see [`TurnBuilder::pin`]),
/// in the order they were pinned.
#[derive(Debug, Default)]
pub(crate) struct Pins {
    order: Vec<String>,
    set: std::collections::HashSet<String>,
}

impl Pins {
    /// Pins `names`, each once, keeping their first order.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))] // the MCP server's listing
    pub(crate) fn from_names<S: Into<String>>(names: impl IntoIterator<Item = S>) -> Self {
        let mut pins = Self::default();
        pins.extend(names);
        pins
    }

    fn extend<S: Into<String>>(&mut self, names: impl IntoIterator<Item = S>) {
        for name in names {
            let name = name.into();
            if self.set.insert(name.clone()) {
                self.order.push(name);
            }
        }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.set.contains(name)
    }

    pub(crate) fn names(&self) -> &[String] {
        &self.order
    }
}

/// The context of one call: channel, session, run, the turn's action trail
/// and progress reporting. Cheap to clone; clones share the turn's state.
#[derive(Clone)]
pub struct Turn {
    shared: Arc<TurnShared>,
    call_id: Name,
    tool: Name,
    /// The dispatcher's extensions, consulted after the turn's own.
    host: Option<Arc<Extensions>>,
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn")
            .field("channel", &self.shared.channel)
            .field("session_id", &self.shared.session_id)
            .field("run_id", &self.shared.run_id)
            .field("principal", &self.shared.principal)
            .field("call_id", &&*self.call_id)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Turn`].
#[derive(Default)]
pub struct TurnBuilder {
    pins: Pins,
    shared_pins: Option<Arc<Pins>>,
    channel: Option<Channel>,
    session_id: Option<String>,
    run_id: Option<String>,
    principal: Option<Principal>,
    trail: Option<ActionTrail>,
    progress: Option<ProgressSink>,
    extensions: Extensions,
    offers_activated: bool,
    single_call: bool,
}

impl TurnBuilder {
    /// The session the turn belongs to (default `local`).
    pub fn session_id(mut self, session_id: impl Into<String>) -> Self {
        self.session_id = Some(session_id.into());
        self
    }
    /// The run the turn belongs to (default `run-0`).
    pub fn run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }
    /// On whose behalf the turn's calls run (default: nobody named); a
    /// session's runs carry the session's owner.
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }
    /// Shares an existing trail.
    pub fn trail(mut self, trail: ActionTrail) -> Self {
        self.trail = Some(trail);
        self
    }
    /// Where progress messages go (default: dropped).
    pub fn progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }
    /// Makes `value` available to the abilities this turn calls, ahead of
    /// a value of the same type given to the dispatcher (see
    /// [`Turn::extension`]).
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }
    /// Lets this turn reach `names` whatever the channel offers: a typed
    /// grant in code, for calls the program itself seeds (a plan's steps,
    /// a background pass, the tools an MCP client was listed). Nothing a
    /// model sends can pin a tool; without a pin, a tool outside the
    /// channel's tools is reachable only after `find_tools` activated it.
    pub fn pin<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.pins.extend(names);
        self
    }

    /// Says that the program adds what `find_tools` activates to the tool
    /// list of this turn's next model request, as a session does. The
    /// model then reads each found tool's full definition there, so
    /// `find_tools` answers with each tool's name and its summary's first
    /// sentence. Without it (a call dispatched on its own, the MCP call
    /// proxy) the answer carries each tool's whole summary and parameters,
    /// the only place the model would see them.
    pub fn offers_activated_tools(mut self) -> Self {
        self.offers_activated = true;
        self
    }

    /// Says that the turn makes one call and its run ends with it (an MCP
    /// request): no later read of the run could reuse what a read
    /// returns, so the dispatcher keeps nothing for reuse.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))] // the MCP server's calls
    pub(crate) fn single_call(mut self) -> Self {
        self.single_call = true;
        self
    }

    /// Pins a set shared by many turns (the MCP server's listing), instead
    /// of copying it into each.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))] // the MCP server's listing
    pub(crate) fn pin_shared(mut self, pins: &Arc<Pins>) -> Self {
        self.shared_pins = Some(Arc::clone(pins));
        self
    }

    /// The turn.
    pub fn build(self) -> Turn {
        let pins = match self.shared_pins {
            Some(shared) if self.pins.order.is_empty() => shared,
            Some(shared) => {
                let mut pins = self.pins;
                pins.extend(shared.order.iter().cloned());
                Arc::new(pins)
            }
            None => Arc::new(self.pins),
        };
        Turn {
            shared: Arc::new(TurnShared {
                channel: self.channel.unwrap_or(Channel::Chat),
                session_id: self.session_id.unwrap_or_else(|| "local".into()),
                run_id: self.run_id.unwrap_or_else(|| "run-0".into()),
                principal: self.principal,
                trail: self.trail.unwrap_or_default(),
                progress: self.progress,
                extensions: self.extensions,
                activated: Mutex::new(Vec::new()),
                pins,
                offers_activated: self.offers_activated,
                single_call: self.single_call,
            }),
            call_id: Name::Static(""),
            tool: Name::Static(""),
            host: None,
        }
    }
}

impl Turn {
    /// Starts building a turn on `channel`.
    pub fn builder(channel: Channel) -> TurnBuilder {
        TurnBuilder {
            channel: Some(channel),
            ..TurnBuilder::default()
        }
    }

    /// The same turn, bound to one call of `tool`.
    pub fn for_call(&self, call_id: impl Into<String>, tool: &str) -> Turn {
        self.bound(
            Name::Shared(Arc::from(call_id.into())),
            Name::Shared(Arc::from(tool)),
        )
    }

    /// The same turn bound to a call, sharing the names the dispatcher
    /// already holds.
    pub(crate) fn bound(&self, call_id: Name, tool: Name) -> Turn {
        Turn {
            shared: Arc::clone(&self.shared),
            call_id,
            tool,
            host: self.host.clone(),
        }
    }

    /// The same turn, also seeing the dispatcher's extensions.
    pub(crate) fn with_host_extensions(mut self, host: &Arc<Extensions>) -> Turn {
        if !host.is_empty() {
            self.host = Some(Arc::clone(host));
        }
        self
    }

    /// The host's value of type `T`: the turn's own (see
    /// [`TurnBuilder::extension`]) or else the dispatcher's (see
    /// [`DispatcherBuilder::extension`](crate::dispatch::DispatcherBuilder::extension)).
    ///
    /// ```
    /// use chalie_core::{Channel, Turn};
    ///
    /// struct NotesFolder(&'static str);
    /// let turn = Turn::builder(Channel::Chat).extension(NotesFolder("notes/")).build();
    /// assert_eq!(turn.extension::<NotesFolder>().map(|f| f.0), Some("notes/"));
    /// assert!(turn.extension::<String>().is_none());
    /// ```
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.shared
            .extensions
            .get::<T>()
            .or_else(|| self.host.as_deref().and_then(Extensions::get::<T>))
    }

    /// Like [`extension`](Self::extension), but a missing value is the
    /// error result to return: `not-configured`, telling the model not to
    /// retry and the developer which type the host forgot.
    ///
    /// ```
    /// use chalie_core::{Channel, ToolResult, Turn};
    ///
    /// struct Catalog(Vec<&'static str>);
    /// fn list(turn: &Turn) -> ToolResult {
    ///     let catalog = match turn.require::<Catalog>() {
    ///         Ok(catalog) => catalog,
    ///         Err(not_configured) => return not_configured,
    ///     };
    ///     ToolResult::success(catalog.0.join(", "))
    /// }
    /// assert!(!list(&Turn::builder(Channel::Chat).build()).is_success());
    /// ```
    #[allow(clippy::result_large_err)] // returned straight from the ability
    pub fn require<T: Send + Sync + 'static>(&self) -> Result<&T, ToolResult> {
        self.extension::<T>().ok_or_else(missing_extension::<T>)
    }

    /// The channel.
    pub fn channel(&self) -> Channel {
        self.shared.channel
    }
    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.shared.session_id
    }
    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.shared.run_id
    }
    /// On whose behalf the calls run: the owner of the session, for a
    /// session's runs; `None` when the host named nobody. An ability that
    /// touches per-user data checks it (see [`Principal`]).
    pub fn principal(&self) -> Option<&Principal> {
        self.shared.principal.as_ref()
    }
    /// The current call's id (empty outside a call).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }
    /// The turn's action trail.
    pub fn trail(&self) -> &ActionTrail {
        &self.shared.trail
    }

    /// Reports progress of the current call, e.g. `"fetched 3 of 10 pages"`.
    pub fn report_progress(&self, message: impl Into<String>) {
        if let Some(sink) = &self.shared.progress {
            sink(Progress {
                call_id: self.call_id.to_string(),
                tool: self.tool.to_string(),
                message: message.into(),
            });
        }
    }

    /// Activates abilities for the rest of the turn, so their full
    /// descriptors reach the next model request (what `find_tools` does).
    pub fn activate_tools<S: Into<String>>(&self, names: impl IntoIterator<Item = S>) {
        let mut activated = self
            .shared
            .activated
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for name in names {
            let name = name.into();
            if !activated.contains(&name) {
                activated.push(name);
            }
        }
    }

    /// The abilities activated so far, in activation order.
    pub fn activated_tools(&self) -> Vec<String> {
        self.shared
            .activated
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether the tools activated in this turn join the tool list of its
    /// next model request (see [`TurnBuilder::offers_activated_tools`]).
    pub fn offers_activated_tools(&self) -> bool {
        self.shared.offers_activated
    }

    /// Whether a read may reuse, or be kept for, a later identical read
    /// of the same run (not on a [`TurnBuilder::single_call`] turn).
    pub(crate) fn reuses_reads(&self) -> bool {
        !self.shared.single_call
    }

    /// Whether `find_tools` (or other code) activated `name` in this turn.
    pub(crate) fn has_activated(&self, name: &str) -> bool {
        self.shared
            .activated
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|activated| activated == name)
    }

    /// The names this turn was pinned (see [`TurnBuilder::pin`]), in order.
    pub fn pinned_tools(&self) -> &[String] {
        self.shared.pins.names()
    }

    pub(crate) fn is_pinned(&self, name: &str) -> bool {
        self.shared.pins.contains(name)
    }
}

impl Turn {
    /// The current time from the host's [`Clock`] extension (the turn's,
    /// then the dispatcher's), or the system clock when none is given.
    pub fn now(&self) -> DateTime<Utc> {
        self.extension::<Clock>().copied().unwrap_or_default().now()
    }
}
