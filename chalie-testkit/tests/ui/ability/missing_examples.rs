use chalie_core::{ToolResult, ability};

/// Gets the weather.
#[ability]
fn weather() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
