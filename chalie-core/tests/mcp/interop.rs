//! The official Python SDK client drives chalie's MCP server, in both
//! exposure modes, over stdio and streamable HTTP.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use chalie_core::mcp::{CALL_PROXY, Exposure, McpServer};
use chalie_core::{dispatch::ExternalTools, envelope::Envelope};
use serde_json::{Value, json};

use crate::dispatcher;
use crate::python::{python, script, tool_server, tool_server_spec};

enum Over {
    Stdio,
    Http,
}

/// Runs `client_drive.py` against `server` and returns its report.
async fn drive(server: McpServer, mode: &str, over: Over, external: bool) -> Value {
    let report = std::env::temp_dir().join(format!(
        "chalie-mcp-report-{}-{mode}-{}.json",
        std::process::id(),
        matches!(over, Over::Http)
    ));
    let mut command = tokio::process::Command::new(python());
    command
        .arg(script("client_drive.py"))
        .args(["--mode", mode, "--report"])
        .arg(&report)
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    if external {
        command.arg("--external");
    }
    let status = match over {
        Over::Stdio => {
            let mut child = command
                .arg("--stdio")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            // The client speaks MCP on its stdout and stdin; serve there.
            let read = child.stdout.take().unwrap();
            let write = child.stdin.take().unwrap();
            let serving = tokio::spawn(async move { server.serve_io(read, write).await });
            let status = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;
            serving.abort();
            status
        }
        Over::Http => {
            let http = server.serve_http(([127, 0, 0, 1], 0).into()).await.unwrap();
            let mut child = command.args(["--url", &http.url()]).spawn().unwrap();
            let status = tokio::time::timeout(Duration::from_secs(60), child.wait()).await;
            http.shutdown().await.unwrap();
            status
        }
    };
    let status = status
        .expect("the Python client finished within 60 s")
        .unwrap();
    assert!(
        status.success(),
        "client_drive.py failed ({status}); its stderr is above"
    );
    let text = std::fs::read_to_string(&report).unwrap();
    let _ = std::fs::remove_file(&report);
    serde_json::from_str(&text).unwrap()
}

fn names(report: &Value) -> Vec<&str> {
    report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect()
}

/// What both modes must show the same way.
fn check_common(report: &Value) {
    assert_eq!(report["server"], "chalie");
    let lookup = &report["found"]["lookup_order"];
    assert_eq!(lookup["properties"]["order_id"]["type"], "string");

    let call = &report["call"];
    assert_eq!(call["is_error"], false, "{call}");
    let envelope = Envelope::parse(call["text"].as_str().unwrap()).unwrap();
    assert_eq!(envelope.json().unwrap()["status"], "shipped");

    let error = &report["error"];
    assert_eq!(error["is_error"], true, "{error}");
    let envelope = Envelope::parse(error["text"].as_str().unwrap()).unwrap();
    assert_eq!(envelope.code(), Some("unknown-order"));

    let denied = &report["denied"];
    assert_eq!(denied["is_error"], true, "{denied}");
    let envelope = Envelope::parse(denied["text"].as_str().unwrap()).unwrap();
    assert_eq!(envelope.code(), Some("permission-denied"));

    // Protocol misuse: a JSON-RPC error (-32602), not a result.
    assert_eq!(report["misuse"]["code"], -32602, "{}", report["misuse"]);
    assert_eq!(report["list_stable"], true);
}

fn check_full(report: &Value) {
    assert_eq!(
        names(report),
        ["cancel_order", "find_tools", "lookup_order"]
    );
    let lookup = &report["tools"][2];
    assert_eq!(lookup["read_only"], true);
    assert_eq!(lookup["has_output_schema"], true);
    assert_eq!(report["tools"][0]["destructive"], true);
    assert_eq!(
        report["call"]["structured"],
        json!({ "order_id": "A-1", "status": "shipped" })
    );
    check_common(report);
}

fn check_on_demand(report: &Value) {
    assert_eq!(names(report), [CALL_PROXY, "find_tools"]);
    check_common(report);
}

fn full_server() -> McpServer {
    McpServer::builder(dispatcher(&[]))
        .exposure(Exposure::Full)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_full_over_stdio() {
    let report = drive(full_server(), "full", Over::Stdio, false).await;
    check_full(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_full_over_http() {
    let report = drive(full_server(), "full", Over::Http, false).await;
    check_full(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_on_demand_over_stdio_reaches_a_python_server_through_chalie() {
    let source: Arc<dyn ExternalTools> = Arc::new(tool_server(tool_server_spec()).await);
    let server = McpServer::builder(dispatcher(&[source]))
        .exposure(Exposure::on_demand())
        .build()
        .unwrap();
    let report = drive(server, "on_demand", Over::Stdio, true).await;
    check_on_demand(&report);
    // Python client → chalie (proxy, gate, envelope) → Python server.
    assert!(
        report["found"].get("py__get_forecast").is_some(),
        "{}",
        report["found"]
    );
    let external = &report["external"];
    assert_eq!(external["is_error"], false, "{external}");
    let envelope = Envelope::parse(external["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        envelope.json().unwrap()["result"],
        "Rome: sunny for 2 day(s)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_client_on_demand_over_http() {
    let server = McpServer::builder(dispatcher(&[]))
        .exposure(Exposure::on_demand())
        .build()
        .unwrap();
    let report = drive(server, "on_demand", Over::Http, false).await;
    check_on_demand(&report);
}
