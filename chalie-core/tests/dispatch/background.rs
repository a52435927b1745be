//! Background calls: a receipt now, the final envelope later.

use chalie_core::{Channel, turn::CallStatus, turn::GateDecision};
use serde_json::json;

use crate::abilities::runs;
use crate::{call, envelope, turn, widened_builder};

#[tokio::test]
async fn a_background_call_delivers_its_final_envelope_to_the_turn() {
    let dispatcher = widened_builder().build();
    let turn = turn(Channel::Chat, "background-chat");
    let receipt = call(
        &dispatcher,
        &turn,
        "slow",
        json!({ "millis": 30, "async": true }),
    )
    .await;
    let parsed = envelope(&receipt);
    assert!(parsed.is_success());
    assert_eq!(parsed.attribute("call_id"), Some(receipt.call_id()));
    assert_eq!(parsed.attribute("background"), Some("true"));
    assert_eq!(receipt.record().status, CallStatus::Pending);
    assert!(receipt.record().background);

    let calls = dispatcher.background("background-chat");
    assert_eq!(calls.pending(), [receipt.call_id().to_owned()]);
    let done = calls.wait(receipt.call_id()).await.expect("it finishes");
    assert_eq!(
        done.envelope,
        "[slow(status=success)]\nslept 30ms\n[end:slow]"
    );
    assert_eq!(done.record().status, CallStatus::Success);
    assert!(done.record().background);
    assert_eq!(done.record().decision, GateDecision::Allowed);
    assert_eq!(
        calls.poll(receipt.call_id()).map(|d| d.envelope),
        Some(done.envelope.clone())
    );

    // The trail has one record for the call, now final.
    let records = turn.trail().snapshot();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].status, CallStatus::Success);
    assert!(records[0].background);
    assert_eq!(calls.take_finished().len(), 1);
    assert!(calls.take_finished().is_empty());
    assert_eq!(runs("background-chat"), ["slow"]);
}

#[tokio::test]
async fn a_background_panic_is_delivered_as_an_error() {
    let dispatcher = widened_builder().build();
    let turn = turn(Channel::Chat, "background-panic");
    let receipt = call(
        &dispatcher,
        &turn,
        "slow",
        json!({ "millis": 1, "fail": true, "async": true }),
    )
    .await;
    let done = dispatcher
        .background("background-panic")
        .wait(receipt.call_id())
        .await
        .unwrap();
    assert_eq!(envelope(&done).code(), Some("ability-panicked"));
    assert_eq!(
        turn.trail().snapshot()[0].error_code.as_deref(),
        Some("ability-panicked")
    );
}

#[tokio::test]
async fn without_background_calls_async_runs_inline() {
    let dispatcher = widened_builder().build();
    let turn = turn(Channel::Subconscious, "background-inline");
    let done = call(
        &dispatcher,
        &turn,
        "slow",
        json!({ "millis": 1, "async": true }),
    )
    .await;
    assert_eq!(
        done.envelope,
        "[slow(status=success)]\nslept 1ms\n[end:slow]"
    );
    assert!(!done.record().background);
    assert!(
        dispatcher
            .background("background-inline")
            .pending()
            .is_empty()
    );
}
