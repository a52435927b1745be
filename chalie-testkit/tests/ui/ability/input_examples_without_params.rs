use chalie_core::{ToolResult, ability};

/// Tells the time.
#[ability(
    examples = ["a one", "a two", "a three", "a four", "a five", "a six"],
    input_examples = [{ "zone": "UTC" }],
)]
fn clock() -> ToolResult {
    ToolResult::success("12:00")
}

fn main() {}
