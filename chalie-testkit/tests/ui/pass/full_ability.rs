use chalie_core::{Ability, ParamEnum, Params, ToolResult, Turn, ability};

#[derive(Clone, Copy, ParamEnum)]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Params)]
pub struct WeatherParams {
    /// The city.
    location: String,
    /// The unit.
    #[param(default = "celsius")]
    unit: Unit,
    /// Days ahead.
    #[param(default = 1, min = 1, max = 7)]
    days: u8,
}

/// Current weather for a city. Use it when the user asks about the weather.
#[ability(effect = read, version = "1.2.0", toolset = "weather", tooltip = "Weather now", examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
pub async fn weather(params: WeatherParams, turn: &Turn) -> ToolResult {
    turn.report_progress("looking up");
    let _ = (params.unit, params.days);
    ToolResult::success(params.location)
}

#[derive(Params)]
struct MemoryParams {
    /// `store` or `recall`.
    action: String,
    /// What to store.
    content: Option<String>,
}

/// Stores and recalls facts.
#[ability(internal, actions(store = [content], recall = []), examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn memory(turn: &Turn, params: MemoryParams) -> ToolResult {
    let _ = (turn, params.content);
    ToolResult::error("no-query", params.action, "pass query=")
}

/// Tells the time. Use it when the user asks what time it is.
#[ability(discoverable = false, examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn clock() -> chalie_core::ToolResult {
    ToolResult::success("12:00")
}

fn main() {
    let registry = chalie_core::registry().unwrap();
    let names: Vec<&str> = registry.iter().map(|entry| entry.name()).collect();
    assert_eq!(names, ["clock", "memory", "weather"]);
    assert_eq!(weather::SPEC.version(), "1.2.0");
    assert_eq!(<weather as Ability>::tooltip(), "Weather now");
    assert_eq!(memory::tooltip(), "Stores and recalls facts");
}
