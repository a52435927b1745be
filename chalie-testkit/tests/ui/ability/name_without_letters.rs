use chalie_core::{ToolResult, ability};

/// Prints a model on the 3D printer.
#[ability(name = "3d", examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn print_model() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
