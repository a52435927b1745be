//! `--otlp URL`: the service's spans reach an OpenTelemetry collector over
//! OTLP/HTTP. A local collector records what is posted to `/v1/traces`;
//! the service runs one message whose model calls a tool, is stopped with
//! SIGTERM, and the collector holds the tool call's span under the
//! resource `service.name = "assistant"`. The batch waits ten minutes
//! before an export of its own, so only the stop's flush can have sent it.
//! A malformed URL stops the service at start with one line naming the
//! flag and an example; without a URL there is no exporter thread.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::HeaderMap;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{KeyValue, any_value};
use prost::Message;
use serde_json::json;

use super::{ALICE, Service, Workdir, open_session, send};

/// What the collector received: each export's content type and body.
type Exports = Arc<Mutex<Vec<(String, Bytes)>>>;

/// A collector accepting OTLP/HTTP trace exports; its base URL
/// `http://127.0.0.1:<port>` and the exports received.
async fn collector() -> (String, Exports) {
    let exports: Exports = Arc::default();
    let recorded = Arc::clone(&exports);
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let recorded = Arc::clone(&recorded);
            async move {
                let kind = headers
                    .get("content-type")
                    .and_then(|value| value.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                recorded.lock().unwrap().push((kind, body));
                // An empty ExportTraceServiceResponse: everything accepted.
                (
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, exports)
}

/// The string value of `key` among `attributes`.
fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attributes
        .iter()
        .find(|attribute| attribute.key == key)
        .and_then(
            |attribute| match attribute.value.as_ref()?.value.as_ref()? {
                any_value::Value::StringValue(value) => Some(value.as_str()),
                _ => None,
            },
        )
}

/// The names of the threads of process `pid` (Linux shows each thread's
/// name, cut to 15 bytes, in `/proc`).
#[cfg(target_os = "linux")]
fn threads(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_calls_span_reaches_the_collector_by_the_time_the_service_has_stopped() {
    let (url, exports) = collector().await;
    let work = Workdir::new();
    let script = work.script(
        "script.json",
        json!([
            { "toolCalls": [{ "name": "find_tools", "arguments": { "query": ["weather in Rome"] } }] },
            { "text": "Cloudy in Rome." },
        ]),
    );
    let service = Service::start(
        &work,
        &["--script", script.to_str().unwrap(), "--otlp", &url],
        // No export before the stop: what arrives, the stop's flush sent.
        &[("OTEL_BSP_SCHEDULE_DELAY", "600000")],
    );
    #[cfg(target_os = "linux")]
    assert!(
        threads(service.child.id())
            .iter()
            .any(|name| name.starts_with("OpenTelemetry")),
        "an exporter thread with --otlp: {:?}",
        threads(service.child.id())
    );
    let session = open_session(&service.base, ALICE, "approval").await;
    let (_, mut stream) = send(&service.base, ALICE, &session, "will it rain in Rome").await;
    let events = stream.until("run.settlement.completed").await;
    assert!(
        events.iter().any(|(name, _)| name == "tool.completed"),
        "{events:?}"
    );
    assert!(exports.lock().unwrap().is_empty(), "nothing exported yet");
    let log = service.log();
    assert!(service.terminate(), "the service exits cleanly on SIGTERM");

    let exports = exports.lock().unwrap().clone();
    assert!(
        !exports.is_empty(),
        "no export reached the collector\n{log}"
    );
    let mut spans = Vec::new();
    for (kind, body) in &exports {
        assert_eq!(kind, "application/x-protobuf");
        let request = ExportTraceServiceRequest::decode(body.as_ref())
            .expect("an OTLP ExportTraceServiceRequest");
        for resource_spans in request.resource_spans {
            let resource = resource_spans.resource.unwrap_or_default();
            for scope_spans in resource_spans.scope_spans {
                for span in scope_spans.spans {
                    spans.push((
                        attribute(&resource.attributes, "service.name").map(str::to_owned),
                        span,
                    ));
                }
            }
        }
    }
    let names: Vec<&str> = spans.iter().map(|(_, span)| span.name.as_str()).collect();
    let (service_name, tool_call) = spans
        .iter()
        .find(|(_, span)| span.name == "execute_tool find_tools")
        .unwrap_or_else(|| panic!("no tool call's span among {names:?}"));
    assert_eq!(service_name.as_deref(), Some("assistant"));
    assert_eq!(
        attribute(&tool_call.attributes, "gen_ai.tool.name"),
        Some("find_tools")
    );
    assert_eq!(
        attribute(&tool_call.attributes, "chalie.session.id"),
        Some(session.as_str())
    );
    // The tool call is a child of its run, in the same trace.
    let (_, run) = spans
        .iter()
        .find(|(_, span)| span.name == "invoke_agent")
        .unwrap_or_else(|| panic!("no run's span among {names:?}"));
    assert_eq!(tool_call.trace_id, run.trace_id);
    assert!(!tool_call.parent_span_id.is_empty());
}

#[test]
fn a_malformed_collector_url_stops_the_service_with_one_line_naming_the_flag() {
    let work = Workdir::new();
    let script = work.script("script.json", json!([{ "text": "hi" }]));
    let start = |otlp: Option<&str>, env: Option<&str>| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_assistant"));
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--users"])
            .arg(work.path("users.toml"))
            .arg("--db")
            .arg(work.path("db.sqlite"))
            .arg("--script")
            .arg(&script)
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT");
        if let Some(otlp) = otlp {
            command.args(["--otlp", otlp]);
        }
        if let Some(env) = env {
            command.env("OTEL_EXPORTER_OTLP_ENDPOINT", env);
        }
        let mut child = command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A service that accepted the URL would serve until stopped: it is
        // stopped here and the test fails, rather than waiting on it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the service started with {otlp:?} {env:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert!(!status.success(), "{otlp:?} {env:?}");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("e.g. --otlp http://127.0.0.1:4318"),
            "{stderr}"
        );
        stderr
    };
    for url in ["127.0.0.1:4318", "ftp://127.0.0.1:4318", "http://"] {
        let stderr = start(Some(url), None);
        assert!(stderr.starts_with("error: --otlp: "), "{stderr}");
        assert!(stderr.contains(url), "{stderr}");
    }
    // The standard variable, when it is what the user set, is named instead.
    let stderr = start(None, Some("localhost:4318"));
    assert!(
        stderr.starts_with("error: OTEL_EXPORTER_OTLP_ENDPOINT: "),
        "{stderr}"
    );
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_collector_url_there_is_no_exporter_thread() {
    let work = Workdir::new();
    let script = work.script("script.json", json!([{ "text": "hi" }]));
    let service = Service::start(&work, &["--script", script.to_str().unwrap()], &[]);
    let names = threads(service.child.id());
    assert!(!names.is_empty());
    assert!(
        !names.iter().any(|name| name.starts_with("OpenTelemetry")),
        "{names:?}"
    );
}
