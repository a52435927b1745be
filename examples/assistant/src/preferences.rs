//! The preferences a user stated and the corrections they made, kept by
//! [`preference()`] in the user's memory. `find_skills` returns them with
//! each playbook they apply to ([`PlaybookRules`](crate::PlaybookRules),
//! which needs the discovery index and so its feature); the ability is
//! linked without it, so the published contracts are the same either way.

use chalie_core::{Params, ToolResult, Turn, ability};

use crate::memory::remember;
use crate::userdata::{Memory, MemoryKind, owner};

/// Parameters of [`preference()`].
#[derive(Params)]
pub struct PreferenceParams {
    /// How the user wants it done, in their words.
    pub content: String,
    /// `preference` (default), or `correction` when they corrected you.
    pub kind: Option<String>,
    /// The playbook it is for, e.g. `plan_a_trip`, if the user said.
    pub skill: Option<String>,
}

/// Keeps how the user wants things done, returned with the playbooks it
/// fits for this user only. Use it when the user states a preference
/// ("always a window seat") or corrects what you did; use `memory` for
/// facts about their life.
#[ability(
    internal,
    toolset = "memory",
    examples = [
        "always book me a window seat",
        "I prefer morning meetings",
        "from now on give me temperatures in Celsius",
        "no, I meant trains, not flights",
        "when I travel, I like hotels near the station",
        "don't put reviews on Fridays, I told you",
    ],
)]
pub async fn preference(params: PreferenceParams, turn: &Turn) -> ToolResult {
    let store = match turn.require::<Memory>() {
        Ok(store) => store,
        Err(not_configured) => return not_configured,
    };
    let owner = match owner(turn, "preference") {
        Ok(owner) => owner,
        Err(refused) => return refused,
    };
    let kind = match params.kind.as_deref().map(str::trim) {
        None | Some("") | Some("preference") => MemoryKind::Preference,
        Some("correction") => MemoryKind::Correction,
        Some(other) => {
            return ToolResult::error(
                "invalid-kind",
                format!("`kind` is `{other}`, not preference or correction"),
                "pass kind as preference or correction",
            )
            .with_valid_values(["preference", "correction"]);
        }
    };
    remember(
        store,
        owner,
        &params.content,
        None,
        kind,
        params.skill,
        turn,
    )
}
