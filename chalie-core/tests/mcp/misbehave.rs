//! External MCP servers that misbehave: garbage on the wire, a flood of
//! notifications (with the result after it, or never), a malformed result,
//! an answer to another request, a process that dies halfway through a
//! line. Each call gives the model an error envelope with a code within
//! the call's timeout (or, for the flood that ends, the result), and the
//! next call to the same server works: the session goes on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chalie_core::mcp::{McpSource, ServerSpec};
use chalie_core::{Channel, Turn, dispatch::ExternalTools, dispatch::Policy, dispatch::Setting};
use chalie_core::{ToolCall, envelope::Envelope};
use serde_json::json;

use crate::dispatcher_with;
use crate::python::{python, script};

const TIMEOUT: Duration = Duration::from_secs(3);

async fn call(dispatcher: &chalie_core::Dispatcher, name: &str) -> (Envelope, String, Duration) {
    static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let run = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let turn = Turn::builder(Channel::External)
        .session_id("misbehave")
        .run_id(format!("misbehave-{run}"))
        .pin([name])
        .build();
    let started = Instant::now();
    let done = dispatcher
        .dispatch(&turn, ToolCall::new(name, json!({})))
        .await;
    (
        Envelope::parse(&done.envelope).unwrap(),
        done.envelope.clone(),
        started.elapsed(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misbehaving_server_gives_error_envelopes_in_time_and_the_session_goes_on() {
    let spec = ServerSpec::stdio(
        "bad",
        python().display().to_string(),
        [script("misbehaving_server.py").display().to_string()],
    )
    .with_timeout(TIMEOUT);
    let source: Arc<dyn ExternalTools> = Arc::new(McpSource::connect(spec).await.unwrap());
    let mut policy = Policy::new();
    for tool in [
        "echo",
        "garbage",
        "flood",
        "flood_forever",
        "bad_result",
        "wrong_id",
        "crash",
    ] {
        policy
            .set(Channel::External, &format!("bad__{tool}"), Setting::Allow)
            .unwrap();
    }
    let dispatcher = dispatcher_with(&[source], |builder| builder.policy(policy));

    // (tool, the codes a clear answer may carry; none: the result itself)
    let cases: [(&str, &[&str]); 6] = [
        ("bad__garbage", &["tool-timeout", "server-unavailable"]),
        ("bad__flood", &[]),
        ("bad__flood_forever", &["tool-timeout"]),
        (
            "bad__bad_result",
            &["server-unavailable", "tool-error", "protocol-error"],
        ),
        ("bad__wrong_id", &["tool-timeout", "server-unavailable"]),
        ("bad__crash", &["server-unavailable"]),
    ];
    for (tool, codes) in cases {
        let (answer, text, took) = call(&dispatcher, tool).await;
        // The timeout, and the time to stop and restart the server.
        assert!(
            took < TIMEOUT + Duration::from_secs(5),
            "{tool} took {took:?}"
        );
        if codes.is_empty() {
            assert!(answer.is_success(), "{tool}: {text}");
            assert!(text.contains("after the flood"), "{tool}: {text}");
        } else {
            let code = answer.code().unwrap_or_default();
            assert!(codes.contains(&code), "{tool}: code {code:?} in {text}");
        }
        // The same server answers the next call.
        let (next, text, _) = call(&dispatcher, "bad__echo").await;
        assert!(next.is_success(), "after {tool}: {text}");
        assert!(text.contains("still here"), "after {tool}: {text}");
    }
}
