//! `find_tools` and `find_skills` as chalie abilities. They read the [`Discovery`] the host
//! gave the dispatcher (or the turn) as an extension.

use chalie_core::{Params, ToolResult, Turn, ability};

#[cfg(feature = "engine")]
use crate::discovery::Discovery;

/// Without the `engine` feature there is no index, so no [`Discovery`] value can exist:
/// the abilities keep their contracts (what `cargo xtask manifest` and `lint` read) and
/// answer `not-configured`, as they do for a host that installed no index.
#[cfg(not(feature = "engine"))]
enum Discovery {}

#[cfg(not(feature = "engine"))]
impl Discovery {
    fn find_tools(&self, _: &[String], _: &Turn) -> ToolResult {
        match *self {}
    }

    fn find_skills(&self, _: &[String], _: &Turn) -> ToolResult {
        match *self {}
    }
}

/// Most entries one call may carry: enough for every tool a turn needs, few enough that
/// one call cannot flood the context.
pub const MAX_QUERY_ENTRIES: usize = 8;

/// Longest entry, in characters: a described action, not a document.
pub const MAX_ENTRY_CHARS: usize = 300;

/// Parameters of `find_tools` and `find_skills`.
#[derive(Params)]
pub struct FindParams {
    /// 1 to 8 short entries, one per thing needed, each at most 300 characters.
    pub query: Vec<String>,
}

/// Trimmed entries, or the self-correcting error naming the broken rule.
#[allow(clippy::result_large_err)] // returned straight from the ability
fn entries(params: FindParams) -> Result<Vec<String>, ToolResult> {
    let invalid = |message: String| {
        ToolResult::error(
            "invalid-arguments",
            message,
            "pass `query` as 1 to 8 short strings, one tool name or one described action each",
        )
    };
    let entries: Vec<String> = params.query.iter().map(|e| e.trim().to_owned()).collect();
    if entries.is_empty() {
        return Err(invalid("`query` is empty".into()));
    }
    if entries.len() > MAX_QUERY_ENTRIES {
        return Err(invalid(format!(
            "`query` has {} entries, at most {MAX_QUERY_ENTRIES} are allowed",
            entries.len()
        )));
    }
    if let Some(position) = entries.iter().position(String::is_empty) {
        return Err(invalid(format!("`query[{position}]` is blank")));
    }
    if let Some(position) = entries
        .iter()
        .position(|e| e.chars().count() > MAX_ENTRY_CHARS)
    {
        return Err(invalid(format!(
            "`query[{position}]` is longer than {MAX_ENTRY_CHARS} characters"
        )));
    }
    Ok(entries)
}

/// Finds tools for what the user needs and adds them to your tool list. Use it when no tool
/// you have fits; ask for all the turn needs in one call.
// 1.0.1: a shorter `query` description.
#[ability(
    internal,
    version = "1.0.1",
    effect = read,
    tooltip = "Looking for tools",
    discoverable = false,
    examples = [
        "is there a tool to check the weather in another city",
        "I need to send an email and book a meeting",
        "find a way to search the web",
        "which tool converts currencies",
        "get me something that reads PDF files",
        "look for a calendar tool",
    ],
)]
pub async fn find_tools(params: FindParams, turn: &Turn) -> ToolResult {
    let discovery = match turn.require::<Discovery>() {
        Ok(discovery) => discovery,
        Err(not_configured) => return not_configured,
    };
    match entries(params) {
        Ok(entries) => discovery.find_tools(&entries, turn),
        Err(invalid) => invalid,
    }
}

/// Fetches step-by-step playbooks, with the user's own rules, for tasks such as planning a
/// trip. Use it before a multi-step task.
// 1.0.1: a shorter `query` description.
#[ability(
    internal,
    version = "1.0.1",
    effect = read,
    tooltip = "Reading playbooks",
    discoverable = false,
    examples = [
        "how should I plan a weekend trip",
        "steps for writing a weekly status report",
        "playbook for onboarding a new teammate",
        "guide to preparing a job interview",
        "how do I triage my inbox",
        "routine for a monthly budget review",
    ],
)]
pub async fn find_skills(params: FindParams, turn: &Turn) -> ToolResult {
    let discovery = match turn.require::<Discovery>() {
        Ok(discovery) => discovery,
        Err(not_configured) => return not_configured,
    };
    match entries(params) {
        Ok(entries) => discovery.find_skills(&entries, turn),
        Err(invalid) => invalid,
    }
}
