//! Nothing a call does crashes the turn.

use chalie_core::{Channel, turn::CallStatus};
use serde_json::json;

use crate::{call, envelope, turn, widened_builder};

#[tokio::test]
async fn a_panic_is_an_error_envelope_and_the_dispatcher_keeps_serving() {
    let dispatcher = widened_builder().build();
    let turn = turn(Channel::Chat, "failure-panic");
    let done = call(&dispatcher, &turn, "boom", json!({})).await;
    let parsed = envelope(&done);
    assert_eq!(parsed.code(), Some("ability-panicked"));
    assert!(parsed.content.contains("the boom ability always panics"));
    assert_eq!(done.record().status, CallStatus::Error);
    assert_eq!(
        done.record().error_code.as_deref(),
        Some("ability-panicked")
    );
    assert!(
        call(&dispatcher, &turn, "tally", json!({}))
            .await
            .result
            .is_success()
    );
    assert_eq!(turn.trail().len(), 2);
}

#[tokio::test]
async fn an_unserializable_body_is_non_canonical() {
    let dispatcher = widened_builder().build();
    let done = call(
        &dispatcher,
        &turn(Channel::Chat, "failure-opaque"),
        "opaque",
        json!({}),
    )
    .await;
    assert_eq!(envelope(&done).code(), Some("non-canonical-result"));
    assert!(
        done.envelope.contains("could not be serialised"),
        "{}",
        done.envelope
    );
}
