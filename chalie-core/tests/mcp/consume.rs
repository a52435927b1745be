//! External MCP servers consumed through the dispatcher: a server written
//! with the official Python SDK, its tools discovered, called, gated, and
//! its failures handled.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chalie_core::mcp::{McpConfig, McpSource, SourceEvent, Transport};
use chalie_core::{Channel, Effect, ToolCall, Turn, dispatch::ExternalTools, envelope::Envelope};
use serde_json::{Value, json};

use crate::dispatcher;
use crate::python::{tool_server, tool_server_spec};

/// A turn of its own run, so no call reuses an earlier read's result.
///
/// **Widens reachability**: the turn is pinned the tool it calls, since
/// these tests are about consuming the external server; the discovery
/// test below reaches its tool through `find_tools` instead.
fn turn(pinned: &str) -> Turn {
    static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let run = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Turn::builder(Channel::External)
        .session_id("consume")
        .run_id(format!("run-{run}"))
        .pin([pinned])
        .build()
}

/// Dispatches `name` on a fresh turn pinned to it (see [`turn`]).
async fn dispatch(
    dispatcher: &chalie_core::Dispatcher,
    name: &str,
    arguments: Value,
) -> (Envelope, chalie_core::dispatch::Dispatched) {
    let done = dispatcher
        .dispatch(&turn(name), ToolCall::new(name, arguments))
        .await;
    (Envelope::parse(&done.envelope).unwrap(), done)
}

#[tokio::test]
async fn the_servers_tools_become_qualified_snake_case_abilities() {
    let source = tool_server(tool_server_spec()).await;
    let tools = source.tools();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "py__delete_file",
            "py__explode",
            "py__get_forecast",
            "py__get_forecast_2",
            "py__hang",
            "py__pid",
            "py__slow",
        ]
    );
    // `get-forecast` and `get.forecast` collide; the report says so and the
    // original names are kept for the call.
    let collisions = source.collisions();
    assert_eq!(collisions.len(), 1);
    assert_eq!(collisions[0].mapped, "py__get_forecast");
    assert_eq!(collisions[0].originals, ["get-forecast", "get.forecast"]);
    assert_eq!(
        source.original_name("py__get_forecast_2").as_deref(),
        Some("get.forecast")
    );
    assert_eq!(
        source.original_name("py__delete_file").as_deref(),
        Some("delete.file")
    );

    let effect = |name: &str| tools.iter().find(|tool| tool.name == name).unwrap().effect;
    assert_eq!(effect("py__get_forecast"), Effect::Read);
    assert_eq!(effect("py__delete_file"), Effect::Write);

    // Descriptors as data for the index: the name after `py__`, the server.
    let descriptors = source.descriptors();
    let forecast = descriptors
        .iter()
        .find(|d| d["name"] == "get_forecast")
        .unwrap();
    // The entry `cargo xtask index --external` reads; the index qualifies it
    // back to `py__get_forecast`.
    assert_eq!(forecast["server"], "py");
    assert_eq!(forecast["input_schema"]["required"], json!(["city"]));
    assert_eq!(
        forecast["summary"],
        "Weather forecast for a city, some days ahead."
    );
    source.disconnect().await;
}

#[tokio::test]
async fn found_by_find_tools_called_through_the_dispatcher_and_gated() {
    let source: Arc<dyn ExternalTools> = Arc::new(tool_server(tool_server_spec()).await);
    let dispatcher = dispatcher(&[Arc::clone(&source)]);

    // One turn, nothing pinned: the external tool is out of reach until
    // `find_tools` finds it.
    let discovering = Turn::builder(Channel::External)
        .session_id("consume-discovery")
        .build();
    let unfound = dispatcher
        .dispatch(
            &discovering,
            ToolCall::new("py__get_forecast", json!({ "city": "Rome", "days": 2 })),
        )
        .await;
    assert_eq!(
        unfound.refusal(),
        Some(chalie_core::dispatch::Refusal::NotAvailable)
    );
    let found = dispatcher
        .dispatch(
            &discovering,
            ToolCall::new("find_tools", json!({ "query": "forecast" })),
        )
        .await;
    let found = Envelope::parse(&found.envelope).unwrap().json().unwrap();
    let forecast = found["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "py__get_forecast")
        .unwrap();
    assert_eq!(
        forecast["parameters"]["properties"]["city"]["type"],
        "string"
    );

    let done = dispatcher
        .dispatch(
            &discovering,
            ToolCall::new("py__get_forecast", json!({ "city": "Rome", "days": 2 })),
        )
        .await;
    let called = Envelope::parse(&done.envelope).unwrap();
    assert!(called.is_success(), "{}", done.envelope);
    assert_eq!(called.json().unwrap()["result"], "Rome: sunny for 2 day(s)");
    assert_eq!(done.record().permission, "py__get_forecast");

    // The server's input schema is checked before the server is called.
    let (invalid, done) = dispatch(&dispatcher, "py__get_forecast", json!({ "days": 2 })).await;
    assert_eq!(
        invalid.code(),
        Some("invalid-arguments"),
        "{}",
        done.envelope
    );

    // A write left at `ask` is denied on the external channel.
    let (denied, _) = dispatch(&dispatcher, "py__delete_file", json!({ "path": "/tmp/x" })).await;
    assert_eq!(denied.code(), Some("permission-denied"));

    // The collided name calls the server's own `get.forecast`.
    dispatcher
        .policy()
        .set(
            Channel::External,
            "py__get_forecast_2",
            chalie_core::dispatch::Setting::Allow,
        )
        .unwrap();
    let (legacy, _) = dispatch(&dispatcher, "py__get_forecast_2", json!({ "city": "Oslo" })).await;
    assert_eq!(legacy.json().unwrap()["result"], "Oslo: sunny (legacy)");
}

#[tokio::test]
async fn an_exception_is_an_error_envelope() {
    let source: Arc<dyn ExternalTools> = Arc::new(tool_server(tool_server_spec()).await);
    let dispatcher = dispatcher(&[source]);
    let (failed, done) = dispatch(&dispatcher, "py__explode", json!({})).await;
    assert_eq!(
        failed.code(),
        Some("external-tool-error"),
        "{}",
        done.envelope
    );
    // The SDK hides an unexpected exception's text; it still says which tool failed.
    assert!(
        failed.content.contains("Error executing tool explode"),
        "{}",
        done.envelope
    );
}

fn recording() -> (Arc<Mutex<Vec<SourceEvent>>>, chalie_core::mcp::EventSink) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink_events = Arc::clone(&events);
    let sink: chalie_core::mcp::EventSink =
        Arc::new(move |event| sink_events.lock().unwrap().push(event));
    (events, sink)
}

fn degraded(events: &Mutex<Vec<SourceEvent>>) -> Vec<&'static str> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            SourceEvent::Degraded { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_slow_tool_times_out_with_a_retry_hint_and_the_server_stays_usable() {
    let (events, sink) = recording();
    let spec = tool_server_spec().with_timeout(Duration::from_millis(1500));
    let source: Arc<dyn ExternalTools> = Arc::new(
        McpSource::connect_with_events(spec, Some(sink))
            .await
            .unwrap(),
    );
    let dispatcher = dispatcher(&[source]);

    let started = Instant::now();
    let (late, done) = dispatch(&dispatcher, "py__slow", json!({ "seconds": 30 })).await;
    assert!(started.elapsed() < Duration::from_secs(10), "the turn hung");
    assert_eq!(late.code(), Some("tool-timeout"), "{}", done.envelope);
    assert_eq!(
        done.result.as_error().unwrap().retry(),
        Some(chalie_core::result::Retry::Now)
    );
    assert!(late.hint().unwrap().contains("retry"), "{}", done.envelope);
    assert_eq!(degraded(&events), ["timeout"]);

    let (quick, done) = dispatch(&dispatcher, "py__slow", json!({ "seconds": 0.01 })).await;
    assert!(quick.is_success(), "{}", done.envelope);
}

#[tokio::test]
async fn a_server_killed_mid_call_is_reported_and_the_next_call_reconnects() {
    let (events, sink) = recording();
    let spec = tool_server_spec().with_timeout(Duration::from_secs(20));
    let source: Arc<dyn ExternalTools> = Arc::new(
        McpSource::connect_with_events(spec, Some(sink))
            .await
            .unwrap(),
    );
    let dispatcher = dispatcher(&[source]);

    let (pid, _) = dispatch(&dispatcher, "py__pid", json!({})).await;
    let pid = pid.json().unwrap()["result"].as_str().unwrap().to_owned();

    let hanging = {
        let dispatcher = Arc::clone(&dispatcher);
        tokio::spawn(async move { dispatch(&dispatcher, "py__hang", json!({})).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let (lost, done) = hanging.await.unwrap();
    // Well before the 20 s timeout: the closed pipe ends the call.
    assert!(started.elapsed() < Duration::from_secs(10), "the turn hung");
    assert_eq!(lost.code(), Some("server-unavailable"), "{}", done.envelope);
    assert_eq!(
        done.result.as_error().unwrap().retry(),
        Some(chalie_core::result::Retry::Now)
    );
    assert_eq!(degraded(&events), ["disconnected"]);

    // The next call starts the server again.
    let (again, done) = dispatch(&dispatcher, "py__pid", json!({})).await;
    assert!(again.is_success(), "{}", done.envelope);
    assert_ne!(again.json().unwrap()["result"].as_str().unwrap(), pid);
}

#[test]
fn the_config_file_names_servers_and_rejects_ambiguity() {
    let config = McpConfig::from_toml(
        r#"
        [servers.Weather-API]
        command = "python3"
        args = ["weather.py"]
        timeout_secs = 2.5

        [servers.search]
        url = "http://127.0.0.1:8000/mcp"
        "#,
    )
    .unwrap();
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["search", "weather_api"]);
    assert_eq!(config.servers[1].timeout, Duration::from_millis(2500));
    assert!(
        matches!(&config.servers[0].transport, Transport::Http { url } if url.ends_with("/mcp"))
    );

    let both =
        McpConfig::from_toml("[servers.x]\ncommand = \"a\"\nurl = \"http://b\"\n").unwrap_err();
    assert!(
        both.to_string().contains("exactly one of `command`"),
        "{both}"
    );
    let clash = McpConfig::from_toml(
        "[servers.my-srv]\ncommand = \"a\"\n[servers.my_srv]\ncommand = \"b\"\n",
    )
    .unwrap_err();
    assert!(
        clash.to_string().contains("share the prefix `my_srv__`"),
        "{clash}"
    );
    let typo = McpConfig::from_toml("[servers.x]\ncomand = \"a\"\n").unwrap_err();
    assert!(typo.to_string().contains("comand"), "{typo}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chalie_server_over_http_is_a_source_too() {
    // chalie consuming chalie: the inner dispatcher gates and renders, the
    // outer one validates, gates and renders again under `inner__...`.
    let served = crate::server(chalie_core::mcp::Exposure::Full);
    let http = served.serve_http(([127, 0, 0, 1], 0).into()).await.unwrap();
    let (events, sink) = recording();
    let source = McpSource::connect_with_events(
        chalie_core::mcp::ServerSpec::http("inner", http.url()),
        Some(sink),
    )
    .await
    .unwrap();
    let names: Vec<String> = source.tools().into_iter().map(|tool| tool.name).collect();
    assert_eq!(
        names,
        [
            "inner__cancel_order",
            "inner__find_tools",
            "inner__lookup_order"
        ]
    );
    // The served hints decide the effect: a read stays a read.
    let lookup = source
        .tools()
        .into_iter()
        .find(|t| t.name == "inner__lookup_order")
        .unwrap();
    assert_eq!(lookup.effect, Effect::Read);

    // A running process can list again; the same tools come back.
    source.refresh().await.unwrap();
    assert_eq!(source.tools().len(), 3);
    let connected = events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| matches!(event, SourceEvent::Connected { tools: 3, .. }))
        .count();
    assert_eq!(connected, 2);

    let source: Arc<dyn ExternalTools> = Arc::new(source);
    let outer = dispatcher(&[source]);
    outer
        .policy()
        .set(
            Channel::External,
            "inner__lookup_order",
            chalie_core::dispatch::Setting::Allow,
        )
        .unwrap();
    outer
        .policy()
        .set(
            Channel::External,
            "inner__cancel_order",
            chalie_core::dispatch::Setting::Allow,
        )
        .unwrap();
    let (found, done) = dispatch(&outer, "inner__lookup_order", json!({ "order_id": "A-1" })).await;
    // The structured content the inner server declared is the body.
    assert_eq!(
        found.json().unwrap()["status"],
        "shipped",
        "{}",
        done.envelope
    );
    // The outer policy allows the write; the inner one still denies it, and
    // its envelope reaches the model inside the outer error.
    let (denied, done) =
        dispatch(&outer, "inner__cancel_order", json!({ "order_id": "A-1" })).await;
    assert_eq!(
        denied.code(),
        Some("external-tool-error"),
        "{}",
        done.envelope
    );
    assert!(
        denied.content.contains("permission-denied"),
        "{}",
        done.envelope
    );
    http.shutdown().await.unwrap();
}
