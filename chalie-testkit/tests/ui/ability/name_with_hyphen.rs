use chalie_core::{ToolResult, ability};

/// Reads a file.
#[ability(name = "files-read", examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn read() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
