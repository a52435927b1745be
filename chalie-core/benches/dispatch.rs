//! The whole dispatch path for a trivial three-parameter tool, JSON
//! arguments in and the text the model reads out, through chalie's
//! dispatcher and through rmcp's tool router (`ToolRouter::call`), side by
//! side in one run.
//!
//! Both sides get the same JSON arguments as a parsed `Value` (a provider
//! hands them over parsed), parse them into the same typed struct, run the
//! same body (a two-key JSON object) and hand back the text the model reads,
//! owned. chalie's path does more than rmcp's: resolve, framework fields,
//! tags, the permission gate, the reuse cache, panic catching, the envelope
//! and the trail record. The rate limit is off: at its default of 30 calls
//! a minute it would refuse almost every call here, and rmcp has none.
//!
//! Each chalie call gets a fresh turn, built and dropped outside the timing
//! (a turn spans many calls; dropping it is per turn, not per call), while
//! the call's own record on its trail is timed. rmcp's per-request context
//! is part of its call and timed.
//!
//! The `chalie_traced` row is the chalie row with a `tracing` subscriber
//! installed (the registry, no layer), so each call's `execute_tool` span
//! is built and its attributes recorded; beside the `chalie` row, with no
//! subscriber, it gives the span's cost per call.
//!
//! Run it with `cargo bench -p chalie-core --bench dispatch`.

use std::time::Duration;

use chalie_core::{
    AbilityEntry, Channel, Dispatcher, Params, Registry, ToolCall, ToolResult, Turn, ability,
    dispatch::Policy, dispatch::Setting,
};
use criterion::{BatchSize, Criterion};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ContentBlock, NumberOrString};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::{Value, json};

#[path = "support/estimates.rs"]
mod estimates;

use estimates::median_ns;

/// Parameters of [`add3()`].
#[derive(Params)]
struct Add3Params {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
    /// A label echoed back.
    label: String,
}

/// Adds two numbers and echoes a label; the bench's trivial tool.
#[ability(
    examples = ["add two numbers", "what is 2 plus 3", "sum these", "add a and b", "compute a total", "plus"],
)]
async fn add3(params: Add3Params) -> ToolResult {
    ToolResult::success(json!({ "sum": params.a + params.b, "label": params.label }))
}

/// The same parameters for rmcp.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add3Request {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
    /// A label echoed back.
    label: String,
}

#[derive(Clone)]
struct Server {
    tool_router: ToolRouter<Self>,
}

#[tool_router(router = tool_router)]
impl Server {
    /// Adds two numbers and echoes a label.
    #[tool(description = "Adds two numbers and echoes a label.")]
    async fn add3(&self, Parameters(request): Parameters<Add3Request>) -> String {
        json!({ "sum": request.a + request.b, "label": request.label }).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {}

fn arguments() -> Value {
    json!({ "a": 2, "b": 3, "label": "total" })
}

/// What every row runs against, built before anything is timed or counted.
struct Setup {
    runtime: tokio::runtime::Runtime,
    dispatcher: Dispatcher,
    server: Server,
    peer: rmcp::service::Peer<RoleServer>,
    // Keeps rmcp's service (and so the peer) alive.
    _running: rmcp::service::RunningService<RoleServer, Server>,
}

fn setup() -> Setup {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");

    let registry = Registry::from_entries([AbilityEntry::of::<add3>()]).expect("one ability");
    let mut policy = Policy::new();
    policy
        .set(Channel::Chat, "add3", Setting::Allow)
        .expect("a valid permission");
    // Pinned: the bench program seeds its own calls, with no find_tools.
    let dispatcher = Dispatcher::builder(registry)
        .policy(policy)
        .pin(Channel::Chat, ["add3"])
        .without_rate_limit()
        .build();

    let server = Server {
        tool_router: Server::tool_router(),
    };
    // A tool call context needs a peer, which only a running service has:
    // serve over an in-memory pipe nobody writes to, and keep it alive.
    let (server_io, _client_io) = tokio::io::duplex(4096);
    let running =
        runtime.block_on(async { rmcp::service::serve_directly(server.clone(), server_io, None) });
    let peer = running.peer().clone();

    // Every row produces the same text before anything is timed.
    let chalie_text = runtime.block_on(chalie_call(
        &dispatcher,
        &Turn::builder(Channel::Chat).build(),
        arguments(),
    ));
    assert!(
        chalie_text.contains("{\"sum\":5,\"label\":\"total\"}"),
        "{chalie_text}"
    );
    assert_eq!(floor_call(arguments()), "{\"sum\":5,\"label\":\"total\"}");
    Setup {
        runtime,
        dispatcher,
        server,
        peer,
        _running: running,
    }
}

/// The floor: the same typed parse, body and serialisation, no framework.
fn floor_call(arguments: Value) -> String {
    let request: Add3Request = serde_json::from_value(arguments).expect("valid arguments");
    json!({ "sum": request.a + request.b, "label": request.label }).to_string()
}

async fn chalie_call(dispatcher: &Dispatcher, turn: &Turn, arguments: Value) -> String {
    dispatcher
        .dispatch(turn, ToolCall::new("add3", arguments))
        .await
        .envelope
}

async fn rmcp_call(
    server: &Server,
    peer: &rmcp::service::Peer<RoleServer>,
    arguments: serde_json::Map<String, Value>,
) -> String {
    let params = CallToolRequestParams::new("add3").with_arguments(arguments);
    let context = RequestContext::<RoleServer>::new(NumberOrString::Number(1), peer.clone());
    let call = ToolCallContext::new(server, params, context);
    // The text moves out, as chalie's envelope does.
    match server.tool_router.call(call).await {
        Ok(CallToolResponse::Complete(result)) => match result.content.into_iter().next() {
            Some(ContentBlock::Text(text)) => text.text,
            _ => String::new(),
        },
        _ => String::new(),
    }
}

fn object(arguments: Value) -> serde_json::Map<String, Value> {
    match arguments {
        Value::Object(arguments) => arguments,
        _ => unreachable!("an object"),
    }
}

// The counted functions: `cargo xtask bench-dispatch` has callgrind count
// the instructions inside each (inputs built before, outputs dropped after).

#[inline(never)]
fn counted_floor(inputs: Vec<Value>) -> Vec<String> {
    inputs.into_iter().map(floor_call).collect()
}

#[inline(never)]
fn counted_rmcp(setup: &Setup, inputs: Vec<serde_json::Map<String, Value>>) -> Vec<String> {
    setup.runtime.block_on(async {
        let mut out = Vec::with_capacity(inputs.len());
        for arguments in inputs {
            out.push(rmcp_call(&setup.server, &setup.peer, arguments).await);
        }
        out
    })
}

#[inline(never)]
fn counted_chalie(setup: &Setup, inputs: Vec<(Turn, Value)>) -> (Vec<Turn>, Vec<String>) {
    setup.runtime.block_on(async {
        let mut turns = Vec::with_capacity(inputs.len());
        let mut out = Vec::with_capacity(inputs.len());
        for (turn, arguments) in inputs {
            out.push(chalie_call(&setup.dispatcher, &turn, arguments).await);
            // Dropped outside the count: a turn spans many calls.
            turns.push(turn);
        }
        (turns, out)
    })
}

#[inline(never)]
fn counted_chalie_traced(setup: &Setup, inputs: Vec<(Turn, Value)>) -> (Vec<Turn>, Vec<String>) {
    counted_chalie(setup, inputs)
}

/// A subscriber that enables every span and keeps its data, and nothing
/// more: what any subscriber pays at least.
fn subscriber() -> impl tracing::Subscriber + Send + Sync {
    tracing_subscriber::registry()
}

/// Runs `calls` calls of `row` inside its counted function, for callgrind.
fn count(row: &str, calls: usize) {
    let setup = setup();
    let outputs = match row {
        "floor" => counted_floor((0..calls).map(|_| arguments()).collect()).len(),
        "rmcp" => counted_rmcp(&setup, (0..calls).map(|_| object(arguments())).collect()).len(),
        "chalie" => {
            let inputs = (0..calls)
                .map(|_| (Turn::builder(Channel::Chat).build(), arguments()))
                .collect();
            counted_chalie(&setup, inputs).1.len()
        }
        "chalie_traced" => {
            let inputs = (0..calls)
                .map(|_| (Turn::builder(Channel::Chat).build(), arguments()))
                .collect();
            // Installed before the count, so only the spans are counted.
            let _subscriber = tracing::subscriber::set_default(subscriber());
            counted_chalie_traced(&setup, inputs).1.len()
        }
        other => {
            panic!("unknown row `{other}`; expected floor, rmcp, chalie or chalie_traced")
        }
    };
    assert_eq!(outputs, calls);
}

fn bench(c: &mut Criterion) {
    let Setup {
        runtime,
        dispatcher,
        server,
        peer,
        _running: running,
    } = setup();

    let mut group = c.benchmark_group("dispatch");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("floor", |b| {
        b.iter_batched(arguments, floor_call, BatchSize::SmallInput);
    });
    group.bench_function("chalie", |b| {
        b.to_async(&runtime).iter_batched(
            || (Turn::builder(Channel::Chat).build(), arguments()),
            |(turn, arguments)| {
                let dispatcher = &dispatcher;
                async move {
                    let envelope = chalie_call(dispatcher, &turn, arguments).await;
                    // Criterion drops what the routine returns after timing.
                    (turn, envelope)
                }
            },
            BatchSize::SmallInput,
        );
    });
    tracing::subscriber::with_default(subscriber(), || {
        group.bench_function("chalie_traced", |b| {
            b.to_async(&runtime).iter_batched(
                || (Turn::builder(Channel::Chat).build(), arguments()),
                |(turn, arguments)| {
                    let dispatcher = &dispatcher;
                    async move {
                        let envelope = chalie_call(dispatcher, &turn, arguments).await;
                        (turn, envelope)
                    }
                },
                BatchSize::SmallInput,
            );
        });
    });
    group.bench_function("rmcp", |b| {
        b.to_async(&runtime).iter_batched(
            || object(arguments()),
            |arguments| {
                let (server, peer) = (&server, &peer);
                async move { rmcp_call(server, peer, arguments).await }
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
    drop(running);
}

fn main() {
    if let Ok(row) = std::env::var("CHALIE_DISPATCH_COUNT") {
        let calls = std::env::var("CHALIE_DISPATCH_CALLS")
            .ok()
            .and_then(|calls| calls.parse().ok())
            .unwrap_or(20_000);
        count(&row, calls);
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    if let (Some(chalie), Some(rmcp)) = (
        median_ns("dispatch", "chalie"),
        median_ns("dispatch", "rmcp"),
    ) {
        println!(
            "medians: chalie {chalie:.0} ns, rmcp {rmcp:.0} ns, ratio {:.2} (goal <= 0.5)",
            chalie / rmcp
        );
    }
}
