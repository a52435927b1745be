//! Every gate setting on every channel, the flat lookup, approvals.

use std::time::Duration;

use chalie_core::{
    Channel, Dispatcher, Turn, dispatch::Approval, dispatch::Policy, dispatch::Setting,
    turn::GateDecision,
};
use serde_json::json;

use crate::abilities::runs;
use crate::{Recorder, call, envelope, registry, turn, widened_builder};

#[tokio::test]
async fn every_setting_on_every_channel() {
    let channels = [Channel::Chat, Channel::Subconscious, Channel::External];
    let settings = [
        Setting::Allow,
        Setting::Ask,
        Setting::Deny,
        Setting::Internal,
    ];
    // An `async fn` ability and a plain `fn` one: neither body runs unless the
    // gate passes it.
    for tool in ["tally", "tally_now"] {
        for (channel, setting) in channels
            .into_iter()
            .flat_map(|channel| settings.map(|setting| (channel, setting)))
        {
            let approver = Recorder::answering(Approval::Approved);
            let mut policy = Policy::new();
            policy.set(channel, tool, setting).unwrap();
            let dispatcher = widened_builder()
                .policy(policy)
                .approver(approver.clone())
                .build();
            let session = format!("gate-{tool}-{}-{}", channel.as_str(), setting.as_str());
            let done = call(&dispatcher, &turn(channel, &session), tool, json!({})).await;
            let (decision, ran, asked) = match (setting, channel) {
                (Setting::Allow, _) => (GateDecision::Allowed, true, false),
                (Setting::Internal, _) => (GateDecision::Internal, true, false),
                (Setting::Deny, _) => (GateDecision::Denied, false, false),
                (Setting::Ask, Channel::Chat) => (GateDecision::Approved, true, true),
                (Setting::Ask, _) => (GateDecision::Denied, false, false),
            };
            let case = format!("{tool}: {setting:?} on {channel:?}");
            assert_eq!(done.record().decision, decision, "{case}");
            assert_eq!(runs(&session).len(), usize::from(ran), "{case}");
            assert_eq!(!approver.permissions().is_empty(), asked, "{case}");
            assert_eq!(done.result.is_success(), ran, "{case}");
            if !ran {
                assert_eq!(envelope(&done).code(), Some("permission-denied"), "{case}");
            }
        }
    }
}

/// The dispatcher as the README builds it: `allow` on the gate, `pin` on
/// reachability, nothing widened.
fn composed(allowed: &[&str], approver: Recorder) -> chalie_core::Dispatcher {
    Dispatcher::builder(registry())
        .allow(Channel::Chat, allowed.iter().copied())
        .unwrap()
        .pin(Channel::Chat, ["calendar", "transfer"])
        .approver(approver)
        .build()
}

#[tokio::test]
async fn an_allowed_tool_does_not_let_an_unconfigured_action_through() {
    let approver = Recorder::answering(Approval::Rejected);
    let dispatcher = composed(&["calendar"], approver.clone());
    let turn = turn(Channel::Chat, "gate-flat-action");
    // `calendar` covers calls without an action only: every action asks,
    // and the user said no, so nothing runs.
    for arguments in [
        json!({ "action": "list_events" }),
        json!({ "action": "delete_event", "event_id": "x" }),
    ] {
        let action = arguments["action"].clone();
        let done = call(&dispatcher, &turn, "calendar", arguments).await;
        assert_eq!(done.record().decision, GateDecision::Rejected, "{action}");
        assert_eq!(envelope(&done).code(), Some("approval-rejected"));
    }
    assert_eq!(
        approver.permissions(),
        ["calendar.list_events", "calendar.delete_event"]
    );
    assert!(runs("gate-flat-action").is_empty());
    // On a channel nobody watches, the same calls are refused outright.
    let background = Turn::builder(Channel::Subconscious)
        .session_id("gate-flat-background")
        .pin(["calendar"])
        .build();
    let done = call(
        &dispatcher,
        &background,
        "calendar",
        json!({ "action": "delete_event", "event_id": "x" }),
    )
    .await;
    assert_eq!(done.record().decision, GateDecision::Denied);
    assert!(runs("gate-flat-background").is_empty());
}

#[tokio::test]
async fn an_allowed_tool_does_not_allow_a_qualifier_it_derives() {
    let approver = Recorder::answering(Approval::Rejected);
    let dispatcher = composed(&["transfer"], approver.clone());
    let turn = turn(Channel::Chat, "gate-flat-derived");
    let small = call(&dispatcher, &turn, "transfer", json!({ "amount": 50 })).await;
    assert_eq!(small.record().decision, GateDecision::Allowed);
    let large = call(&dispatcher, &turn, "transfer", json!({ "amount": 5000 })).await;
    assert_eq!(large.record().decision, GateDecision::Rejected);
    assert_eq!(approver.permissions(), ["transfer.large"]);
    assert_eq!(runs("gate-flat-derived"), ["transfer:50"]);
}

#[tokio::test]
async fn every_action_is_covered_only_when_said_and_a_named_one_wins() {
    let approver = Recorder::answering(Approval::Rejected);
    let dispatcher = composed(&["calendar.*", "transfer.*"], approver.clone());
    dispatcher
        .policy()
        .set(Channel::Chat, "calendar.delete_event", Setting::Deny)
        .unwrap();
    let turn = turn(Channel::Chat, "gate-every-action");
    let listed = call(
        &dispatcher,
        &turn,
        "calendar",
        json!({ "action": "list_events" }),
    )
    .await;
    assert_eq!(listed.record().decision, GateDecision::Allowed);
    let deleted = call(
        &dispatcher,
        &turn,
        "calendar",
        json!({ "action": "delete_event", "event_id": "x" }),
    )
    .await;
    assert_eq!(deleted.record().decision, GateDecision::Denied);
    // `transfer.*` covers `transfer.large`, not the plain call.
    let large = call(&dispatcher, &turn, "transfer", json!({ "amount": 5000 })).await;
    assert_eq!(large.record().decision, GateDecision::Allowed);
    let small = call(&dispatcher, &turn, "transfer", json!({ "amount": 5 })).await;
    assert_eq!(small.record().decision, GateDecision::Rejected);
    assert_eq!(approver.permissions(), ["transfer"]);
    assert_eq!(
        runs("gate-every-action"),
        ["calendar:list_events", "transfer:5000"]
    );
}

#[tokio::test]
async fn the_approver_sees_the_real_call() {
    let approver = Recorder::answering(Approval::Approved);
    let dispatcher = widened_builder()
        .policy(Policy::new())
        .approver(approver.clone())
        .build();
    let turn = turn(Channel::Chat, "gate-request");
    let done = dispatcher
        .dispatch(
            &turn,
            chalie_core::ToolCall::new("calendar", json!({ "action": "delete_event", "event_id": "e7", "act_summary": "Deleting the dentist" }))
                .with_id("call_abc"),
        )
        .await;
    assert!(done.result.is_success());
    let asked = approver.asked.lock().unwrap();
    let request = &asked[0];
    assert_eq!(request.call_id, "call_abc");
    assert_eq!(request.session_id, "gate-request");
    assert_eq!(request.permission, "calendar.delete_event");
    assert_eq!(request.action.as_deref(), Some("delete_event"));
    assert_eq!(request.summary.as_deref(), Some("Deleting the dentist"));
    assert_eq!(
        request.arguments,
        json!({ "action": "delete_event", "event_id": "e7" })
    );
}

#[tokio::test(start_paused = true)]
async fn no_answer_in_time_is_a_rejection() {
    let approver = Recorder::silent();
    let dispatcher = widened_builder()
        .policy(Policy::new())
        .approver(approver.clone())
        .approval_timeout(Duration::from_secs(30))
        .build();
    let turn = turn(Channel::Chat, "gate-timeout");
    let done = call(&dispatcher, &turn, "tally", json!({})).await;
    assert_eq!(done.record().decision, GateDecision::Rejected);
    assert!(
        done.envelope.contains("no answer within 30s"),
        "{}",
        done.envelope
    );
    assert_eq!(approver.permissions(), ["tally"]);
    assert!(runs("gate-timeout").is_empty());
}

#[tokio::test]
async fn without_an_approver_ask_is_a_rejection() {
    let dispatcher = widened_builder().policy(Policy::new()).build();
    let done = call(
        &dispatcher,
        &turn(Channel::Chat, "gate-no-approver"),
        "tally",
        json!({}),
    )
    .await;
    assert_eq!(done.record().decision, GateDecision::Rejected);
    assert!(done.envelope.contains("no approver"));
}

#[tokio::test]
async fn internal_abilities_bypass_the_policy() {
    // Outside a session's modes (see the session isolation tests), an
    // internal ability is neither looked up nor asked.
    let mut policy = Policy::new();
    policy.set(Channel::Chat, "memo", Setting::Deny).unwrap();
    let dispatcher = widened_builder().policy(policy).build();
    let done = call(
        &dispatcher,
        &turn(Channel::Chat, "gate-internal"),
        "memo",
        json!({}),
    )
    .await;
    assert!(done.result.is_success());
    assert_eq!(done.record().decision, GateDecision::Internal);
}

#[tokio::test]
async fn the_policy_changes_at_run_time() {
    let dispatcher = widened_builder().build();
    let turn = turn(Channel::Chat, "gate-runtime");
    assert!(
        call(&dispatcher, &turn, "tally", json!({}))
            .await
            .result
            .is_success()
    );
    dispatcher
        .policy()
        .set(Channel::Chat, "tally", Setting::Deny)
        .unwrap();
    assert_eq!(
        dispatcher.policy().get(Channel::Chat, "tally"),
        Setting::Deny
    );
    let denied = call(&dispatcher, &turn, "tally", json!({})).await;
    assert_eq!(denied.record().decision, GateDecision::Denied);
    assert!(
        dispatcher
            .policy()
            .set(Channel::Chat, "bad name!", Setting::Allow)
            .is_err()
    );
}

#[tokio::test]
async fn the_ability_derives_the_permission_from_the_validated_values() {
    // Small transfers run; large ones ask; the model cannot pick which.
    let mut policy = Policy::new();
    policy
        .set(Channel::Chat, "transfer", Setting::Allow)
        .unwrap();
    policy
        .set(Channel::Chat, "transfer.large", Setting::Ask)
        .unwrap();
    let recorder = Recorder::answering(Approval::Rejected);
    let dispatcher = widened_builder()
        .policy(policy)
        .pin(Channel::Chat, ["transfer"])
        .approver(recorder.clone())
        .build();
    let turn = turn(Channel::Chat, "gate-derived");

    let small = call(&dispatcher, &turn, "transfer", json!({ "amount": 50 })).await;
    assert!(small.result.is_success(), "{}", small.envelope);
    assert_eq!(small.record().permission, "transfer");

    let large = call(&dispatcher, &turn, "transfer", json!({ "amount": 5000 })).await;
    assert_eq!(envelope(&large).code(), Some("approval-rejected"));
    assert_eq!(large.record().permission, "transfer.large");
    assert_eq!(recorder.permissions(), ["transfer.large"]);

    // A model naming a permission of its own is refused before the gate.
    let forged = call(
        &dispatcher,
        &turn,
        "transfer",
        json!({ "amount": 5000, "permission": "transfer" }),
    )
    .await;
    assert_eq!(envelope(&forged).code(), Some("invalid-arguments"));
    assert_eq!(recorder.permissions().len(), 1, "nobody was asked");
    assert_eq!(runs("gate-derived"), ["transfer:50"]);
}
