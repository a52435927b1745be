use chalie_core::{ToolResult, ability};

/// Gets the weather.
#[ability(version = "1.2", examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn weather() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
