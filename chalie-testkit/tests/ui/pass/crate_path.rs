mod reexport {
    pub use chalie_core as chalie;
}

use reexport::chalie::{Params, ToolResult, ability};

#[derive(Params)]
#[param(crate = reexport::chalie)]
struct EchoParams {
    /// What to echo.
    text: String,
}

/// Echoes its input. Use it to test the pipeline.
#[ability(crate = reexport::chalie, examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn echo(params: EchoParams) -> ToolResult {
    ToolResult::success(params.text)
}

fn main() {
    assert_eq!(reexport::chalie::registry().unwrap().len(), 1);
}
