use chalie_core::{ToolResult, ability};

/// Gets the weather.
#[ability(examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
#[allow(non_snake_case)]
fn getWeather() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
