use chalie_core::{Params, ToolResult, ability};

#[derive(Params)]
struct MemoryParams {
    /// What to store.
    content: Option<String>,
}

/// Stores and recalls facts.
#[ability(actions(store = [content], recall = []), examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn memory(params: MemoryParams) -> ToolResult {
    ToolResult::success(params.content.unwrap_or_default())
}

fn main() {}
