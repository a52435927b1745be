//! The abilities this test binary serves: a stand-in `find_tools` over a
//! catalog given as an extension, a read with a declared output and
//! progress, a write, one kept out of discovery.

use chalie_core::{Params, ToolResult, Turn, ability, declare_output};
use serde_json::{Value, json};

/// What the stand-in `find_tools` searches: descriptors as data (local
/// abilities and external tools alike), each with its parameters.
pub struct Catalog(pub Vec<Value>);

/// Parameters of [`find_tools()`].
#[derive(Params)]
pub struct FindParams {
    /// What the user wants to do, in a few words.
    pub query: String,
}

/// Finds tools for a task and returns each one's full descriptor (name,
/// description, input schema), so it can be called through the proxy.
#[ability(
    effect = read,
    internal,
    examples = [
        "find a tool to look up an order",
        "which tool checks the weather",
        "is there a tool for cancelling",
        "search the tools",
        "what can you do with orders",
        "find tools for forecasts",
    ],
)]
pub async fn find_tools(params: FindParams, turn: &Turn) -> ToolResult {
    let catalog = match turn.require::<Catalog>() {
        Ok(catalog) => catalog,
        Err(not_configured) => return not_configured,
    };
    let words: Vec<String> = params
        .query
        .to_lowercase()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let found: Vec<&Value> = catalog
        .0
        .iter()
        .filter(|descriptor| {
            let text =
                format!("{} {}", descriptor["name"], descriptor["description"]).to_lowercase();
            words.iter().any(|word| text.contains(word.as_str()))
        })
        .collect();
    turn.activate_tools(
        found
            .iter()
            .filter_map(|d| d["name"].as_str().map(str::to_owned)),
    );
    ToolResult::success(json!({ "tools": found }))
}

/// Parameters of [`lookup_order()`].
#[derive(Params)]
pub struct OrderParams {
    /// The order id, e.g. `A-1`.
    pub order_id: String,
}

/// What [`lookup_order()`] returns.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub struct OrderStatus {
    /// The order id.
    pub order_id: String,
    /// `shipped` or `pending`.
    pub status: String,
}

/// Looks up an order's status by id. Unknown ids are `unknown-order`.
#[ability(
    effect = read,
    examples = [
        "where is my order",
        "status of order A-1",
        "has my parcel shipped",
        "track order",
        "look up an order",
        "is order B-2 pending",
    ],
)]
pub async fn lookup_order(params: OrderParams, turn: &Turn) -> ToolResult {
    turn.report_progress("opening the order book");
    turn.report_progress("reading the order");
    match params.order_id.as_str() {
        "A-1" => ToolResult::success(Body::json(&OrderStatus {
            order_id: "A-1".into(),
            status: "shipped".into(),
        })),
        other => ToolResult::error(
            "unknown-order",
            format!("no order `{other}`"),
            "pass an id like `A-1`",
        ),
    }
}

use chalie_core::result::Body;
declare_output!(lookup_order, OrderStatus);

/// Cancels an order by id; irreversible.
#[ability(
    effect = write,
    examples = [
        "cancel my order",
        "stop order A-1",
        "I don't want order B-2 any more",
        "call off the purchase",
        "cancel the parcel",
        "undo my order",
    ],
)]
pub async fn cancel_order(params: OrderParams) -> ToolResult {
    CANCELLED.lock().unwrap().push(params.order_id.clone());
    ToolResult::success(format!("cancelled {}", params.order_id))
}

/// Every order [`cancel_order()`] cancelled, in order: how a test sees
/// whether (and how often) the write ran.
pub static CANCELLED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// How many times `order_id` was cancelled.
pub fn cancelled(order_id: &str) -> usize {
    CANCELLED
        .lock()
        .unwrap()
        .iter()
        .filter(|id| *id == order_id)
        .count()
}

/// Rotates the service's signing keys; operators only.
#[ability(
    effect = write,
    discoverable = false,
    examples = [
        "rotate the keys",
        "new signing key",
        "roll the secrets",
        "rotate credentials",
        "refresh the signing key",
        "change the keys",
    ],
)]
pub async fn rotate_keys() -> ToolResult {
    ToolResult::success("rotated")
}

/// Named like the server's call proxy, to show the clash is refused; the
/// other tests leave it out of their registry.
#[ability(
    effect = read,
    discoverable = false,
    examples = [
        "call a tool",
        "run some tool",
        "invoke a tool",
        "use the tool",
        "call it",
        "proxy a call",
    ],
)]
pub async fn call_tool() -> ToolResult {
    ToolResult::success("clash")
}
