//! Logs and spans: to stderr, filtered by `RUST_LOG` ([`log_filter`]); and with `--otlp URL`
//! (or `OTEL_EXPORTER_OTLP_ENDPOINT`) the same spans, runs (`invoke_agent`),
//! model requests and tool calls (`execute_tool <tool>`), to an
//! OpenTelemetry collector over OTLP/HTTP with protobuf bodies, under the
//! resource `service.name = "assistant"` (or `OTEL_SERVICE_NAME`).
//!
//! Spans are sent in batches from a thread of the exporter's own; the stop
//! (SIGTERM or Ctrl-C) sends what is left before the process exits, so no
//! finished span is lost. Without a collector URL there is no exporter and
//! no such thread: logs alone, as before.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;

/// The example every message about a bad collector URL gives.
pub const OTLP_EXAMPLE: &str = "--otlp http://127.0.0.1:4318";

/// The environment variable OpenTelemetry's SDKs read the collector's
/// base URL from; the service reads it when `--otlp` is not given.
pub const OTLP_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The path a collector receives OTLP/HTTP traces on, below its base URL.
const TRACES_PATH: &str = "/v1/traces";

/// What [`init`] installed; [`Telemetry::flush`] sends the spans not yet
/// exported, once the service has stopped.
#[must_use = "without `flush`, the spans of the last seconds are lost at exit"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Whether spans go to a collector.
    pub fn exports(&self) -> bool {
        self.provider.is_some()
    }

    /// Exports the spans still waiting in the batch and stops the
    /// exporter's thread; nothing without a collector. A collector that
    /// cannot be reached is logged, not an error: the service's work is done.
    pub async fn flush(self) {
        let Some(provider) = self.provider else {
            return;
        };
        // The shutdown waits for the exporter's thread, which sends over a
        // blocking HTTP client: off the async workers.
        let shutdown = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        match shutdown {
            Ok(Ok(())) => tracing::debug!("sent the last spans to the collector"),
            Ok(Err(error)) => tracing::warn!(%error, "the last spans did not reach the collector"),
            Err(error) => tracing::warn!(%error, "the span exporter's shutdown failed"),
        }
    }
}

/// What `RUST_LOG` lets through, in tracing-subscriber's `EnvFilter` syntax
/// (targets, levels, span and field directives); `info` without it. A
/// directive it cannot read stops the start rather than being dropped, so
/// a typo never silences the logs someone asked for.
pub fn log_filter(rust_log: Option<&str>) -> Result<tracing_subscriber::EnvFilter, String> {
    tracing_subscriber::EnvFilter::builder()
        .parse(rust_log.unwrap_or("info"))
        .map_err(|error| {
            format!(
                "RUST_LOG: {error}; e.g. RUST_LOG=info, RUST_LOG=chalie_core=debug,info or RUST_LOG='info,chalie_core[execute_tool]=debug'"
            )
        })
}

/// Installs the log subscriber, filtered by `RUST_LOG` (`info` without
/// it), and with `otlp` (a collector's base URL, named by `flag`: `--otlp`
/// or [`OTLP_ENV`]) the span exporter beside it.
pub fn init(otlp: Option<(&str, &str)>) -> Result<Telemetry, String> {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = log_filter(std::env::var("RUST_LOG").ok().as_deref())?;
    // The URL is checked before anything is installed: a typo stops the
    // service at start, not at its first export.
    let provider = match otlp {
        Some((flag, url)) => Some(provider(&traces_endpoint(flag, url)?)?),
        None => None,
    };
    let spans = provider
        .as_ref()
        .map(|provider| tracing_opentelemetry::layer().with_tracer(provider.tracer("assistant")));
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false),
        )
        .with(spans)
        .with(filter)
        .try_init()
        .map_err(|error| format!("cannot install the log subscriber: {error}"))?;
    Ok(Telemetry { provider })
}

/// A tracer provider that batches spans to the OTLP/HTTP `endpoint`.
fn provider(endpoint: &str) -> Result<SdkTracerProvider, String> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .build()
        .map_err(|error| format!("cannot build the OTLP exporter for {endpoint}: {error}"))?;
    // `OTEL_SERVICE_NAME` names the service when set (the SDK reads it);
    // otherwise it is the assistant, not the SDK's `unknown_service`.
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("assistant");
    }
    Ok(SdkTracerProvider::builder()
        .with_resource(resource.build())
        .with_batch_exporter(exporter)
        .build())
}

/// The URL traces are posted to, from a collector's base URL (`url`, as
/// `flag` gave it): `http://host:4318` becomes `http://host:4318/v1/traces`,
/// as OpenTelemetry's SDKs read `OTEL_EXPORTER_OTLP_ENDPOINT`; a URL that
/// already ends in `/v1/traces` is kept.
pub fn traces_endpoint(flag: &str, url: &str) -> Result<String, String> {
    let bad = |why: &str| {
        format!(
            "{flag}: `{url}` is not a collector URL ({why}); give the OTLP/HTTP collector's base URL, e.g. {OTLP_EXAMPLE}"
        )
    };
    let uri: axum::http::Uri = url
        .trim()
        .parse()
        .map_err(|error| bad(&format!("{error}")))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(other) => return Err(bad(&format!("scheme `{other}`, not http or https"))),
        None => return Err(bad("no http:// or https://")),
    }
    if uri.host().is_none_or(str::is_empty) {
        return Err(bad("no host"));
    }
    if uri.query().is_some() {
        return Err(bad("a query string"));
    }
    let base = format!(
        "{}://{}{}",
        uri.scheme_str().unwrap_or("http"),
        uri.authority().map_or("", |authority| authority.as_str()),
        uri.path().trim_end_matches('/')
    );
    Ok(if base.ends_with(TRACES_PATH) {
        base
    } else {
        format!("{base}{TRACES_PATH}")
    })
}

#[cfg(test)]
mod tests {
    use super::{log_filter, traces_endpoint};

    #[test]
    fn a_base_url_gets_the_traces_path() {
        for (url, endpoint) in [
            ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"),
            ("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"),
            (
                "https://otel.example/otlp",
                "https://otel.example/otlp/v1/traces",
            ),
            (
                "http://collector:4318/v1/traces",
                "http://collector:4318/v1/traces",
            ),
        ] {
            assert_eq!(traces_endpoint("--otlp", url).as_deref(), Ok(endpoint));
        }
    }

    #[test]
    fn a_bad_url_names_the_flag_and_an_example() {
        for url in [
            "127.0.0.1:4318",
            "localhost",
            "ftp://host:4318",
            "http://",
            "http://a b",
            "http://h:4318/?x=1",
            "",
        ] {
            let error = traces_endpoint("--otlp", url).expect_err(url);
            assert!(error.starts_with("--otlp: "), "{error}");
            assert!(
                error.contains("e.g. --otlp http://127.0.0.1:4318"),
                "{error}"
            );
        }
    }

    #[test]
    fn rust_log_reads_the_usual_syntax_and_refuses_a_typo() {
        // What a user of any tracing program writes: levels, targets, span
        // and field directives.
        for directives in [
            "info",
            "chalie_core=debug,info",
            "info,chalie_core[execute_tool]=debug",
            "warn,[invoke_agent{gen_ai.agent.name=assistant}]=trace",
        ] {
            assert!(log_filter(Some(directives)).is_ok(), "{directives}");
        }
        assert_eq!(
            log_filter(None).map(|filter| filter.to_string()).as_deref(),
            Ok("info")
        );
        for typo in ["chalie_core=loud", "info,[unclosed=debug"] {
            let error = log_filter(Some(typo)).expect_err(typo);
            assert!(error.starts_with("RUST_LOG: "), "{error}");
            assert!(error.contains("e.g. RUST_LOG=info"), "{error}");
        }
    }
}
