//! Calling abilities the way a model would, and asserting on the envelope.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use chalie_core::{
    BoxFuture, Channel, Dispatcher, Registry, RegistryError, ToolCall, Turn, dispatch::Approval,
    dispatch::ApprovalRequest, dispatch::Approver, dispatch::Dispatched,
    dispatch::DispatcherBuilder, dispatch::Policy, dispatch::Setting, envelope::Envelope,
    session::Mode, turn::ActionRecord, turn::Clock, turn::Principal,
};
use serde_json::Value;

/// A change to the dispatcher under test, kept so a smoke run can repeat it.
pub(crate) type Configure = Arc<dyn Fn(DispatcherBuilder) -> DispatcherBuilder + Send + Sync>;

/// The instant a harness's clock reads unless told otherwise: Monday
/// 5 January 2026, 09:00 UTC. Tests of "today" and "overdue" stay
/// deterministic.
pub const DEFAULT_NOW: &str = "2026-01-05T09:00:00Z";

/// Answers approval requests from a script, in order; once the script is
/// used up every further request is rejected. Records what it was asked.
#[derive(Clone, Default)]
pub struct ScriptedApprover {
    answers: Arc<Mutex<VecDeque<Approval>>>,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
}

impl ScriptedApprover {
    /// An approver that gives `answers` in order.
    pub fn new(answers: impl IntoIterator<Item = Approval>) -> Self {
        Self {
            answers: Arc::new(Mutex::new(answers.into_iter().collect())),
            asked: Arc::default(),
        }
    }

    /// Every request received so far.
    pub fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl ScriptedApprover {
    /// The next scripted answer; rejected once the script is used up.
    pub(crate) fn next_answer(&self) -> Approval {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .unwrap_or(Approval::Rejected)
    }
}

impl Approver for ScriptedApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, Approval> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request);
        Box::pin(std::future::ready(self.next_answer()))
    }
}

/// Builds a [`Harness`].
pub struct HarnessBuilder {
    registry: Option<Registry>,
    only: Option<Vec<String>>,
    pins: Vec<String>,
    pin_every_ability: bool,
    channel: Channel,
    policy: Policy,
    allow_all: bool,
    approver: Option<ScriptedApprover>,
    clock: Clock,
    mode: Mode,
    principal: Option<Principal>,
    configure: Vec<Configure>,
}

impl HarnessBuilder {
    /// Use this registry instead of every linked ability.
    pub fn registry(mut self, registry: Registry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// Keep only the abilities with these names, and pin them on the
    /// harness's turn: choosing what is under test offers it, as a host's
    /// pin would. Anything else the registry holds is out of reach.
    pub fn abilities<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        self.pins.extend(names.iter().cloned());
        self.only = Some(names);
        self
    }

    /// Pins `names` on the harness's turn (and on [`Harness::run`]'s
    /// session), as a host pins a tool on a channel; other abilities are
    /// reachable only through the channel's core or after `find_tools`
    /// activated them, exactly as in production.
    pub fn pin<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.pins.extend(names.into_iter().map(Into::into));
        self
    }

    /// **Widens reachability**: pins every ability of the registry, so any
    /// call reaches its tool without discovery. For tests of an ability's
    /// behaviour only; a test of isolation must not use it.
    pub fn pin_every_ability(mut self) -> Self {
        self.pin_every_ability = true;
        self
    }

    /// The channel calls come from (default: chat).
    pub fn channel(mut self, channel: Channel) -> Self {
        self.channel = channel;
        self
    }

    /// The permission policy (default: empty, so every non-internal call asks).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// **Widens the gate**: allows every ability on every channel, for tests
    /// of behaviour rather than of the gate; a test of the gate must not
    /// use it.
    pub fn allow_all(mut self) -> Self {
        self.allow_all = true;
        self
    }

    /// The session mode of [`Harness::run`] (default `approval`: each
    /// write waits for the approver).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Answer `ask` with this scripted approver; in [`Harness::run`] it
    /// also answers the writes the session holds for approval.
    pub fn approver(mut self, approver: ScriptedApprover) -> Self {
        self.approver = Some(approver);
        self
    }

    /// The clock abilities read through `Turn::now` (default: fixed at
    /// [`DEFAULT_NOW`]; `Clock::system()` for the real time).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Calls and runs on behalf of `principal` (default: nobody), as a
    /// session opened for a signed-in user does: abilities that keep each
    /// user's data apart read it from [`Turn::principal`].
    pub fn principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Makes `value` available to the abilities, as
    /// [`DispatcherBuilder::extension`] does: the host's state.
    pub fn extension<T: Send + Sync + 'static>(self, value: T) -> Self {
        let shared = Arc::new(value);
        self.configure(move |builder| builder.shared_extension(Arc::clone(&shared)))
    }

    /// Changes the dispatcher under test, e.g. to install the host's state
    /// or a rate limit; applied after the clock, so a clock installed here
    /// wins. [`Harness::smoke`] repeats it.
    pub fn configure(
        mut self,
        configure: impl Fn(DispatcherBuilder) -> DispatcherBuilder + Send + Sync + 'static,
    ) -> Self {
        self.configure.push(Arc::new(configure));
        self
    }

    /// The harness; fails as [`chalie_core::registry`] does: when the linked
    /// abilities share a name, or one's parameters hold an object without
    /// properties.
    pub fn build(self) -> Result<Harness, RegistryError> {
        let registry = match self.registry {
            Some(registry) => registry,
            None => chalie_core::registry()?.clone(),
        };
        let registry = match &self.only {
            Some(names) => registry.filter(|entry| names.iter().any(|name| name == entry.name())),
            None => registry,
        };
        let mut policy = self.policy;
        if self.allow_all {
            for entry in registry.iter() {
                for channel in [Channel::Chat, Channel::Subconscious, Channel::External] {
                    // Names in a registry are valid permissions by construction.
                    let _ = policy.set(channel, entry.name(), Setting::Allow);
                    for action in entry.spec().actions() {
                        let _ = policy.set(
                            channel,
                            &format!("{}.{}", entry.name(), action.name()),
                            Setting::Allow,
                        );
                    }
                }
            }
        }
        let mut builder = Dispatcher::builder(registry.clone())
            .policy(policy)
            .without_rate_limit()
            .extension(self.clock);
        if let Some(approver) = &self.approver {
            builder = builder.approver(approver.clone());
        }
        for configure in &self.configure {
            builder = configure(builder);
        }
        let mut pins = self.pins;
        if self.pin_every_ability {
            pins.extend(registry.iter().map(|entry| entry.name().to_owned()));
        }
        let mut turn = Turn::builder(self.channel)
            .session_id("harness")
            .pin(pins.iter().cloned());
        if let Some(principal) = self.principal {
            turn = turn.principal(principal);
        }
        let turn = turn.build();
        Ok(Harness {
            shared: Arc::new(builder.build()),
            turn,
            clock: self.clock,
            mode: self.mode,
            approver: self.approver,
            configure: self.configure,
        })
    }
}

/// Calls abilities through the real dispatcher on one turn.
pub struct Harness {
    pub(crate) shared: Arc<Dispatcher>,
    turn: Turn,
    clock: Clock,
    pub(crate) mode: Mode,
    pub(crate) approver: Option<ScriptedApprover>,
    pub(crate) configure: Vec<Configure>,
}

impl Harness {
    /// Starts configuring a harness over every linked ability.
    pub fn builder() -> HarnessBuilder {
        HarnessBuilder {
            registry: None,
            only: None,
            pins: Vec::new(),
            pin_every_ability: false,
            channel: Channel::Chat,
            policy: Policy::new(),
            allow_all: false,
            approver: None,
            // A fixed default: a test never depends on when it runs. The
            // text is a constant, so parsing it cannot fail.
            clock: Clock::parse(DEFAULT_NOW).unwrap_or_default(),
            mode: Mode::default(),
            principal: None,
            configure: Vec::new(),
        }
    }

    /// The abilities under test.
    pub fn registry(&self) -> &Registry {
        self.shared.registry()
    }

    /// The dispatcher, for what the harness does not wrap.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.shared
    }

    /// The turn every call runs on; its trail holds every call.
    pub fn turn(&self) -> &Turn {
        &self.turn
    }

    /// The clock the abilities read.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Calls `tool` with `arguments` as a model would.
    pub async fn call(&self, tool: &str, arguments: Value) -> CallOutcome {
        let dispatched = self
            .shared
            .dispatch(&self.turn, ToolCall::new(tool, arguments))
            .await;
        CallOutcome::from(dispatched)
    }
}

/// One call's outcome: the envelope text, parsed, and the trail record.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// What the model reads.
    pub text: String,
    /// The same, parsed.
    pub envelope: Envelope,
    /// What was recorded on the action trail.
    pub record: ActionRecord,
}

impl From<Dispatched> for CallOutcome {
    fn from(dispatched: Dispatched) -> Self {
        let envelope = Envelope::parse(&dispatched.envelope).unwrap_or_else(|error| Envelope {
            tool: String::new(),
            attributes: vec![("status".into(), format!("unparseable: {error}"))],
            content: dispatched.envelope.clone(),
            error: None,
        });
        let record = dispatched.record();
        Self {
            text: dispatched.envelope,
            envelope,
            record,
        }
    }
}

impl CallOutcome {
    /// Panics, showing the envelope, unless the call succeeded.
    #[track_caller]
    pub fn assert_success(&self) -> &Self {
        assert!(
            self.envelope.is_success(),
            "expected a success, the model read:\n{}",
            self.text
        );
        self
    }

    /// Panics, showing the envelope, unless the call failed with `code`.
    #[track_caller]
    pub fn assert_error(&self, code: &str) -> &Self {
        assert_eq!(
            self.envelope.code(),
            Some(code),
            "expected error `{code}`, the model read:\n{}",
            self.text
        );
        self
    }

    /// The body parsed as JSON into `T`.
    pub fn body<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.envelope.content)
    }

    /// A header metadata value, e.g. `count`.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.envelope.attribute(key)
    }
}
