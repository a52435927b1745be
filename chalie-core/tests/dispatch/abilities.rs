//! Abilities the dispatcher tests call. Each notes its runs under the
//! calling session, so tests running in parallel do not see each other.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use chalie_core::{Params, ToolResult, Turn, ability, result::Body};

static RUNS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

fn note(turn: &Turn, what: &str) {
    RUNS.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push((turn.session_id().to_owned(), what.to_owned()));
}

/// What ran in `session`, in order.
pub fn runs(session: &str) -> Vec<String> {
    RUNS.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .filter(|(id, _)| id == session)
        .map(|(_, what)| what.clone())
        .collect()
}

/// Parameters of [`lookup()`].
#[derive(Params)]
pub struct LookupParams {
    /// What to look up.
    pub query: String,
    /// How many results, 1 to 10.
    #[param(default = 3, min = 1, max = 10)]
    pub limit: u8,
}

/// Looks a topic up in the test notes. Use it to read, never to change.
#[ability(
    effect = read,
    examples = ["look up rust", "find notes on tokio", "search for serde", "what do we know about json", "show notes about tests", "look for the dispatcher"],
)]
pub async fn lookup(params: LookupParams, turn: &Turn) -> ToolResult {
    note(turn, &format!("lookup:{}", params.query));
    if params.query == "missing" {
        return ToolResult::error("not-found", "nothing about `missing`", "try another query");
    }
    ToolResult::success(format!("{} result(s) for {}", params.limit, params.query))
}

/// Parameters of [`calendar()`].
#[derive(Params)]
pub struct CalendarParams {
    /// `list_events` or `delete_event`.
    pub action: String,
    /// The event to delete (`delete_event`).
    pub event_id: Option<String>,
}

/// Lists and deletes calendar events. Use `list_events` to read the
/// calendar, `delete_event` to remove one event by id.
#[ability(
    actions(list_events = [], delete_event = [event_id]),
    examples = ["what's on my calendar", "delete the dentist appointment", "cancel my 3pm", "list my events", "remove tomorrow's meeting", "show my week"],
)]
pub async fn calendar(params: CalendarParams, turn: &Turn) -> ToolResult {
    note(turn, &format!("calendar:{}", params.action));
    let _ = params.event_id;
    ToolResult::success("done")
}

/// Parameters of [`settings()`].
#[derive(Params)]
pub struct SettingsParams {
    /// `view` or `change`.
    pub action: String,
    /// The permission the setting is about (a legitimate parameter).
    pub permission: Option<String>,
}

/// Views or changes a setting; its own parameter is named `permission`.
#[ability(
    actions(view = [], change = [permission]),
    examples = ["show my settings", "change a setting", "turn off notifications", "what are my preferences", "update my privacy setting", "view the settings"],
)]
pub async fn settings(params: SettingsParams, turn: &Turn) -> ToolResult {
    note(turn, &format!("settings:{}", params.action));
    let _ = params.permission;
    ToolResult::success("ok")
}

/// Counts one call; a trivial write.
#[ability(
    examples = ["count this", "add one", "tally a call", "increment the counter", "record a tick", "bump the count"],
)]
pub async fn tally(turn: &Turn) -> ToolResult {
    note(turn, "tally");
    ToolResult::success("counted")
}

/// Counts one call, in a plain `fn`: its body must run only once the gate
/// passed it, as an `async fn`'s does.
#[ability(
    examples = ["count this now", "add one now", "tally it at once", "increment right away", "record a tick now", "bump the count now"],
)]
pub fn tally_now(turn: &Turn) -> ToolResult {
    note(turn, "tally_now");
    ToolResult::success("counted")
}

/// Always panics, to test that the dispatcher survives it.
#[ability(
    examples = ["break something", "crash the tool", "panic now", "fail hard", "explode", "do the broken thing"],
)]
pub async fn boom(turn: &Turn) -> ToolResult {
    note(turn, "boom");
    panic!("the boom ability always panics");
}

/// Returns a body that cannot be serialised.
#[ability(
    effect = read,
    examples = ["return a broken map", "give an odd result", "make an opaque body", "produce bad json", "send unserializable data", "return weird data"],
)]
pub async fn opaque(turn: &Turn) -> ToolResult {
    note(turn, "opaque");
    let mut map: HashMap<(u8, u8), u8> = HashMap::new();
    map.insert((1, 2), 3);
    ToolResult::success(Body::json(&map))
}

/// Reads orders; the dispatcher configuration requires `orders:read`.
#[ability(
    effect = read,
    examples = ["show my orders", "where is my package", "list recent orders", "order status", "what did I buy", "track my order"],
)]
pub async fn orders(turn: &Turn) -> ToolResult {
    note(turn, "orders");
    ToolResult::success("no orders")
}

/// Remembers things; internal, so never gated.
#[ability(
    internal,
    examples = ["remember this", "note that down", "keep this in mind", "save a memory", "don't forget this", "store a fact"],
)]
pub async fn memo(turn: &Turn) -> ToolResult {
    note(turn, "memo");
    ToolResult::success("remembered")
}

/// Parameters of [`slow()`].
#[derive(Params)]
pub struct SlowParams {
    /// Milliseconds to take.
    pub millis: u64,
    /// Panic at the end instead of returning.
    #[param(default = false)]
    pub fail: bool,
}

/// Takes a while, then answers; for background calls.
#[ability(
    examples = ["take your time", "run something slow", "do a long job", "start the export", "generate the report", "process the batch"],
)]
pub async fn slow(params: SlowParams, turn: &Turn) -> ToolResult {
    tokio::time::sleep(Duration::from_millis(params.millis)).await;
    note(turn, "slow");
    if params.fail {
        panic!("slow failed");
    }
    ToolResult::success(format!("slept {}ms", params.millis))
}

/// The host's greeting, provided as an extension.
pub struct Greeting(pub &'static str);

/// Greets with the host's greeting. Use it to test host extensions.
#[ability(
    effect = read,
    examples = ["say hello", "greet me", "welcome", "hello there", "good morning", "say hi"],
)]
pub async fn greet(turn: &Turn) -> ToolResult {
    match turn.require::<Greeting>() {
        Ok(greeting) => ToolResult::success(greeting.0),
        Err(not_configured) => not_configured,
    }
}

/// Parameters of [`transfer()`].
#[derive(Params)]
pub struct TransferParams {
    /// How many euros to move.
    pub amount: u32,
}

/// Above this, a transfer is gated on `transfer.large`.
const LARGE_TRANSFER: u32 = 1_000;

/// The permission qualifier of a transfer, from its validated amount.
fn transfer_permission(params: &TransferParams) -> Option<&'static str> {
    (params.amount > LARGE_TRANSFER).then_some("large")
}

/// Moves money between the user's accounts. Use it only when the user asks to move money.
#[ability(
    effect = write,
    permission = transfer_permission,
    examples = ["move 50 euros to savings", "transfer money", "send 200 to my other account", "move cash", "put money in savings", "transfer funds"],
)]
pub async fn transfer(params: TransferParams, turn: &Turn) -> ToolResult {
    note(turn, &format!("transfer:{}", params.amount));
    ToolResult::success(format!("moved {}", params.amount))
}

/// Exports the account's data; expensive, so it declares a limit of its
/// own, well under the session's. A write: each call runs, none reuses an
/// earlier one's result.
#[ability(
    rate_limit = "3/hour",
    examples = ["export my data", "download everything", "give me a data dump", "export the account", "send me an archive", "back up my data"],
)]
pub async fn export(turn: &Turn) -> ToolResult {
    note(turn, "export");
    ToolResult::success("exported")
}

/// Refunds an order; declares the permission tag it needs.
#[ability(
    tags = ["orders:write"],
    examples = ["refund my order", "give me my money back", "cancel and refund", "return this purchase", "refund the last order", "I want a refund"],
)]
pub async fn refund(turn: &Turn) -> ToolResult {
    note(turn, "refund");
    ToolResult::success("refunded")
}

/// Parameters of [`archive_folder()`].
#[derive(Params)]
pub struct ArchiveParams {
    /// The folder to archive, e.g. `reports/2025`.
    pub folder: String,
}

/// A qualifier no policy can name (a `.` would split the permission): the
/// ability's bug, which the dispatcher refuses rather than gate.
fn archive_permission(_params: &ArchiveParams) -> Option<&'static str> {
    Some("by.folder")
}

/// Archives a folder of the user's files. Use it when the user wants old files put away.
#[ability(
    effect = write,
    permission = archive_permission,
    examples = ["archive last year's reports", "put the old folder away", "archive this folder", "move old files to the archive", "clean up by archiving", "store the folder away"],
)]
pub async fn archive_folder(params: ArchiveParams, turn: &Turn) -> ToolResult {
    note(turn, &format!("archive:{}", params.folder));
    ToolResult::success(format!("archived {}", params.folder))
}
