use chalie_core::{Params, ToolResult, ability};
use serde_json::json;

#[derive(Params)]
struct AudioParams {
    /// `generate` or `remix`.
    action: String,
    /// Beats per minute.
    #[param(min = 40, max = 220, clamp, actions = [generate, remix])]
    bpm: Option<u32>,
    /// Seconds of audio, at most 30.
    #[param(default = 10, max = 30, clamp)]
    seconds: f64,
    /// The track to remix.
    #[param(actions = [remix])]
    track: Option<String>,
}

/// Composes and remixes audio.
#[ability(actions(generate = [], remix = [track]), examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn audio(params: AudioParams) -> ToolResult {
    ToolResult::success(params.action)
}

fn main() {
    let params = AudioParams::from_arguments(&json!({ "action": "generate", "bpm": 500, "seconds": 45 }))
        .expect("clamped, not rejected");
    assert_eq!((params.bpm, params.seconds), (Some(220), 30.0));
    let error = AudioParams::from_arguments(&json!({ "action": "generate", "track": "a.ogg" }))
        .err()
        .expect("track is for remix only");
    assert_eq!(error.to_string(), "`track` is only for action `remix`, not `generate`");
    assert_eq!(<audio as chalie_core::Ability>::SPEC.actions().len(), 2);
}
