//! The dispatcher: the order of its steps, the gate on every channel, the
//! policy file, limits, reuse, failures, suggestions, tags, background
//! calls, and many sessions at once.

// A failed unwrap is a failed test, which is what a test should do.
#![allow(clippy::unwrap_used)]

mod abilities;
mod allow;
mod background;
mod declared;
mod envelope;
mod extensions;
mod failures;
mod gate;
mod limits;
mod order;
mod policy;
mod reach;
mod refusals;
mod resolve;
mod reuse;
mod stress;
mod tags;

use std::sync::{Arc, Mutex};

use chalie_core::{
    BoxFuture, Channel, Dispatcher, ToolCall, Turn, dispatch::Approval, dispatch::ApprovalRequest,
    dispatch::Approver, dispatch::Dispatched, dispatch::DispatcherBuilder, dispatch::Policy,
    dispatch::Setting, envelope::Envelope,
};
use serde_json::Value;

/// Every ability linked into this test binary.
pub fn registry() -> chalie_core::Registry {
    chalie_core::registry().expect("unique names").clone()
}

/// The test abilities every channel of [`widened_builder`] is offered.
pub const TEST_ABILITIES: [&str; 11] = [
    "lookup",
    "calendar",
    "settings",
    "tally",
    "tally_now",
    "boom",
    "opaque",
    "orders",
    "slow",
    "greet",
    "memo",
];

/// A builder over every test ability, allowing everything on every channel
/// unless a test says otherwise.
///
/// **Widens reachability and the gate**: every test ability is pinned on
/// every channel (these tests are about the steps after reachability;
/// reachability itself is attacked in the session tests).
pub fn widened_builder() -> DispatcherBuilder {
    let mut policy = Policy::new();
    let mut builder = Dispatcher::builder(registry());
    for channel in [Channel::Chat, Channel::Subconscious, Channel::External] {
        for tool in TEST_ABILITIES.into_iter().filter(|tool| *tool != "memo") {
            // The tool and every action of it: `tool` alone covers only
            // calls without an action.
            for permission in [tool.to_owned(), format!("{tool}.*")] {
                policy
                    .set(channel, &permission, Setting::Allow)
                    .expect("valid permission");
            }
        }
        builder = builder.pin(channel, TEST_ABILITIES);
    }
    builder.policy(policy)
}

/// A turn on `channel` in its own session.
pub fn turn(channel: Channel, session: &str) -> Turn {
    Turn::builder(channel).session_id(session).build()
}

/// Dispatches `name` with `arguments`.
pub async fn call(
    dispatcher: &Dispatcher,
    turn: &Turn,
    name: &str,
    arguments: Value,
) -> Dispatched {
    dispatcher
        .dispatch(turn, ToolCall::new(name, arguments))
        .await
}

/// The envelope, parsed.
pub fn envelope(dispatched: &Dispatched) -> Envelope {
    Envelope::parse(&dispatched.envelope).expect("a well-formed envelope")
}

/// An approver that writes down every request and gives one answer.
#[derive(Clone)]
pub struct Recorder {
    /// Every request, in order.
    pub asked: Arc<Mutex<Vec<ApprovalRequest>>>,
    answer: Option<Approval>,
}

impl Recorder {
    /// Answers `answer` to everything.
    pub fn answering(answer: Approval) -> Self {
        Self {
            asked: Arc::default(),
            answer: Some(answer),
        }
    }

    /// Never answers.
    pub fn silent() -> Self {
        Self {
            asked: Arc::default(),
            answer: None,
        }
    }

    /// The permissions it was asked about.
    pub fn permissions(&self) -> Vec<String> {
        self.asked
            .lock()
            .expect("not poisoned")
            .iter()
            .map(|request| request.permission.clone())
            .collect()
    }
}

impl Approver for Recorder {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, Approval> {
        self.asked.lock().expect("not poisoned").push(request);
        match self.answer {
            Some(answer) => Box::pin(async move { answer }),
            None => Box::pin(std::future::pending()),
        }
    }
}
