//! Abilities shared by the tests; linked into this binary's registry.

use chalie_core::{ParamEnum, Params, ToolResult, Turn, ability};
use serde_json::json;

#[derive(Clone, Copy, Debug, PartialEq, ParamEnum)]
pub enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Params)]
pub struct WeatherParams {
    /// The city and country, e.g. `Valletta, MT`.
    pub location: String,
    /// The temperature unit.
    pub unit: Option<Unit>,
}

/// Current weather for a city.
/// Use it when the user asks about the weather now.
#[ability(
    effect = read,
    examples = [
        "what's the weather in Rome",
        "is it raining in London",
        "how hot is it in Cairo",
        "is there a way to check the weather in another city",
        "temperature in Valletta",
        "do I need an umbrella today",
    ],
)]
pub async fn weather(params: WeatherParams) -> ToolResult {
    let _ = params.unit;
    ToolResult::success(
        json!({ "location": params.location, "condition": "Clear", "temperature_c": 24.1 }),
    )
}

#[allow(dead_code)]
#[derive(Params)]
pub struct MemoryParams {
    /// `store` or `recall`.
    pub action: String,
    /// What to store.
    pub content: Option<String>,
    /// What to search for.
    pub query: Option<String>,
    /// A place to filter by.
    pub location: Option<String>,
}

/// Stores and recalls what the user asked to remember.
#[ability(
    internal,
    version = "2.1.0",
    toolset = "memory",
    actions(store = [content], recall = []),
    examples = [
        "remember my sister's birthday is in May",
        "what did I say about my car",
        "note that I like window seats",
        "do you remember my dentist",
        "what do you know about Rome",
        "keep in mind I'm allergic to nuts",
    ],
)]
pub fn memory(params: MemoryParams, turn: &Turn) -> ToolResult {
    turn.report_progress("searching");
    if params.action == "recall" && params.query.is_none() && params.location.is_none() {
        return ToolResult::error(
            "no-query-or-location",
            "recall requires either a query or a location.",
            "pass query= to search by topic, or location= to filter by place.",
        );
    }
    ToolResult::success("ok")
}

/// Tells the current time in UTC. Use it when the user asks what time it is.
#[ability(
    effect = read,
    discoverable = false,
    examples = ["what time is it", "current time", "time now in UTC", "tell me the time", "what's the clock say", "is it late"],
)]
pub fn clock() -> ToolResult {
    ToolResult::success("12:00").with_metadata("zone", "UTC")
}

#[derive(Clone, Copy, Debug, PartialEq, ParamEnum)]
pub enum AudioAction {
    Generate,
    Transcribe,
}

#[derive(Params)]
pub struct AudioParams {
    /// `generate` to compose a clip, `transcribe` to write down what one says.
    pub action: AudioAction,
    /// What to compose, or the clip to transcribe.
    pub prompt: String,
    /// Beats per minute of the composed clip.
    #[param(min = 40, max = 220, clamp, actions = [generate])]
    pub bpm: Option<u32>,
    /// Length of the clip in seconds; ignored if 0 or less.
    #[param(max = 30, clamp)]
    pub duration_seconds: Option<f64>,
    /// The spoken language, e.g. `it`.
    #[param(actions = [transcribe])]
    pub language: Option<String>,
}

/// Composes short audio clips and transcribes them.
/// Use it when the user wants music made or a recording written down.
#[ability(
    effect = read,
    actions(generate = [], transcribe = []),
    input_examples = [
        { "action": "generate", "prompt": "an upbeat jingle", "bpm": 120, "duration_seconds": 10.5 },
        { "action": "transcribe", "prompt": "voice-memo.ogg", "language": "it" },
    ],
    examples = [
        "make a short upbeat jingle",
        "compose a calm loop at 90 bpm",
        "transcribe this voice memo",
        "write down what this recording says",
        "generate ten seconds of drums",
        "what does this clip say in Italian",
    ],
)]
pub fn audio(params: AudioParams) -> ToolResult {
    // "Ignored if 0 or less" is the ability's own reading of the value; the
    // schema states the clamp, the doc comment the rest.
    let duration = params.duration_seconds.filter(|seconds| *seconds > 0.0);
    ToolResult::success(json!({
        "action": format!("{:?}", params.action),
        "prompt": params.prompt,
        "bpm": params.bpm,
        "duration_seconds": duration,
        "language": params.language,
    }))
}
