//! The smoke checks find what they promise: an uncapped large output, an
//! example call that does not match its schema or fails, missing host
//! state; and pass abilities that do it right.

// A failed unwrap is a failed test, with its line.
#![allow(clippy::unwrap_used)]

use chalie_core::{
    Params, Registry, ToolResult, Turn, ability, contracts::Cursor, contracts::CursorKey,
    contracts::MaxChars, contracts::Scratchpad, contracts::ScratchpadLimits, contracts::cap_result,
    contracts::read_more,
};
use chalie_testkit::{Smoke, SmokeReport};
use serde_json::json;

/// Dumps the whole service log at once, with no cap. Use it when the user
/// asks for the log; it returns every line.
#[ability(
    effect = read,
    examples = ["show the log", "dump the log", "print the service log", "the whole log", "all log lines", "log please"],
)]
async fn dump_log() -> ToolResult {
    ToolResult::success("12:00 service started\n".repeat(1000))
}

struct LogPad {
    pad: Scratchpad,
    key: CursorKey,
}

#[derive(Params)]
struct ReadLogParams {
    /// The most characters to return, 200 to 20000; default 4000.
    max_chars: MaxChars,
    /// The `next_cursor` of a previous read.
    cursor: Option<Cursor>,
}

/// Reads the service log a slice at a time, cut to `max_chars`. Use it when
/// the user asks what the service logged; follow `next_cursor` for more.
#[ability(
    effect = read,
    examples = ["read the log", "what did the service log", "recent log lines", "log output", "next part of the log", "service messages"],
)]
async fn read_log(params: ReadLogParams, turn: &Turn) -> ToolResult {
    let log = match turn.require::<LogPad>() {
        Ok(log) => log,
        Err(not_configured) => return not_configured,
    };
    match params.cursor {
        Some(cursor) => read_more(&log.pad, &log.key, &cursor, params.max_chars.get()),
        None => cap_result(
            ToolResult::success("12:00 service started\n".repeat(1000)),
            params.max_chars.get(),
            "log",
            &log.pad,
            &log.key,
        ),
    }
}

#[derive(Params)]
struct OrderParams {
    /// The order's id, e.g. `ord-1`.
    id: String,
}

/// Tells where an order is. Use it when the user asks about an order.
#[ability(
    effect = read,
    input_examples = [{ "id": "ord-1" }, { "id": "ord-404" }],
    examples = ["where is my order", "order status", "has my parcel shipped", "track order ord-1", "when does my order arrive", "is my order late"],
)]
async fn order_status(params: OrderParams) -> ToolResult {
    match params.id.as_str() {
        "ord-1" => ToolResult::success("ord-1 shipped"),
        other => ToolResult::error(
            "no-such-order",
            format!("there is no order `{other}`"),
            "ask the user for the order id",
        ),
    }
}

fn only(names: &[&str]) -> Registry {
    chalie_core::registry()
        .unwrap()
        .filter(|entry| names.contains(&entry.name()))
}

fn log_pad() -> LogPad {
    LogPad {
        pad: Scratchpad::new(ScratchpadLimits::default()),
        key: CursorKey::new("a test secret long enough for hmac!"),
    }
}

fn checks(report: &SmokeReport) -> Vec<(&str, &str)> {
    report
        .findings
        .iter()
        .map(|finding| (finding.ability.as_str(), finding.check))
        .collect()
}

#[tokio::test]
async fn an_uncapped_large_output_is_a_finding() {
    let report = Smoke::new(&only(&["dump_log"])).run().await;
    assert_eq!(checks(&report), [("dump_log", "large-output")], "{report}");
    assert!(
        report.findings[0].message.contains("22000 characters"),
        "{report}"
    );
}

#[tokio::test]
async fn a_capped_output_with_a_cursor_is_clean() {
    Smoke::new(&only(&["read_log"]))
        .extension(log_pad())
        .example("read_log", json!({}))
        .large_output("read_log", json!({ "max_chars": 200 }))
        .run()
        .await
        .assert_clean();
}

#[tokio::test]
async fn a_declared_example_must_match_the_schema_and_succeed() {
    let report = Smoke::new(&only(&["read_log"]))
        .example("read_log", json!({ "max_chars": "lots" }))
        .run()
        .await;
    assert_eq!(checks(&report), [("read_log", "happy-path")], "{report}");
    assert!(
        report.findings[0]
            .message
            .contains("does not match the schema"),
        "{report}"
    );
    // Without its host state the example call fails: also a finding.
    let report = Smoke::new(&only(&["read_log"]))
        .example("read_log", json!({}))
        .run()
        .await;
    assert_eq!(checks(&report), [("read_log", "happy-path")], "{report}");
    assert!(
        report.findings[0].message.contains("not-configured"),
        "{report}"
    );
}

/// The model is shown each input example as a call that works, so the
/// smoke run makes each one, with no `Smoke::example` needed: one that
/// fails is a finding naming it.
#[tokio::test]
async fn every_input_example_runs_as_an_example_call() {
    let report = Smoke::new(&only(&["order_status"])).run().await;
    assert_eq!(
        checks(&report),
        [("order_status", "happy-path")],
        "{report}"
    );
    assert!(
        report.findings[0].message.contains("ord-404")
            && report.findings[0].message.contains("did not succeed"),
        "{report}"
    );
}

#[tokio::test]
async fn every_call_counts_and_a_toolset_narrows_the_run() {
    let report = Smoke::new(&only(&["read_log", "dump_log"]))
        .extension(log_pad())
        .toolset("default")
        .max_body_chars(30_000)
        .run()
        .await;
    report.assert_clean();
    assert_eq!(report.checked, 2);
    // A happy path, an invalid input and three exposure calls each (hidden
    // by the profile, shown by it, refused on the background channel).
    assert_eq!(report.calls, 10);
    let none = Smoke::new(&only(&["read_log"])).toolset("web").run().await;
    assert_eq!(none.checked, 0);
}

/// The exposure check goes through the dispatcher's reachability: a host
/// that pins the ability on every chat turn has exposed it outside any
/// profile, and the check says so.
#[tokio::test]
async fn a_tool_reachable_outside_its_profile_is_a_finding() {
    let report = Smoke::new(&only(&["dump_log"]))
        .max_body_chars(30_000)
        .configure(|builder| builder.pin(chalie_core::Channel::Chat, ["dump_log"]))
        .run()
        .await;
    assert_eq!(checks(&report), [("dump_log", "exposure")], "{report}");
    assert!(
        report.findings[0]
            .message
            .contains("profile enables no toolset"),
        "{report}"
    );
}

/// The exposure check goes through the gate: a host that allows the
/// ability on the background channel lets it run there, and the check
/// says so.
#[tokio::test]
async fn a_tool_the_gate_lets_run_where_the_policy_should_not_is_a_finding() {
    let report = Smoke::new(&only(&["dump_log"]))
        .max_body_chars(30_000)
        .configure(|builder| {
            builder
                .allow(chalie_core::Channel::Subconscious, ["dump_log"])
                .unwrap()
        })
        .run()
        .await;
    assert_eq!(checks(&report), [("dump_log", "exposure")], "{report}");
    assert!(
        report.findings[0].message.contains("subconscious"),
        "{report}"
    );
}
