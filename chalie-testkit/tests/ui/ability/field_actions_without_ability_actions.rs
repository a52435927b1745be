use chalie_core::{Params, ToolResult, ability};

#[derive(Params)]
struct AudioParams {
    /// What to do.
    action: String,
    /// Beats per minute.
    #[param(actions = [generate])]
    bpm: Option<u32>,
}

/// Composes audio.
#[ability(examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn audio(params: AudioParams) -> ToolResult {
    ToolResult::success(params.action)
}

fn main() {}
