//! chalie's example assistant: fourteen abilities over weather, memory,
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
#[cfg(feature = "discovery")]
mod playbook_rules;
pub mod preferences;
pub mod scratchpad;
#[cfg(feature = "discovery")]
pub mod service;
mod state;
pub mod tasks;
mod text;
mod userdata;
pub mod weather;
pub mod web;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chalie_core::{
    Channel, Registry, contracts::ChalieConfig, contracts::ConfigError, contracts::Profile,
    dispatch::ExternalTools, dispatch::Policy, dispatch::Setting,
};

#[cfg(feature = "discovery")]
pub use discovery::IndexMode;
pub use discovery::{descriptors, skills};
#[cfg(feature = "discovery")]
pub use playbook_rules::PlaybookRules;
pub use state::{Host, NotesFolder, SAMPLE_NOW, SAMPLE_USER, Scratch};
pub use userdata::{Calendar, Event, Memory, MemoryItem, MemoryKind, Task, TaskState, Tasks};

/// The profile of the assistant's chats in `chalie.toml`: every toolset but
/// `web`, and the always-on core.
pub const EVERYDAY_PROFILE: &str = "everyday";

/// The profile of the web conversation and of the MCP server in
/// `chalie.toml`: the everyday toolsets plus `web`, whose abilities are not
/// discoverable and so are pinned (sent with every request) instead.
pub const WEB_PROFILE: &str = "web";

/// The workspace's `chalie.toml`, where the assistant's profiles are
/// configured.
pub fn config_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("..")
        .join("chalie.toml")
}

/// The assistant's profiles, as configured in `chalie.toml`.
#[derive(Debug, Clone)]
pub struct Profiles {
    /// [`EVERYDAY_PROFILE`]: what chats discover.
    pub everyday: Profile,
    /// [`WEB_PROFILE`]: the web conversation's, and the MCP server's.
    pub web: Profile,
}

impl Profiles {
    /// Both profiles from `config`, checked against the linked `registry`
    /// and the connected `external` servers: a missing profile, or a
    /// toolset, server or tool nothing has, is an error naming the fix.
    pub fn select(
        config: &ChalieConfig,
        registry: &Registry,
        external: &[Arc<dyn ExternalTools>],
    ) -> Result<Profiles, ConfigError> {
        Ok(Profiles {
            everyday: config.select(EVERYDAY_PROFILE, registry, external)?,
            web: config.select(WEB_PROFILE, registry, external)?,
        })
    }

    /// Both profiles from the workspace's `chalie.toml` ([`config_path`]),
    /// with no external server.
    pub fn workspace(registry: &Registry) -> Result<Profiles, ConfigError> {
        Profiles::select(&ChalieConfig::load(&config_path())?, registry, &[])
    }
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
