//! W3C trace context over MCP: a `traceparent` in a call's `_meta` becomes
//! the parent of the call's `execute_tool` span, and chalie's MCP client
//! sends the context of the span it calls from. Spans are captured the way
//! a host exports them: `tracing-opentelemetry` over an OpenTelemetry SDK
//! tracer, here with an exporter that keeps what it is given.

use std::sync::{Arc, Mutex};

use chalie_core::dispatch::ExternalTools;
use chalie_core::mcp::{Exposure, McpSource, ServerSpec};
use chalie_core::{Channel, ToolCall, Turn};
use opentelemetry::trace::{SpanId, TraceId, TracerProvider};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use rmcp::model::{CallToolRequestParams, RequestParamsMeta};
use serde_json::json;
use tracing_subscriber::layer::SubscriberExt;

use crate::{connect, dispatcher, server};

/// Keeps every span it is given.
#[derive(Debug, Clone, Default)]
struct Kept(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Kept {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        self.0.lock().unwrap().extend(batch);
        Ok(())
    }
}

impl Kept {
    /// The finished spans whose name starts with `name`.
    fn named(&self, name: &str) -> Vec<SpanData> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|span| span.name.starts_with(name))
            .cloned()
            .collect()
    }
}

/// Installs, on this thread, a subscriber exporting OpenTelemetry spans to
/// the returned [`Kept`]. Tests run on a current-thread runtime, so the
/// served side's tasks are traced too.
fn exporting() -> (Kept, tracing::subscriber::DefaultGuard) {
    let kept = Kept::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(kept.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("chalie-test")));
    (kept, tracing::subscriber::set_default(subscriber))
}

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

fn lookup(traceparent: Option<&str>) -> CallToolRequestParams {
    let arguments = json!({ "order_id": "A-1" }).as_object().unwrap().clone();
    let mut request = CallToolRequestParams::new("lookup_order").with_arguments(arguments);
    if let Some(traceparent) = traceparent {
        request.set_traceparent(traceparent);
    }
    request
}

#[tokio::test]
async fn an_incoming_traceparent_is_the_parent_of_the_execute_tool_span() {
    let (kept, _guard) = exporting();
    let client = connect(&server(Exposure::Full)).await;
    let peer = client.peer();
    peer.call_tool(lookup(Some(&format!("00-{TRACE}-{CALLER_SPAN}-01"))))
        .await
        .unwrap();
    let spans = kept.named("execute_tool");
    assert_eq!(spans.len(), 1, "{spans:?}");
    let span = &spans[0];
    assert_eq!(
        span.span_context.trace_id(),
        TraceId::from_hex(TRACE).unwrap()
    );
    assert_eq!(span.parent_span_id, SpanId::from_hex(CALLER_SPAN).unwrap());
    assert!(span.parent_span_is_remote);

    // Without one, or with a malformed one, the call joins no caller's trace
    // (its parent is whatever local span it runs in).
    for traceparent in [None, Some("00-not-a-trace-01")] {
        peer.call_tool(lookup(traceparent)).await.unwrap();
    }
    let spans = kept.named("execute_tool");
    assert_eq!(spans.len(), 3);
    for span in &spans[1..] {
        assert!(!span.parent_span_is_remote, "{span:?}");
        assert_ne!(
            span.span_context.trace_id(),
            TraceId::from_hex(TRACE).unwrap()
        );
    }
}

#[tokio::test]
async fn chalies_client_sends_the_context_of_the_calling_span() {
    let (kept, _guard) = exporting();
    let served = server(Exposure::Full);
    let http = served.serve_http(([127, 0, 0, 1], 0).into()).await.unwrap();
    let source = McpSource::connect(ServerSpec::http("inner", http.url()))
        .await
        .unwrap();
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
    let turn = Turn::builder(Channel::External)
        .pin(["inner__lookup_order"])
        .build();
    let done = outer
        .dispatch(
            &turn,
            ToolCall::new("inner__lookup_order", json!({ "order_id": "A-1" })),
        )
        .await;
    assert!(done.result.is_success(), "{}", done.envelope);
    http.shutdown().await.unwrap();

    let outer_span = kept.named("execute_tool inner__lookup_order");
    let inner_span = kept.named("execute_tool lookup_order");
    assert_eq!((outer_span.len(), inner_span.len()), (1, 1), "{:?}", kept.0);
    // The served call's span is the calling span's child, across the wire.
    let (outer_span, inner_span) = (&outer_span[0], &inner_span[0]);
    assert_eq!(
        inner_span.span_context.trace_id(),
        outer_span.span_context.trace_id()
    );
    assert_eq!(inner_span.parent_span_id, outer_span.span_context.span_id());
    assert!(inner_span.parent_span_is_remote);
}
