use chalie_core::{ToolResult, ability};

struct MemoryQuery {
    action: String,
}

/// Stores and recalls facts.
#[ability(actions(store = [], recall = []), examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn memory(query: MemoryQuery) -> ToolResult {
    ToolResult::success(query.action)
}

fn main() {}
