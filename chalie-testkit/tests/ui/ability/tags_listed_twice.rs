use chalie_core::{ToolResult, ability};

/// Exports the account's data.
#[ability(tags = ["orders:read", "orders:read"], examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn export() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
