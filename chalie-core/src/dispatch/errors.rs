//! The error results the dispatcher itself produces, each with a hint the
//! model can act on.

use crate::{ToolResult, result::Retry};

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
/// Step 2: the tool exists, but this turn was not offered it.
pub(crate) fn not_available(name: &str) -> ToolResult {
    ToolResult::error(
        "tool-not-available",
        format!("`{name}` is not one of the tools available to you now"),
        "call find_tools with what you need, then call one of the tools it returns; or use a tool from your tool list",
    )
    .with_retry(crate::result::Retry::Never)
}

/// `plan` mode: what the model reads for a blocked write.
pub(crate) fn plan_blocked(tool: &str) -> ToolResult {
    ToolResult::error(
        "plan-mode-read-only",
        format!("`{tool}` changes data, and this session is in plan mode: writes are blocked"),
        "do not retry; describe this step in your plan, it can run once the user leaves plan mode",
    )
    .with_metadata("blocked", true)
    .with_metadata("reason", "plan_mode_read_only")
    .with_retry(crate::result::Retry::Never)
}

/// `plan_collect`: the write could not be kept as a plan step.
pub(crate) fn plan_unavailable(detail: &str) -> ToolResult {
    ToolResult::error(
        "plan-unavailable",
        format!("the step could not be added to the plan: {detail}"),
        "do not retry; tell the user the plan could not be saved",
    )
}

/// A session's write whose start could not be recorded: it did not run.
pub(crate) fn not_recorded(tool: &str, why: &str) -> ToolResult {
    ToolResult::error(
        "write-not-recorded",
        format!("`{tool}` did not run: the session could not record that it starts ({why})"),
        "nothing changed; call it again in a moment, or tell the user the session's storage is failing",
    )
}

/// The ability derived a permission no policy could name: its bug, so
/// the call does not run.
pub(crate) fn bad_permission(tool: &str, derived: &str) -> ToolResult {
    ToolResult::error(
        "invalid-permission",
        format!("`{tool}` derived the permission qualifier `{derived}`, which is not a valid name"),
        "do not retry; tell the user the tool is misconfigured",
    )
    .with_retry(Retry::Never)
}

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

/// The session called an ability as often as the ability's declared
/// limit allows in the window.
pub(crate) fn ability_rate_limited(
    tool: &str,
    calls: u32,
    per_seconds: f64,
    retry_after: f64,
) -> ToolResult {
    // Round up to a tenth of a second so the model never retries too early.
    let retry_after = (retry_after * 10.0).ceil() / 10.0;
    ToolResult::error(
        "rate-limited",
        format!(
            "`{tool}` allows {calls} calls per session in any {per_seconds}s, and this session has made them"
        ),
        format!(
            "wait {retry_after}s before calling `{tool}` again, or answer with what you have"
        ),
    )
    .with_retry(Retry::After(retry_after))
}

/// The shared rate counter failed, so the call is not made: a limit that
/// cannot be checked is not waived.
pub(crate) fn rate_unchecked(error: &super::limits::RateCounterError) -> ToolResult {
    ToolResult::error(
        "rate-limit-unavailable",
        format!(
            "the session's rate limit could not be checked ({error}), so the call was not made"
        ),
        "try again shortly, or answer with what you have",
    )
    .with_retry(Retry::After(1.0))
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

/// Runs one step of `tool`'s call (parsing, validating, starting): a panic
/// becomes the `ability-panicked` result, here and nowhere else.
pub(crate) fn unless_panicked<T>(tool: &str, step: impl FnOnce() -> T) -> Result<T, ToolResult> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(step))
        .map_err(|payload| panicked_with(tool, &*payload))
}

/// What the model reads for a panic of `tool` with `payload`.
pub(crate) fn panicked_with(tool: &str, payload: &(dyn std::any::Any + Send)) -> ToolResult {
    panicked(tool, &panic_message(payload))
}

/// The text of a panic payload, when it is one.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
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
