//! What chalie adds to an MCP tool call over loopback, side by side with
//! rmcp alone, in one run. Both directions, each over streamable HTTP on
//! 127.0.0.1 with a trivial three-parameter tool:
//!
//! - `consume/rmcp_client`: rmcp's client calls an rmcp server's tool;
//!   `consume/chalie`: chalie's dispatcher calls the same tool on the same
//!   server through [`McpSource`] (schema validation, gate, envelope,
//!   trail) over its own rmcp client.
//! - `serve/rmcp_server`: rmcp's client calls that rmcp server;
//!   `serve/chalie_server`: it calls the same tool as a chalie ability
//!   served by [`McpServer`] (every call through the dispatcher).
//!
//! Run it with `cargo bench -p chalie-core --features mcp --bench mcp`.

use std::sync::Arc;
use std::time::Duration;

use chalie_core::mcp::{McpServer, McpSource, ServerSpec};
use chalie_core::{
    AbilityEntry, Channel, Dispatcher, Params, Registry, ToolCall, ToolResult, Turn, ability,
    dispatch::ExternalTools, dispatch::Policy, dispatch::Setting,
};
use criterion::{BatchSize, Criterion};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::{Value, json};

#[path = "support/estimates.rs"]
mod estimates;

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
    effect = read,
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

fn arguments() -> JsonObject {
    match json!({ "a": 2, "b": 3, "label": "total" }) {
        Value::Object(arguments) => arguments,
        _ => JsonObject::new(),
    }
}

/// Serves the rmcp server over streamable HTTP on a free loopback port.
async fn rmcp_http() -> String {
    let service = StreamableHttpService::new(
        || {
            Ok(Server {
                tool_router: Server::tool_router(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().with_sse_keep_alive(None),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("bound"));
    let router = axum::Router::new().nest_service("/mcp", service);
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

async fn client(url: &str) -> RunningService<RoleClient, ()> {
    ().serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .expect("an initialized client")
}

async fn call_text(client: &RunningService<RoleClient, ()>, name: &'static str) -> String {
    let params = CallToolRequestParams::new(name).with_arguments(arguments());
    match client.peer().call_tool(params).await {
        Ok(result) => result
            .content
            .first()
            .and_then(|content| content.as_text())
            .map(|text| text.text.clone())
            .unwrap_or_default(),
        Err(error) => error.to_string(),
    }
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");

    // One rmcp server; a direct rmcp client and chalie's source both use it.
    let (direct, source) = runtime.block_on(async {
        let url = rmcp_http().await;
        let direct = client(&url).await;
        let source = McpSource::connect(ServerSpec::http("bench", url))
            .await
            .expect("the source connects");
        (direct, source)
    });
    let mut policy = Policy::new();
    policy
        .set(Channel::External, "bench__add3", Setting::Allow)
        .expect("a valid permission");
    policy
        .set(Channel::External, "add3", Setting::Allow)
        .expect("a valid permission");
    let source: Arc<dyn ExternalTools> = Arc::new(source);
    let consumer = Dispatcher::builder(Registry::from_entries([]).expect("empty"))
        .policy(policy.clone())
        .without_rate_limit()
        .external_tools(source)
        .pin(Channel::External, ["bench__add3"])
        .build();
    // Reuse would answer a repeated read from memory: every iteration is
    // its own run, so each one crosses the wire.
    let run = std::sync::atomic::AtomicU64::new(0);
    let turn = || {
        let run = run.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Turn::builder(Channel::External)
            .run_id(format!("run-{run}"))
            .build()
    };

    // chalie serving the same tool as an ability.
    let served = runtime.block_on(async {
        let registry = Registry::from_entries([AbilityEntry::of::<add3>()]).expect("one ability");
        let dispatcher = Dispatcher::builder(registry)
            .policy(policy)
            .without_rate_limit()
            .build();
        let server = McpServer::builder(Arc::new(dispatcher))
            .exposure(chalie_core::mcp::Exposure::Full)
            .build()
            .expect("a server");
        let http = server
            .serve_http(([127, 0, 0, 1], 0).into())
            .await
            .expect("a loopback port");
        let client = client(&http.url()).await;
        (http, client)
    });

    // Same answer on every path before timing starts.
    runtime.block_on(async {
        let direct_text = call_text(&direct, "add3").await;
        assert_eq!(
            direct_text, "{\"sum\":5,\"label\":\"total\"}",
            "{direct_text}"
        );
        let done = consumer
            .dispatch(
                &turn(),
                ToolCall::new("bench__add3", Value::Object(arguments())),
            )
            .await;
        assert!(
            done.envelope.contains("{\"sum\":5,\"label\":\"total\"}"),
            "{}",
            done.envelope
        );
        let served_text = call_text(&served.1, "add3").await;
        assert!(
            served_text.contains("{\"sum\":5,\"label\":\"total\"}"),
            "{served_text}"
        );
    });

    let mut group = c.benchmark_group("consume");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.bench_function("rmcp_client", |b| {
        b.to_async(&runtime).iter(|| call_text(&direct, "add3"));
    });
    group.bench_function("chalie", |b| {
        b.to_async(&runtime).iter_batched(
            || (turn(), Value::Object(arguments())),
            |(turn, arguments)| {
                let consumer = &consumer;
                async move {
                    consumer
                        .dispatch(&turn, ToolCall::new("bench__add3", arguments))
                        .await
                        .envelope
                }
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();

    let mut group = c.benchmark_group("serve");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    group.bench_function("rmcp_server", |b| {
        b.to_async(&runtime).iter(|| call_text(&direct, "add3"));
    });
    group.bench_function("chalie_server", |b| {
        b.to_async(&runtime).iter(|| call_text(&served.1, "add3"));
    });
    group.finish();
    drop(served);
}

/// criterion's median of `group/name`, in microseconds.
fn median_us(group: &str, name: &str) -> Option<f64> {
    estimates::median_ns(group, name).map(|ns| ns / 1000.0)
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    for (group, base, chalie) in [
        ("consume", "rmcp_client", "chalie"),
        ("serve", "rmcp_server", "chalie_server"),
    ] {
        if let (Some(base_us), Some(chalie_us)) = (median_us(group, base), median_us(group, chalie))
        {
            println!(
                "{group}: {base} {base_us:.1} µs, {chalie} {chalie_us:.1} µs, chalie adds {:.1} µs ({:+.1}%)",
                chalie_us - base_us,
                (chalie_us / base_us - 1.0) * 100.0
            );
        }
    }
}
