//! Two abilities: a read with typed parameters, and one with actions.

use chalie_core::{ParamEnum, Params, ToolResult, Turn, ability};
use serde_json::json;

/// A temperature unit.
#[derive(Clone, Copy, ParamEnum)]
pub enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

/// Parameters of [`weather()`].
#[derive(Params)]
pub struct WeatherParams {
    /// The city and country code, e.g. `Valletta, MT`.
    pub location: String,
    /// The temperature unit; default `celsius`.
    pub unit: Option<Unit>,
}

/// Current weather for one city: condition and temperature. Use it when the
/// user asks what the weather is like now somewhere; it has no forecasts.
/// Returns `{"location","condition","temperature_c"}`; an unknown city is
/// the error `unknown-location`, with the known cities as valid values.
#[ability(
    effect = read,
    toolset = "weather",
    tooltip = "Current weather for a city",
    examples = [
        "what's the weather in Rome",
        "is it raining in London right now",
        "how hot is it in Cairo today",
        "is there a way to check the weather in another city",
        "temperature in Valletta",
        "do I need an umbrella in Paris",
    ],
)]
pub async fn weather(params: WeatherParams) -> ToolResult {
    let known = [
        ("Valletta, MT", "Clear", 24.1),
        ("Rome, IT", "Cloudy", 18.4),
    ];
    let Some((location, condition, celsius)) = known
        .iter()
        .find(|(city, ..)| city.eq_ignore_ascii_case(&params.location))
    else {
        return ToolResult::error(
            "unknown-location",
            format!("no weather data for `{}`.", params.location),
            "pass one of the valid values as location=.",
        )
        .with_valid_values(known.iter().map(|(city, ..)| *city));
    };
    match params.unit.unwrap_or(Unit::Celsius) {
        Unit::Celsius => ToolResult::success(
            json!({ "location": location, "condition": condition, "temperature_c": celsius }),
        ),
        Unit::Fahrenheit => ToolResult::success(
            json!({ "location": location, "condition": condition, "temperature_f": celsius * 9.0 / 5.0 + 32.0 }),
        ),
    }
}

/// Parameters of [`memory()`].
#[derive(Params)]
pub struct MemoryParams {
    /// `store` to remember a fact, `recall` to look facts up.
    pub action: String,
    /// The fact to remember; required by `store`.
    pub content: Option<String>,
    /// A topic to search memories for (`recall`).
    pub query: Option<String>,
    /// A place to filter memories by (`recall`).
    pub location: Option<String>,
}

/// Stores facts the user asks to remember and recalls them by topic or
/// place. Use `store` when the user says "remember…", `recall` before
/// answering questions about their own life.
#[ability(
    internal,
    actions(store = [content], recall = []),
    toolset = "memory",
    examples = [
        "remember that my sister's birthday is in May",
        "what did I tell you about my car",
        "note that I prefer window seats",
        "do you remember my dentist's name",
        "what do you know about my trip to Rome",
        "keep in mind that I'm allergic to nuts",
    ],
)]
pub async fn memory(params: MemoryParams, turn: &Turn) -> ToolResult {
    match params.action.as_str() {
        "store" => {
            turn.report_progress("saving");
            ToolResult::success("stored.").with_metadata("count", 1)
        }
        _ if params.query.is_none() && params.location.is_none() => ToolResult::error(
            "no-query-or-location",
            "recall requires either a query or a location.",
            "pass query= to search by topic, or location= to filter by place.",
        ),
        _ => ToolResult::success(json!({ "items": [], "count": 0 })).with_metadata("count", 0),
    }
}
