use chalie_core::{Params, ToolResult, ability};

#[derive(Params)]
struct ForecastParams {
    /// The city and country, e.g. `Rome, IT`.
    location: String,
    /// How many days ahead, 1 to 7.
    #[param(min = 1, max = 7)]
    days: Option<u8>,
}

/// The weather forecast for a city.
#[ability(
    examples = ["a one", "a two", "a three", "a four", "a five", "a six"],
    input_examples = ["Rome, IT"],
)]
fn forecast(params: ForecastParams) -> ToolResult {
    ToolResult::success(format!("{} {:?}", params.location, params.days))
}

fn main() {}
