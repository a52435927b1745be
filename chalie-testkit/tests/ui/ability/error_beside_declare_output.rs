use chalie_core::{ToolResult, ability, declare_output};

/// Gets the weather.
#[ability(examples = ["a one", "a two", "a three"])]
fn weather() -> ToolResult {
    ToolResult::success("")
}

declare_output!(weather, String);

fn main() {}
