//! One `tracing` span per call, named and attributed as the OpenTelemetry
//! GenAI semantic conventions name a tool execution, plus chalie's own
//! attributes. Nothing is recorded unless a subscriber is installed, and
//! arguments and results only when the host opts in.

use tracing::Instrument;
use tracing::field::Empty;

use super::call::{Dispatched, ToolCall};
use super::{Dispatcher, GateHook};
use crate::Turn;

/// The span a call's `execute_tool` span continues: the caller's, named by
/// the `traceparent` an MCP request carried.
#[cfg(feature = "mcp")]
pub(crate) struct RemoteParent(pub(crate) opentelemetry::Context);

/// The target of the `execute_tool` span.
const TARGET: &str = "chalie::dispatch";

/// Whether a subscriber would record a call's `execute_tool` span: the
/// caller's trace context is worth reading only then.
#[cfg(feature = "mcp")]
pub(crate) fn spans_enabled() -> bool {
    tracing::enabled!(
        kind: tracing::metadata::Kind::SPAN,
        target: TARGET,
        tracing::Level::INFO
    )
}

pub(crate) async fn traced(
    dispatcher: &Dispatcher,
    turn: &Turn,
    call: ToolCall<'_>,
    hook: Option<&dyn GateHook>,
) -> Dispatched {
    let span = tracing::info_span!(
        target: TARGET,
        "execute_tool",
        "otel.name" = Empty,
        "otel.status_code" = Empty,
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = &*call.name,
        "gen_ai.tool.call.id" = Empty,
        "gen_ai.tool.call.arguments" = Empty,
        "gen_ai.tool.call.result" = Empty,
        "chalie.channel" = turn.channel().as_str(),
        "chalie.session.id" = turn.session_id(),
        "chalie.run.id" = turn.run_id(),
        "chalie.permission" = Empty,
        "chalie.gate.decision" = Empty,
        "chalie.status" = Empty,
        "error.type" = Empty,
        "chalie.background" = Empty,
        "chalie.reused" = Empty,
    );
    // Without a subscriber the span is disabled: no formatting at all.
    if span.is_disabled() {
        return dispatcher.dispatch_untraced(turn, call, hook).await;
    }
    #[cfg(feature = "mcp")]
    if let Some(RemoteParent(parent)) = turn.extension::<RemoteParent>() {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        // Without an OpenTelemetry layer there is no trace to join.
        let _ = span.set_parent(parent.clone());
    }
    span.record("otel.name", format!("execute_tool {}", call.name));
    if dispatcher.trace_payloads {
        span.record(
            "gen_ai.tool.call.arguments",
            call.arguments.to_string().as_str(),
        );
    }
    let done = dispatcher
        .dispatch_untraced(turn, call, hook)
        .instrument(span.clone())
        .await;
    let record = done.record();
    span.record("gen_ai.tool.call.id", done.call_id());
    span.record("chalie.permission", record.permission.as_str());
    span.record("chalie.gate.decision", record.decision.as_str());
    span.record("chalie.status", record.status.as_str());
    span.record("chalie.background", record.background);
    span.record("chalie.reused", record.reused);
    if let Some(code) = &record.error_code {
        span.record("error.type", code.as_str());
        span.record("otel.status_code", "ERROR");
    }
    if dispatcher.trace_payloads {
        span.record("gen_ai.tool.call.result", done.envelope.as_str());
    }
    done
}
