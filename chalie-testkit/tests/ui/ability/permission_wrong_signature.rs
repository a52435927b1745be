use chalie_core::{Params, ToolResult, ability};

#[derive(Params)]
struct TransferParams {
    /// How many euros to move.
    amount: u32,
}

// Takes the amount, not the parameters: the derived permission must read
// the validated parameters by reference.
fn transfer_permission(amount: u32) -> Option<&'static str> {
    (amount > 1_000).then_some("large")
}

/// Moves money between the user's accounts.
#[ability(
    effect = write,
    permission = transfer_permission,
    examples = ["move 50 euros", "transfer money", "send 200", "move cash", "put money in savings", "transfer funds"],
)]
async fn transfer(params: TransferParams) -> ToolResult {
    ToolResult::success(format!("moved {}", params.amount))
}

fn main() {}
