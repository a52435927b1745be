//! The per-session rate limit.

use std::time::Duration;

use chalie_core::{Channel, dispatch::RateLimit, result::Retry, turn::GateDecision};
use serde_json::json;

use crate::{call, envelope, turn, widened_builder};

#[tokio::test(start_paused = true)]
async fn the_limit_holds_per_session_and_says_when_to_retry() {
    let dispatcher = widened_builder()
        .rate_limit(RateLimit::per_minute(3))
        .build();
    let first = turn(Channel::Chat, "limit-a");
    for _ in 0..3 {
        assert!(
            call(&dispatcher, &first, "tally", json!({}))
                .await
                .result
                .is_success()
        );
    }
    tokio::time::advance(Duration::from_secs(20)).await;
    let limited = call(&dispatcher, &first, "tally", json!({})).await;
    let parsed = envelope(&limited);
    assert_eq!(parsed.code(), Some("rate-limited"));
    assert!(
        parsed.hint().unwrap_or_default().contains("wait 40s"),
        "{}",
        limited.envelope
    );
    assert_eq!(
        limited.result.as_error().and_then(|e| e.retry()),
        Some(Retry::After(40.0))
    );
    assert_eq!(limited.record().decision, GateDecision::NotReached);
    // Another session has its own window.
    let second = turn(Channel::Chat, "limit-b");
    assert!(
        call(&dispatcher, &second, "tally", json!({}))
            .await
            .result
            .is_success()
    );
    // The window slides.
    tokio::time::advance(Duration::from_secs(40)).await;
    assert!(
        call(&dispatcher, &first, "tally", json!({}))
            .await
            .result
            .is_success()
    );
}

#[tokio::test(start_paused = true)]
async fn the_default_is_thirty_a_minute() {
    let dispatcher = widened_builder().build();
    let turn = turn(Channel::Chat, "limit-default");
    for index in 0..30 {
        let done = call(&dispatcher, &turn, "tally", json!({})).await;
        assert!(done.result.is_success(), "call {index}");
    }
    let limited = call(&dispatcher, &turn, "tally", json!({})).await;
    assert_eq!(envelope(&limited).code(), Some("rate-limited"));
    assert_eq!(turn.trail().len(), 31);
}
