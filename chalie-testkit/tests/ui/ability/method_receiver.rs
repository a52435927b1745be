use chalie_core::{ToolResult, ability};

struct Tools;

impl Tools {
    /// Gets the weather.
    #[ability(examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
    fn weather(&self) -> ToolResult {
        ToolResult::success("")
    }
}

fn main() {}
