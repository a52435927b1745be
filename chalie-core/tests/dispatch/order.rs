//! The path's order: a malformed call bounces before the gate, a denied
//! call never runs, and model-supplied permission fields change nothing.

use chalie_core::{
    Channel, Dispatcher, ToolCall, Turn, dispatch::Approval, dispatch::Policy, dispatch::RateLimit,
    dispatch::Setting, result::Retry, turn::CallStatus, turn::GateDecision,
};
use serde_json::json;

use crate::abilities::runs;
use crate::{Recorder, call, envelope, registry, turn, widened_builder};

#[tokio::test]
async fn an_unknown_action_bounces_before_the_approver_is_asked() {
    let approver = Recorder::answering(Approval::Approved);
    let dispatcher = widened_builder()
        .policy(Policy::new())
        .approver(approver.clone())
        .build();
    let turn = turn(Channel::Chat, "order-unknown-action");
    let done = call(&dispatcher, &turn, "calendar", json!({ "action": "nuke" })).await;
    let parsed = envelope(&done);
    assert_eq!(parsed.code(), Some("invalid-arguments"));
    assert!(
        parsed
            .content
            .contains("`action` must be one of `list_events`, `delete_event`, not `nuke`")
    );
    assert_eq!(
        done.result.as_error().map(|e| e.valid_values().to_vec()),
        Some(vec!["list_events".to_owned(), "delete_event".to_owned()])
    );
    assert!(
        approver.permissions().is_empty(),
        "the approver must not be asked"
    );
    assert_eq!(done.record().decision, GateDecision::NotReached);
    assert!(runs("order-unknown-action").is_empty());
}

#[tokio::test]
async fn a_parameter_the_action_requires_is_named() {
    let approver = Recorder::answering(Approval::Approved);
    let dispatcher = widened_builder()
        .policy(Policy::new())
        .approver(approver.clone())
        .build();
    let turn = turn(Channel::Chat, "order-required");
    let done = call(
        &dispatcher,
        &turn,
        "calendar",
        json!({ "action": "delete_event" }),
    )
    .await;
    assert_eq!(envelope(&done).code(), Some("invalid-arguments"));
    assert!(
        done.envelope
            .contains("`event_id` is required (action `delete_event` requires it)"),
        "{}",
        done.envelope
    );
    let missing_action = call(&dispatcher, &turn, "calendar", json!({})).await;
    assert!(missing_action.envelope.contains("`action` is required"));
    assert!(approver.permissions().is_empty());
    assert!(runs("order-required").is_empty());
}

#[tokio::test]
async fn bad_typed_parameters_bounce_before_the_gate() {
    let approver = Recorder::answering(Approval::Approved);
    let dispatcher = widened_builder()
        .policy(Policy::new())
        .approver(approver.clone())
        .build();
    let turn = turn(Channel::Chat, "order-typed");
    let done = call(
        &dispatcher,
        &turn,
        "lookup",
        json!({ "query": 5, "limit": 99 }),
    )
    .await;
    assert_eq!(envelope(&done).code(), Some("invalid-arguments"));
    assert!(done.envelope.contains("`query` must be a string"));
    assert!(
        done.envelope.contains("`limit` must be between 1 and 10"),
        "{}",
        done.envelope
    );
    assert!(approver.permissions().is_empty());
    assert_eq!(done.record().status, CallStatus::Error);
}

#[tokio::test]
async fn a_denied_call_never_runs_and_says_not_to_retry() {
    let dispatcher = widened_builder().build();
    dispatcher
        .policy()
        .set(Channel::Chat, "calendar.delete_event", Setting::Deny)
        .unwrap();
    let turn = turn(Channel::Chat, "order-denied");
    let done = call(
        &dispatcher,
        &turn,
        "calendar",
        json!({ "action": "delete_event", "event_id": "e1" }),
    )
    .await;
    let parsed = envelope(&done);
    assert_eq!(parsed.code(), Some("permission-denied"));
    assert!(parsed.hint().unwrap_or_default().contains("do not retry"));
    assert_eq!(
        done.result.as_error().and_then(|e| e.retry()),
        Some(Retry::Never)
    );
    assert_eq!(done.record().decision, GateDecision::Denied);
    assert_eq!(done.record().permission, "calendar.delete_event");
    assert!(runs("order-denied").is_empty());
    // The other action is still allowed through `calendar`.
    let listed = call(
        &dispatcher,
        &turn,
        "calendar",
        json!({ "action": "list_events" }),
    )
    .await;
    assert!(listed.result.is_success());
    assert_eq!(runs("order-denied"), ["calendar:list_events"]);
}

#[tokio::test]
async fn framework_fields_are_removed_and_the_summary_is_shown() {
    let shown = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&shown);
    let dispatcher = widened_builder().build();
    let turn = chalie_core::Turn::builder(Channel::Chat)
        .session_id("order-framework")
        .progress(std::sync::Arc::new(move |progress| {
            sink.lock().unwrap().push(progress.message)
        }))
        .build();
    let done = call(
        &dispatcher,
        &turn,
        "lookup",
        json!({ "query": "rust", "act_summary": "Looking up rust", "async": false }),
    )
    .await;
    assert!(done.result.is_success(), "{}", done.envelope);
    assert_eq!(*shown.lock().unwrap(), ["Looking up rust"]);
    let bad = call(
        &dispatcher,
        &turn,
        "lookup",
        json!({ "query": "rust", "async": "yes" }),
    )
    .await;
    assert!(
        bad.envelope.contains("`async` must be a boolean"),
        "{}",
        bad.envelope
    );
}

/// Decision: a model cannot forge the permission. Fields such as
/// `permission`, `risk` or `action_class` that the ability does not take
/// bounce as `invalid-arguments` before the gate, so the gate is never
/// consulted with them; and when an ability legitimately takes a field
/// named `permission`, the gate still uses `tool.action`.
#[tokio::test]
async fn model_supplied_permission_fields_change_nothing() {
    let approver = Recorder::answering(Approval::Approved);
    let dispatcher = widened_builder()
        .policy(Policy::new())
        .approver(approver.clone())
        .build();
    let turn = turn(Channel::Chat, "order-forged");
    for (field, value) in [
        ("permission", "calendar.list_events"),
        ("risk", "low"),
        ("action_class", "read"),
    ] {
        let mut arguments = json!({ "action": "delete_event", "event_id": "e1" });
        arguments[field] = json!(value);
        let done = call(&dispatcher, &turn, "calendar", arguments).await;
        assert_eq!(envelope(&done).code(), Some("invalid-arguments"), "{field}");
        assert!(done.envelope.contains(&format!("unknown field `{field}`")));
        assert_eq!(done.record().decision, GateDecision::NotReached);
    }
    assert!(approver.permissions().is_empty());
    assert!(runs("order-forged").is_empty());

    dispatcher
        .policy()
        .set(Channel::Chat, "settings.view", Setting::Allow)
        .unwrap();
    let done = call(
        &dispatcher,
        &turn,
        "settings",
        json!({ "action": "change", "permission": "settings.view" }),
    )
    .await;
    assert!(done.result.is_success());
    assert_eq!(done.record().permission, "settings.change");
    assert_eq!(done.record().decision, GateDecision::Approved);
    assert_eq!(approver.permissions(), ["settings.change"]);
}

/// Nothing happens before a call's future is first polled: a call whose
/// future is dropped unpolled does not run, does not count against the
/// rate limit and is not on the trail, a refusal included.
#[tokio::test]
async fn a_call_dropped_unpolled_leaves_no_trace() {
    let dispatcher = Dispatcher::builder(registry())
        .allow(Channel::Chat, ["tally_now"])
        .unwrap()
        .pin(Channel::Chat, ["tally_now"])
        .rate_limit(RateLimit::per_minute(1))
        .build();
    let turn = turn(Channel::Chat, "order-unpolled");
    for name in ["tally_now", "no_such_tool", "boom"] {
        drop(dispatcher.dispatch(&turn, ToolCall::new(name, json!({}))));
    }
    assert_eq!(turn.trail().len(), 0);
    assert!(runs("order-unpolled").is_empty());
    // The one call the rate limit admits is still unused.
    let done = dispatcher
        .dispatch(&turn, ToolCall::new("tally_now", json!({})))
        .await;
    assert_eq!(done.record().status, CallStatus::Success);
    assert_eq!(runs("order-unpolled"), ["tally_now"]);
    assert_eq!(turn.trail().len(), 1);
}

/// A dispatched call's record is its own entry on the trail, even when
/// the trail is shared with another turn and other calls land after it.
#[tokio::test]
async fn each_result_reads_its_own_entry_on_a_shared_trail() {
    let dispatcher = widened_builder().build();
    let first = turn(Channel::Chat, "order-shared-trail");
    let second = Turn::builder(Channel::Chat)
        .session_id("order-shared-trail")
        .trail(first.trail().clone())
        .build();
    let ran = call(&dispatcher, &first, "tally_now", json!({})).await;
    let unknown = call(&dispatcher, &second, "no_such_tool", json!({})).await;
    let failed = call(&dispatcher, &first, "boom", json!({})).await;
    let trail = second.trail().snapshot();
    assert_eq!(trail.len(), 3);
    for (done, recorded) in [&ran, &unknown, &failed].into_iter().zip(&trail) {
        assert_eq!(&done.record(), recorded);
        assert_eq!(done.call_id(), recorded.call_id);
    }
    assert_eq!(ran.record().status, CallStatus::Success);
    assert_eq!(unknown.record().decision, GateDecision::NotReached);
    assert_eq!(failed.record().tool, "boom");
    assert_eq!(
        failed.record().error_code.as_deref(),
        Some("ability-panicked")
    );
}
