use chalie_core::{Params, ToolResult, ability};

#[derive(Params)]
struct AudioParams {
    /// `generate` or `transcribe`.
    action: String,
    /// Beats per minute.
    #[param(actions = [remix])]
    bpm: Option<u32>,
}

/// Composes and transcribes audio.
#[ability(actions(generate = [], transcribe = []), examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn audio(params: AudioParams) -> ToolResult {
    ToolResult::success(params.action)
}

fn main() {}
