use chalie_core::{ToolResult, ability};

/// Gets the weather.
#[ability(examples = ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"])]
fn weather() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
