use chalie_core::{ToolResult, ability};

#[ability(examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn weather() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
