use chalie_core::{ToolResult, ability};

/// Gets the weather.
#[ability(examples = ["weather in Rome", "is it raining"])]
fn weather() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
