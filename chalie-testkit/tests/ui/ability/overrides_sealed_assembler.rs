use chalie_core::{descriptor::AbilityExt, ToolResult, ability};

/// Gets the weather.
#[ability(examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn weather() -> ToolResult {
    ToolResult::success("")
}

impl AbilityExt for weather {}

fn main() {}
