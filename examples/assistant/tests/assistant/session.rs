//! Whole runs through the session loop with a scripted model: the mode,
//! the channel and the approver decide what a write does.

use assistant::{Host, SAMPLE_USER};
use chalie_core::session::{Mode, Reply};
use chalie_core::turn::Principal;
use chalie_core::{Channel, dispatch::Approval, dispatch::Policy, dispatch::Setting};
use chalie_testkit::{Harness, ScriptedApprover};
use serde_json::json;

fn harness(mode: Mode, channel: Channel, answers: Vec<Approval>) -> Harness {
    harness_with_policy(assistant::policy(), mode, channel, answers)
}

fn harness_with_policy(
    policy: Policy,
    mode: Mode,
    channel: Channel,
    answers: Vec<Approval>,
) -> Harness {
    let host = Host::sample();
    // The calendar and tasks are pinned, as a host offering them on every
    // turn would; without the pin the model would have to find them first.
    Harness::builder()
        .principal(Principal::new(SAMPLE_USER))
        .pin(["calendar", "tasks"])
        .policy(policy)
        .mode(mode)
        .channel(channel)
        .approver(ScriptedApprover::new(answers))
        .configure(move |builder| host.install(builder))
        .build()
        .unwrap()
}

fn add_task() -> [Reply; 2] {
    [
        Reply::tool_call("tasks", json!({ "action": "create", "title": "Buy milk" })),
        Reply::text("Added."),
    ]
}

#[tokio::test]
async fn a_read_runs_without_asking() {
    let run = harness(Mode::Approval, Channel::Chat, vec![])
        .run(
            [
                Reply::tool_call("calendar", json!({ "action": "today" })),
                Reply::text("Two events today."),
            ],
            "what's on today?",
        )
        .await
        .unwrap();
    run.assert_sequence(&[
        "tool.started",
        "tool.completed",
        "message.completed",
        "run.settlement.completed",
    ]);
    assert!(!run.names().contains(&"tool.approval_required"));
    assert_eq!(run.answer(), Some("Two events today."));
    // The model's second request carried the calendar's envelope.
    let second = &run.model.requests()[1];
    assert!(
        second
            .messages
            .iter()
            .any(|message| message.content.contains("Lunch with Maria"))
    );
}

#[tokio::test]
async fn in_approval_mode_a_write_waits_for_the_user() {
    let approved = harness(Mode::Approval, Channel::Chat, vec![Approval::Approved])
        .run(add_task(), "add buy milk")
        .await
        .unwrap();
    approved.assert_sequence(&[
        "tool.approval_required",
        "tool.approval_response",
        "tool.completed",
        "message.completed",
    ]);
    let rejected = harness(Mode::Approval, Channel::Chat, vec![Approval::Rejected])
        .run(add_task(), "add buy milk")
        .await
        .unwrap();
    rejected.assert_sequence(&[
        "tool.approval_required",
        "tool.approval_response",
        "tool.failed",
    ]);
    assert_eq!(rejected.failures(), ["approval-rejected"]);
}

#[tokio::test]
async fn plan_mode_blocks_the_write_and_auto_runs_only_what_the_policy_allows() {
    let plan = harness(Mode::Plan, Channel::Chat, vec![])
        .run(add_task(), "add buy milk")
        .await
        .unwrap();
    assert_eq!(plan.failures(), ["plan-mode-read-only"]);
    // The assistant's policy leaves writes at `ask`: auto mode still asks.
    let asked = harness(Mode::Auto, Channel::Chat, vec![])
        .run(add_task(), "add buy milk")
        .await
        .unwrap();
    asked.assert_sequence(&["tool.approval_required", "tool.failed"]);
    let mut allowing = assistant::policy();
    allowing
        .set(Channel::Chat, "tasks.create", Setting::Allow)
        .unwrap();
    let auto = harness_with_policy(allowing, Mode::Auto, Channel::Chat, vec![])
        .run(add_task(), "add buy milk")
        .await
        .unwrap();
    auto.assert_sequence(&["tool.started", "tool.completed"]);
    assert!(!auto.names().contains(&"tool.approval_required"));
}

#[tokio::test]
async fn on_the_background_channel_the_write_is_denied() {
    let run = harness(
        Mode::Approval,
        Channel::Subconscious,
        vec![Approval::Approved],
    )
    .run(add_task(), "tidy up")
    .await
    .unwrap();
    assert_eq!(run.failures(), ["permission-denied"]);
    assert!(!run.names().contains(&"tool.approval_required"));
}
