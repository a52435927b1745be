use chalie_core::{ToolResult, ability};

/// Gets the weather.
#[ability(examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn weather() -> ToolResult {
    ToolResult::error("NoSuchCity", "no such city", "pick another")
}

fn main() {}
