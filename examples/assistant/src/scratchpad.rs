//! The scratchpad reader: continues any result that was cut to fit.

use chalie_core::{
    Params, ToolResult, Turn, ability, contracts::Cursor, contracts::MaxChars, contracts::read_more,
};

use crate::state::Scratch;

/// Parameters of [`scratchpad()`].
#[derive(Params)]
pub struct ScratchpadParams {
    /// The `next_cursor`, copied exactly.
    pub cursor: Cursor,
    /// Most characters to return, 200 to 20000; default 4000.
    pub max_chars: MaxChars,
}

/// Reads on from a result that was cut to fit (`truncated=true`): pass its
/// `next_cursor` as `cursor`. Use it only when the part shown was not
/// enough.
// 1.0.1: shorter field descriptions.
#[ability(
    internal,
    version = "1.0.1",
    effect = read,
    toolset = "core",
    tooltip = "Read on from a truncated result",
    examples = [
        "read more",
        "continue",
        "show the rest",
        "keep going",
        "what comes next in that page",
        "the next part please",
    ],
)]
pub async fn scratchpad(params: ScratchpadParams, turn: &Turn) -> ToolResult {
    match turn.require::<Scratch>() {
        Ok(scratch) => read_more(
            &scratch.pad(turn),
            &scratch.key,
            &params.cursor,
            params.max_chars.get(),
        ),
        Err(not_configured) => not_configured,
    }
}
