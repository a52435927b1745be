//! chalie's example assistant: thirteen abilities over weather, memory,
//! a calendar, tasks, a notes folder and a web search fixture, plus
//! chalie-index's `find_tools` and `find_skills` over an index of them
//! and three skill playbooks, with the host state they share.
//!
//! The abilities are linked by naming this crate once in the binary
//! (`chalie_core::link_abilities!(assistant)`); [`Host`] holds the stores
//! and hands them to the dispatcher as extensions:
//!
//! ```
//! chalie_core::link_abilities!(assistant);
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use chalie_core::{Channel, Dispatcher, ToolCall, Turn};
//!
//! let host = assistant::Host::sample();
//! let registry = chalie_core::registry().expect("unique names").clone();
//! let dispatcher = host.install(Dispatcher::builder(registry).policy(assistant::policy())).build();
//! // The program seeds this call itself, so it pins the tool for the turn.
//! let turn = Turn::builder(Channel::Chat).pin(["weather"]).build();
//! let done = dispatcher.dispatch(&turn, ToolCall::new("weather", serde_json::json!({ "location": "Rome" }))).await;
//! assert!(done.envelope.contains("\"condition\":\"Cloudy\""));
//! # }
//! ```

// Helpers return the error result an ability hands straight back to the
// model, as `Turn::require` does.
#![allow(clippy::result_large_err)]

pub mod calendar;
#[cfg(feature = "discovery")]
pub mod demo;
pub mod discovery;
pub mod memory;
pub mod notes;
pub mod scratchpad;
mod state;
pub mod tasks;
mod text;
pub mod weather;
pub mod web;

use chalie_core::{Channel, contracts::Profile, dispatch::Policy, dispatch::Setting};

#[cfg(feature = "discovery")]
pub use discovery::IndexMode;
pub use discovery::{descriptors, skills};
pub use state::{
    Calendar, Event, Host, Memory, MemoryItem, NotesFolder, SAMPLE_NOW, Scratch, Task, TaskState,
    Tasks,
};

/// The toolsets of the everyday profile: everything but the web.
pub const TOOLSETS: &[&str] = &["weather", "memory", "calendar", "tasks", "notes", "skills"];

/// The everyday profile: every toolset but `web`, and the always-on core.
pub fn profile() -> Profile {
    TOOLSETS.iter().fold(Profile::new(), |profile, toolset| {
        profile.with_toolset(*toolset)
    })
}

/// The web profile: the everyday one plus `web`, whose abilities are not
/// discoverable and so are pinned (sent with every request) instead.
pub fn web_profile() -> Profile {
    profile().with_toolset("web")
}

/// The abilities a profile pins: those it exposes that discovery never
/// returns, so the host lists them in every request.
pub fn pinned(profile: &Profile, registry: &chalie_core::Registry) -> Vec<&'static str> {
    profile
        .exposed(registry)
        .iter()
        .filter(|entry| !entry.spec().discoverable())
        .map(|entry| entry.spec().name())
        .collect()
}

/// The assistant's permission policy: reads run, writes ask the user in a
/// chat (the default), and nothing writes on the background channels,
/// where nobody can be asked. The gate is flat: `calendar.*` is how every
/// action of the calendar is allowed (`calendar` alone would cover only a
/// call without an action, which the calendar never gets).
pub fn policy() -> Policy {
    let mut policy = Policy::new();
    let reads = [
        "weather",
        "forecast",
        "calendar.*",
        "task_list",
        "note_search",
        "note_outline",
        "note_read",
        "web_search",
        "web_page",
    ];
    for channel in [Channel::Chat, Channel::Subconscious] {
        for read in reads {
            // Ability names are valid permissions.
            let _ = policy.set(channel, read, Setting::Allow);
        }
    }
    policy
}
