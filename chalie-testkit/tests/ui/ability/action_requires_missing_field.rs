use chalie_core::{Params, ToolResult, ability};

#[derive(Params)]
struct MemoryParams {
    /// `store` or `recall`.
    action: String,
    /// What to store.
    content: Option<String>,
}

/// Stores and recalls facts.
#[ability(actions(store = [contents], recall = []), examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn memory(params: MemoryParams) -> ToolResult {
    ToolResult::success(params.action)
}

fn main() {}
