//! Limits and tags declared on `#[ability]`, enforced by a dispatcher
//! composed as the README composes one: over the linked registry, with a
//! policy allowing the one tool and the tool pinned on the channel.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chalie_core::dispatch::{
    Admission, Policy, RateCounter, RateCounterError, RateLimit, RateScope, Refusal, Setting,
};
use chalie_core::turn::{CallStatus, GateDecision};
use chalie_core::{Channel, Dispatcher, result::Retry};
use serde_json::json;

use crate::abilities::runs;
use crate::{call, envelope, turn};

/// A dispatcher as the README builds one, offering `tool` on the chat.
fn composed(tool: &str) -> chalie_core::dispatch::DispatcherBuilder {
    let mut policy = Policy::new();
    policy
        .set(Channel::Chat, tool, Setting::Allow)
        .expect("a valid permission");
    Dispatcher::builder(chalie_core::registry().expect("a valid registry"))
        .policy(policy)
        .pin(Channel::Chat, [tool])
}

#[tokio::test(start_paused = true)]
async fn past_the_declared_limit_nothing_runs_and_the_error_says_when_to_retry() {
    let dispatcher = composed("export").build();
    let session = turn(Channel::Chat, "declared-limit");
    for _ in 0..3 {
        let done = call(&dispatcher, &session, "export", json!({})).await;
        assert!(done.result.is_success(), "{}", done.envelope);
    }
    tokio::time::advance(Duration::from_secs(600)).await;
    let limited = call(&dispatcher, &session, "export", json!({})).await;
    let parsed = envelope(&limited);
    assert_eq!(parsed.code(), Some("rate-limited"), "{}", limited.envelope);
    assert!(
        parsed
            .hint()
            .unwrap_or_default()
            .contains("wait 3000s before calling `export` again"),
        "{}",
        limited.envelope
    );
    assert_eq!(
        limited.result.as_error().and_then(|error| error.retry()),
        Some(Retry::After(3000.0))
    );
    assert_eq!(limited.refusal(), Some(Refusal::RateLimited));
    let record = limited.record();
    assert_eq!(record.decision, GateDecision::NotReached);
    assert_eq!(record.status, CallStatus::Error);
    assert_eq!(session.trail().len(), 4);
    // Nothing ran the fourth time.
    assert_eq!(runs("declared-limit"), ["export"; 3]);

    // Another session has its own allowance.
    let other = turn(Channel::Chat, "declared-limit-other");
    assert!(
        call(&dispatcher, &other, "export", json!({}))
            .await
            .result
            .is_success()
    );
    // The window slides: an hour after the first call, one more is allowed.
    tokio::time::advance(Duration::from_secs(3000)).await;
    assert!(
        call(&dispatcher, &session, "export", json!({}))
            .await
            .result
            .is_success()
    );
    assert_eq!(runs("declared-limit").len(), 4);
}

/// A shared counter, as a store the replicas share would be: it keeps a
/// window per session and scope, so two dispatchers counting in it hold
/// the declared limit together.
#[derive(Default)]
struct SharedCounter {
    windows: Mutex<HashMap<(String, String), Vec<tokio::time::Instant>>>,
    scopes: Mutex<Vec<String>>,
}

impl RateCounter for SharedCounter {
    fn admit(
        &self,
        session_id: &str,
        scope: RateScope<'_>,
        limit: RateLimit,
    ) -> Result<Admission, RateCounterError> {
        let scope = match scope {
            RateScope::Ability(name) => name.to_owned(),
            _ => String::new(),
        };
        self.scopes.lock().unwrap().push(scope.clone());
        let now = tokio::time::Instant::now();
        let mut windows = self.windows.lock().unwrap();
        let window = windows.entry((session_id.to_owned(), scope)).or_default();
        window.retain(|at| now.duration_since(*at) < limit.per());
        if window.len() < limit.calls() as usize {
            window.push(now);
            return Ok(Admission::Admitted);
        }
        Ok(Admission::Wait(limit.per() - now.duration_since(window[0])))
    }
}

#[tokio::test(start_paused = true)]
async fn the_declared_limit_goes_through_the_shared_counter_across_replicas() {
    let counter = Arc::new(SharedCounter::default());
    let replicas = [
        composed("export").rate_counter(counter.clone()).build(),
        composed("export").rate_counter(counter.clone()).build(),
    ];
    let session = turn(Channel::Chat, "declared-shared");
    for index in 0..3 {
        let done = call(&replicas[index % 2], &session, "export", json!({})).await;
        assert!(done.result.is_success(), "{}", done.envelope);
    }
    let limited = call(&replicas[1], &session, "export", json!({})).await;
    assert_eq!(limited.refusal(), Some(Refusal::RateLimited));
    assert_eq!(runs("declared-shared").len(), 3);
    // Each call was counted twice: in the session's window, then the
    // ability's.
    assert_eq!(
        counter.scopes.lock().unwrap().as_slice(),
        ["", "export", "", "export", "", "export", "", "export"]
    );
}

#[tokio::test]
async fn without_a_declared_tag_nothing_runs() {
    let refused = composed("refund").build();
    let session = turn(Channel::Chat, "declared-tags-missing");
    let done = call(&refused, &session, "refund", json!({})).await;
    assert_eq!(envelope(&done).code(), Some("missing-permission-tag"));
    assert!(
        done.envelope.contains("`orders:write`"),
        "{}",
        done.envelope
    );
    assert_eq!(done.refusal(), Some(Refusal::MissingTags));
    assert_eq!(done.record().status, CallStatus::Error);
    assert_eq!(session.trail().len(), 1);
    assert!(runs("declared-tags-missing").is_empty());

    // Another tag is not the one declared.
    let other_tag = composed("refund").grant_tags(["orders:read"]).build();
    let done = call(&other_tag, &session, "refund", json!({})).await;
    assert_eq!(done.refusal(), Some(Refusal::MissingTags));
    assert!(runs("declared-tags-missing").is_empty());

    let granted = composed("refund").grant_tags(["orders:write"]).build();
    let session = turn(Channel::Chat, "declared-tags-granted");
    let done = call(&granted, &session, "refund", json!({})).await;
    assert!(done.result.is_success(), "{}", done.envelope);
    assert_eq!(runs("declared-tags-granted"), ["refund"]);
}
