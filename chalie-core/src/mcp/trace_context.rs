//! W3C trace context over MCP (`traceparent` in a request's `_meta`,
//! SEP-414): a call that arrives with one joins the caller's trace, and a
//! call chalie makes carries the context of the span it runs in. Spans
//! are `tracing` spans; their OpenTelemetry identity is what the host's
//! `tracing-opentelemetry` layer gives them, so without that layer there
//! is no context to join or send and nothing changes.

use opentelemetry::Context;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The remote parent a `traceparent` names, or `None` when the header is
/// malformed (a bad header is ignored, as W3C trace context asks).
pub(crate) fn parent(traceparent: &str) -> Option<Context> {
    let mut parts = traceparent.trim().split('-');
    let (version, trace_id, span_id, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    // Version 00 has exactly four fields; a later version may add more.
    let exact = version == "00";
    if !is_hex(version, 2) || version == "ff" || (exact && parts.next().is_some()) {
        return None;
    }
    if !is_hex(trace_id, 32) || !is_hex(span_id, 16) || !is_hex(flags, 2) {
        return None;
    }
    let trace_id = TraceId::from_hex(trace_id).ok()?;
    let span_id = SpanId::from_hex(span_id).ok()?;
    let flags = u8::from_str_radix(flags, 16).ok()?;
    let context = SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(flags & TraceFlags::SAMPLED.to_u8()),
        true,
        TraceState::default(),
    );
    context
        .is_valid()
        .then(|| Context::new().with_remote_span_context(context))
}

/// The `traceparent` of the current span, when it has an OpenTelemetry
/// identity.
pub(crate) fn current() -> Option<String> {
    let context = tracing::Span::current().context();
    let span = context.span();
    let span = span.span_context();
    span.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            span.trace_id(),
            span.span_id(),
            span.trace_flags().to_u8()
        )
    })
}

/// Lowercase hex of exactly `len` characters, as the header requires.
fn is_hex(field: &str, len: usize) -> bool {
    field.len() == len
        && field
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(header: &str) -> Option<(String, String, bool)> {
        let context = parent(header)?;
        let span = context.span();
        let span = span.span_context();
        Some((
            span.trace_id().to_string(),
            span.span_id().to_string(),
            span.is_sampled(),
        ))
    }

    #[test]
    fn a_well_formed_header_names_the_remote_parent() {
        assert_eq!(
            ids("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            Some((
                "4bf92f3577b34da6a3ce929d0e0e4736".to_owned(),
                "00f067aa0ba902b7".to_owned(),
                true
            ))
        );
        // A later version may carry more fields after the four known ones.
        assert!(ids("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-extra").is_some());
    }

    #[test]
    fn a_malformed_header_is_ignored() {
        for header in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
        ] {
            assert!(ids(header).is_none(), "{header:?}");
        }
    }
}
