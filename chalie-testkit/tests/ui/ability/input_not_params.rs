use chalie_core::{ToolResult, ability};

struct Query {
    city: String,
}

/// Gets the weather.
#[ability(examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn weather(query: Query) -> ToolResult {
    ToolResult::success(query.city)
}

fn main() {}
