use chalie_core::{ToolResult, ability};

/// Does a thing.
#[ability(name = "this_name_is_much_too_long_for_any_tool_api_to_accept_it_at_all_ok", examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn thing() -> ToolResult {
    ToolResult::success("")
}

fn main() {}
