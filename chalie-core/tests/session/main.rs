//! Sessions and runs: the run loop event for event, the modes composed
//! with the permission gate, approvals (and their timeout), plans, the
//! narrated-action retry, the stores and a restart during an approval.

// A failed unwrap is a failed test, which is what a test should do.
#![allow(clippy::unwrap_used)]

mod abilities;
#[cfg(feature = "anthropic")]
mod anthropic;
mod events;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_events;
#[cfg(feature = "http")]
mod http_owners;
#[cfg(all(feature = "http", feature = "sqlite"))]
mod http_policy;
mod isolation;
mod modes;
#[cfg(feature = "openai")]
mod openai;
mod owners;
mod records;
#[cfg(feature = "postgres")]
mod replicas;
#[cfg(feature = "sqlite")]
mod restart;
mod runs;
mod stores;
mod traces;

use std::sync::Arc;

use chalie_core::session::{Event, Model, SessionStore, Sessions};
use chalie_core::{Channel, Dispatcher, dispatch::Policy, dispatch::Setting};

/// Every ability linked into this test binary.
pub fn registry() -> chalie_core::Registry {
    chalie_core::registry().unwrap().clone()
}

/// A policy allowing every test ability on a chat.
pub fn allow_all() -> Policy {
    let mut policy = Policy::new();
    for name in [
        "lookup",
        "list_tasks",
        "delete_task",
        "find_tools",
        "rename_task",
    ] {
        policy.set(Channel::Chat, name, Setting::Allow).unwrap();
    }
    policy
}

/// Sessions over a dispatcher with `policy`, the test abilities pinned.
pub fn sessions_with(
    policy: Policy,
    model: Arc<dyn Model>,
    store: Option<Arc<dyn SessionStore>>,
) -> Sessions {
    let dispatcher = Dispatcher::builder(registry()).policy(policy).build();
    let builder = Sessions::builder(Arc::new(dispatcher), model).pinned([
        "lookup",
        "list_tasks",
        "delete_task",
    ]);
    match store {
        Some(store) => builder.store(store).build(),
        None => builder.build(),
    }
}

/// Sessions allowing every test ability, in memory.
pub fn sessions(model: Arc<dyn Model>) -> Sessions {
    sessions_with(allow_all(), model, None)
}

/// The events' names, in order.
pub fn names(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::name).collect()
}

/// Waits until the run has emitted an event named `name`, and returns it.
pub async fn wait_for(run: &chalie_core::session::Run, name: &str) -> Event {
    let mut stream = run.events();
    while let Some(event) = stream.next().await {
        if event.name() == name {
            return event;
        }
    }
    panic!("the run ended without `{name}`");
}
