use chalie_core::{ToolResult, ability};

/// Manages events.
#[ability(actions(delete.event = []), examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn calendar() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
