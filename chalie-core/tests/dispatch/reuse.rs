//! Reuse of reads within a run, cleared by a write.

use chalie_core::{Channel, Turn, turn::CallStatus};
use serde_json::json;

use crate::abilities::runs;
use crate::{call, widened_builder};

fn run_turn(session: &str, run: &str) -> Turn {
    Turn::builder(Channel::Chat)
        .session_id(session)
        .run_id(run)
        .build()
}

#[tokio::test]
async fn the_same_read_in_a_run_is_reused() {
    let dispatcher = widened_builder().build();
    let turn = run_turn("reuse-same", "run-1");
    let first = call(
        &dispatcher,
        &turn,
        "lookup",
        json!({ "query": "rust", "limit": 2 }),
    )
    .await;
    // Keys in another order, a different act_summary: the same canonical call.
    let again = call(
        &dispatcher,
        &turn,
        "lookup",
        json!({ "act_summary": "again", "limit": 2, "query": "rust" }),
    )
    .await;
    assert!(!first.record().reused);
    assert!(again.record().reused);
    assert_eq!(again.envelope, first.envelope);
    assert_eq!(runs("reuse-same"), ["lookup:rust"]);
    let other = call(
        &dispatcher,
        &turn,
        "lookup",
        json!({ "query": "tokio", "limit": 2 }),
    )
    .await;
    assert!(!other.record().reused);
    // Another run observes afresh.
    let next_run = run_turn("reuse-same", "run-2");
    let fresh = call(
        &dispatcher,
        &next_run,
        "lookup",
        json!({ "query": "rust", "limit": 2 }),
    )
    .await;
    assert!(!fresh.record().reused);
    assert_eq!(
        runs("reuse-same"),
        ["lookup:rust", "lookup:tokio", "lookup:rust"]
    );
    let records = turn.trail().snapshot();
    assert_eq!(
        records.iter().map(|r| r.reused).collect::<Vec<_>>(),
        [false, true, false]
    );
}

#[tokio::test]
async fn a_write_clears_the_run() {
    let dispatcher = widened_builder().build();
    let turn = run_turn("reuse-write", "run-1");
    call(&dispatcher, &turn, "lookup", json!({ "query": "rust" })).await;
    assert!(
        call(&dispatcher, &turn, "lookup", json!({ "query": "rust" }))
            .await
            .record()
            .reused
    );
    call(&dispatcher, &turn, "tally", json!({})).await;
    let after = call(&dispatcher, &turn, "lookup", json!({ "query": "rust" })).await;
    assert!(!after.record().reused);
    assert_eq!(runs("reuse-write"), ["lookup:rust", "tally", "lookup:rust"]);
}

#[tokio::test]
async fn errors_are_not_reused() {
    let dispatcher = widened_builder().build();
    let turn = run_turn("reuse-errors", "run-1");
    call(&dispatcher, &turn, "lookup", json!({ "query": "missing" })).await;
    let again = call(&dispatcher, &turn, "lookup", json!({ "query": "missing" })).await;
    assert!(!again.record().reused);
    assert_eq!(runs("reuse-errors").len(), 2);
}

/// The first call of a dispatcher with no rate limit is a write, so no
/// session has any state when it starts; a read that runs while it runs
/// stores its result, and the write's end still clears it.
#[tokio::test]
async fn a_write_clears_a_read_that_overlapped_it_in_a_fresh_dispatcher() {
    let dispatcher = widened_builder().without_rate_limit().build();
    let turn = run_turn("reuse-overlap", "run-1");
    let (write, read) = tokio::join!(
        call(&dispatcher, &turn, "slow", json!({ "millis": 50 })),
        call(&dispatcher, &turn, "lookup", json!({ "query": "rust" })),
    );
    assert_eq!(write.record().status, CallStatus::Success);
    assert!(!read.record().reused);
    let after = call(&dispatcher, &turn, "lookup", json!({ "query": "rust" })).await;
    assert!(!after.record().reused);
    assert_eq!(
        runs("reuse-overlap"),
        ["lookup:rust", "slow", "lookup:rust"]
    );
}
