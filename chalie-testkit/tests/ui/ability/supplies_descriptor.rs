use chalie_core::{ToolResult, ability};

/// Gets the weather.
#[ability(parameters = "{}", examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn weather() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
