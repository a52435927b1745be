//! The error results the dispatcher itself produces, each with a hint the
//! model can act on.

use crate::{Retry, ToolResult};

/// No tool by that name; `suggestions` are the closest registered names.
pub(crate) fn unknown_tool(name: &str, suggestions: Vec<String>) -> ToolResult {
    let hint = if suggestions.is_empty() {
        "call a tool from your tool list, or discover one with find_tools"
    } else {
        "call one of the valid values instead, with the same arguments"
    };
    ToolResult::error("unknown-tool", format!("no tool is named `{name}`"), hint)
        .with_valid_values(suggestions)
        .with_retry(Retry::Never)
}

/// The policy blocks the permission on this channel.
pub(crate) fn denied(permission: &str) -> ToolResult {
    ToolResult::error(
        "permission-denied",
        format!("`{permission}` is not allowed here by the permission policy"),
        "do not retry this call; tell the user it is blocked and continue without it",
    )
    .with_retry(Retry::Never)
}

/// A human rejected the call, did not answer in time, or could not be asked.
pub(crate) fn rejected(permission: &str, why: &str) -> ToolResult {
    ToolResult::error(
        "approval-rejected",
        format!("`{permission}` needs the user's approval: {why}"),
        "do not retry unless the user asks you to; continue without it",
    )
    .with_retry(Retry::Never)
}

/// The dispatcher was not granted a tag the tool requires.
pub(crate) fn missing_tags(tool: &str, missing: &[&str]) -> ToolResult {
    let listed: Vec<String> = missing.iter().map(|tag| format!("`{tag}`")).collect();
    ToolResult::error(
        "missing-permission-tag",
        format!(
            "`{tool}` requires the permission tag {} which this agent was not granted",
            listed.join(", ")
        ),
        "do not retry; tell the user this agent is not permitted to use it",
    )
    .with_retry(Retry::Never)
}

/// The session made too many calls in the window.
pub(crate) fn rate_limited(calls: u32, per_seconds: f64, retry_after: f64) -> ToolResult {
    // Round up to a tenth of a second so the model never retries too early.
    let retry_after = (retry_after * 10.0).ceil() / 10.0;
    ToolResult::error(
        "rate-limited",
        format!("this session made {calls} calls in the last {per_seconds}s, the most allowed"),
        format!("wait {retry_after}s before calling again, or answer with what you have"),
    )
    .with_retry(Retry::After(retry_after))
}

/// The ability panicked; the dispatcher caught it.
pub(crate) fn panicked(tool: &str, message: &str) -> ToolResult {
    ToolResult::error(
        "ability-panicked",
        format!("`{tool}` failed unexpectedly: {message}"),
        "do not retry the same call; try other arguments or tell the user it failed",
    )
    .with_retry(Retry::Never)
}

/// The result was not a canonical `ToolResult` the envelope can show.
pub(crate) fn non_canonical(tool: &str, detail: &str) -> ToolResult {
    ToolResult::error(
        "non-canonical-result",
        format!("`{tool}` returned a result that cannot be shown: {detail}"),
        "do not retry the same call; tell the user the tool misbehaved",
    )
    .with_retry(Retry::Never)
}

/// The text of a panic payload, when it is one.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let text = if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    };
    // Keep the envelope short: a panic message can carry a whole debug dump.
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
