//! Each mode composed with the permission gate: approval (approve, reject,
//! timeout), auto, plan, plan_collect with a plan executed later; a policy
//! `deny` wins everywhere and a policy `ask` asks even in `auto`.

use std::sync::Arc;
use std::time::Duration;

use chalie_core::session::{
    ApprovalState, Event, EventError, Mode, Reply, Role, ScriptedModel, Sessions,
};
use chalie_core::{Channel, Dispatcher, dispatch::Setting};
use serde_json::json;

use crate::abilities::done;
use crate::runs::{completed, delta, phase, run_started, settled, stable, started};
use crate::{allow_all, names, registry, sessions, sessions_with, wait_for};
use chalie_core::session::Phase;

fn approval_required(call: &str, input: serde_json::Value) -> Event {
    Event::ToolApprovalRequired {
        tool_key: "delete_task".into(),
        tool_call_id: call.into(),
        input,
    }
}

fn failed(tool: &str, call: &str, code: &str) -> impl Fn(&Event) -> bool {
    let (tool, call, code) = (tool.to_owned(), call.to_owned(), code.to_owned());
    move |event| {
        matches!(event, Event::ToolFailed { tool_key, call_id, error, .. }
            if *tool_key == tool && *call_id == call && error.code == code)
    }
}

#[tokio::test]
async fn approval_mode_asks_for_a_write_and_runs_it_once_approved() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("lookup", json!({ "query": "rent" })),
        Reply::tool_call("delete_task", json!({ "id": 7 })),
        Reply::text("Deleted."),
    ]));
    let sessions = sessions(model);
    assert_eq!(sessions.mode("modes-approve").unwrap(), Mode::Approval);
    let run = sessions
        .send("modes-approve", "delete the rent task")
        .unwrap();
    let asked = wait_for(&run, "tool.approval_required").await;
    assert_eq!(asked, approval_required("call-2", json!({ "id": 7 })));
    assert!(done("modes-approve") == ["lookup:rent"], "the write waits");
    sessions.approve(run.id(), "call-2").unwrap();
    let events = stable(run.finish().await);
    assert_eq!(
        events,
        vec![
            run_started(&run),
            phase(Phase::Planning),
            phase(Phase::ExecutingTool),
            // A read is never held back by the mode.
            started("lookup", "call-1", "Looking it up"),
            completed("lookup", "call-1"),
            phase(Phase::ReadingResult),
            phase(Phase::ExecutingTool),
            // The write starts only once the human said yes.
            approval_required("call-2", json!({ "id": 7 })),
            Event::ToolApprovalResponse {
                tool_call_id: "call-2".into(),
                approved: true
            },
            started("delete_task", "call-2", "Deletes one task by id"),
            completed("delete_task", "call-2"),
            phase(Phase::ReadingResult),
            Event::MessageDelta {
                delta: "Deleted.".into()
            },
            phase(Phase::Verifying),
            Event::MessageCompleted {
                content: "Deleted.".into()
            },
            settled(run.id(), "completed", 2, 3),
        ]
    );
    assert_eq!(done("modes-approve"), ["lookup:rent", "delete:7"]);
    // Answering twice is an error, not a second run.
    assert!(sessions.approve(run.id(), "call-2").is_err());
}

#[tokio::test]
async fn a_rejected_write_does_not_run_and_the_model_is_told() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 7 })),
        Reply::text("Okay, kept it."),
    ]));
    let sessions = sessions(model.clone());
    let run = sessions.send("modes-reject", "delete task 7").unwrap();
    wait_for(&run, "tool.approval_required").await;
    sessions.reject(run.id(), "call-1").unwrap();
    let events = run.finish().await;
    assert!(events.contains(&Event::ToolApprovalResponse {
        tool_call_id: "call-1".into(),
        approved: false
    }));
    assert!(
        events
            .iter()
            .any(failed("delete_task", "call-1", "approval-rejected"))
    );
    assert!(done("modes-reject").is_empty());
    let told = model.requests()[1].messages.last().unwrap().content.clone();
    assert!(told.contains("the user declined"), "{told}");
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_approval_times_out_after_60_seconds() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 7 })),
        Reply::text("Nobody answered."),
    ]));
    let sessions = sessions(model.clone());
    let started_at = tokio::time::Instant::now();
    let run = sessions.send("modes-timeout", "delete task 7").unwrap();
    let events = stable(run.finish().await);
    assert_eq!(started_at.elapsed(), Duration::from_secs(60));
    let from = names(&events)
        .iter()
        .position(|name| *name == "tool.approval_required")
        .unwrap();
    assert_eq!(
        events[from..from + 3],
        [
            approval_required("call-1", json!({ "id": 7 })),
            Event::ToolApprovalTimeout {
                tool_key: "delete_task".into(),
                tool_call_id: "call-1".into(),
                timeout_ms: 60_000
            },
            Event::ToolFailed {
                tool_key: "delete_task".into(),
                call_id: "call-1".into(),
                execution_ms: 0,
                error: EventError {
                    code: "approval-rejected".into(),
                    message: "`delete_task` needs the user's approval: no answer within 60s".into()
                },
                blocked: false,
                reason: None
            },
        ]
    );
    assert!(done("modes-timeout").is_empty());
    let approval = sessions
        .store()
        .approval(run.id(), "call-1")
        .unwrap()
        .unwrap();
    assert_eq!(approval.state, ApprovalState::TimedOut);
    // Too late: the call was already rejected.
    assert!(sessions.approve(run.id(), "call-1").is_err());
}

#[tokio::test(start_paused = true)]
async fn the_approval_timeout_is_configurable() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 1 })),
        Reply::text("Nobody answered."),
    ]));
    let dispatcher = Dispatcher::builder(registry()).policy(allow_all()).build();
    let sessions = Sessions::builder(Arc::new(dispatcher), model)
        .pinned(["delete_task"])
        .approval_timeout(Duration::from_secs(5))
        .build();
    let started_at = tokio::time::Instant::now();
    let events = sessions
        .send("modes-timeout-5", "delete 1")
        .unwrap()
        .finish()
        .await;
    assert_eq!(started_at.elapsed(), Duration::from_secs(5));
    assert!(events.iter().any(|event| matches!(
        event,
        Event::ToolApprovalTimeout {
            timeout_ms: 5_000,
            ..
        }
    )));
}

#[tokio::test]
async fn auto_mode_runs_writes_at_once() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 3 })),
        Reply::text("Done."),
    ]));
    let sessions = sessions(model);
    sessions.set_mode("modes-auto", Mode::Auto).unwrap();
    let events = stable(
        sessions
            .send("modes-auto", "delete 3")
            .unwrap()
            .finish()
            .await,
    );
    assert!(
        !names(&events)
            .iter()
            .any(|name| name.starts_with("tool.approval"))
    );
    assert!(events.contains(&completed("delete_task", "call-1")));
    assert_eq!(done("modes-auto"), ["delete:3"]);
}

#[tokio::test]
async fn a_policy_ask_still_asks_in_auto_mode() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 4 })),
        Reply::text("Done."),
    ]));
    let mut policy = allow_all();
    policy
        .set(Channel::Chat, "delete_task", Setting::Ask)
        .unwrap();
    let sessions = sessions_with(policy, model, None);
    sessions.set_mode("modes-auto-ask", Mode::Auto).unwrap();
    let run = sessions.send("modes-auto-ask", "delete 4").unwrap();
    wait_for(&run, "tool.approval_required").await;
    assert!(done("modes-auto-ask").is_empty());
    sessions.approve(run.id(), "call-1").unwrap();
    run.finish().await;
    assert_eq!(done("modes-auto-ask"), ["delete:4"]);
}

#[tokio::test]
async fn a_policy_deny_wins_in_every_mode() {
    for mode in Mode::ALL {
        let session = format!("modes-deny-{mode}");
        let model = Arc::new(ScriptedModel::new([
            Reply::tool_call("delete_task", json!({ "id": 9 })),
            Reply::text("Could not."),
        ]));
        let mut policy = allow_all();
        policy
            .set(Channel::Chat, "delete_task", Setting::Deny)
            .unwrap();
        let sessions = sessions_with(policy, model, None);
        sessions.set_mode(&session, mode).unwrap();
        let events = sessions.send(&session, "delete 9").unwrap().finish().await;
        assert!(
            events
                .iter()
                .any(failed("delete_task", "call-1", "permission-denied")),
            "{mode}: {:?}",
            names(&events)
        );
        assert!(!names(&events).contains(&"plan.step_added"), "{mode}");
        assert!(
            !names(&events).contains(&"tool.approval_required"),
            "{mode}"
        );
        assert!(sessions.plan(&session).unwrap().is_empty());
        assert!(done(&session).is_empty());
    }
}

#[tokio::test]
async fn plan_mode_blocks_writes_and_still_runs_reads() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("list_tasks", json!({})).then_tool_call("delete_task", json!({ "id": 7 })),
        Reply::text("Plan: delete task 7."),
    ]));
    let sessions = sessions(model.clone());
    sessions.set_mode("modes-plan", Mode::Plan).unwrap();
    let events = stable(
        sessions
            .send("modes-plan", "clean up")
            .unwrap()
            .finish()
            .await,
    );
    assert!(events.contains(&completed("list_tasks", "call-1")));
    let blocked = events
        .iter()
        .find(|event| event.name() == "tool.failed")
        .unwrap();
    assert_eq!(
        blocked.to_json(),
        r#"{"type":"tool.failed","toolKey":"delete_task","callId":"call-2","executionMs":0,"error":{"code":"plan-mode-read-only","message":"`delete_task` changes data, and this session is in plan mode: writes are blocked"},"blocked":true,"reason":"plan_mode_read_only"}"#
    );
    assert_eq!(done("modes-plan"), ["list_tasks"]);
    let envelope = model.requests()[1].messages.last().unwrap().content.clone();
    assert!(
        envelope.contains("blocked=true") && envelope.contains("plan_mode_read_only"),
        "{envelope}"
    );
}

#[tokio::test]
async fn plan_collect_captures_writes_in_order_and_the_plan_runs_later() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 7 }))
            .then_tool_call("rename_task", json!({ "id": 8, "title": "bills" })),
        Reply::text("The plan has two steps."),
        Reply::deltas(["Task 7 is deleted and task 8 is now bills."]),
    ]));
    let dispatcher = Dispatcher::builder(registry()).policy(allow_all()).build();
    let sessions = Sessions::builder(Arc::new(dispatcher), model.clone())
        .pinned(["delete_task", "rename_task"])
        .build();
    let session = "modes-collect";
    sessions.set_mode(session, Mode::PlanCollect).unwrap();
    let events = stable(
        sessions
            .send(session, "tidy my tasks")
            .unwrap()
            .finish()
            .await,
    );
    let mut captured = completed("delete_task", "call-1");
    if let Event::ToolCompleted { added_to_plan, .. } = &mut captured {
        *added_to_plan = true;
    }
    let from = names(&events)
        .iter()
        .position(|name| *name == "tool.started")
        .unwrap();
    assert_eq!(
        events[from..from + 3],
        [
            started("delete_task", "call-1", "Deletes one task by id"),
            Event::PlanStepAdded {
                plan_id: session.into(),
                step_index: 0,
                tool_key: "delete_task".into(),
                call_id: "call-1".into(),
                input: json!({ "id": 7 })
            },
            captured,
        ]
    );
    assert_eq!(captured_json(&events), 2);
    assert!(done(session).is_empty(), "nothing ran yet");
    let plan = sessions.plan(session).unwrap();
    let tools: Vec<_> = plan.iter().map(|step| step.tool.as_str()).collect();
    assert_eq!(tools, ["delete_task", "rename_task"]);

    // Later, in approval mode: executing the plan runs its steps in order,
    // then the model, offered no tools, tells the user what was done.
    sessions.set_mode(session, Mode::Approval).unwrap();
    model.clear_requests();
    let run = sessions.execute_plan(session).unwrap();
    let events = stable(run.finish().await);
    let summary = "Task 7 is deleted and task 8 is now bills.";
    assert_eq!(
        events,
        vec![
            run_started(&run),
            phase(Phase::ExecutingTool),
            started("delete_task", "call-1", "Deletes one task by id"),
            completed("delete_task", "call-1"),
            started("rename_task", "call-2", "Renames one task"),
            completed("rename_task", "call-2"),
            phase(Phase::ReadingResult),
            delta(summary),
            phase(Phase::Verifying),
            Event::MessageCompleted {
                content: summary.into()
            },
            settled(run.id(), "completed", 2, 1),
        ]
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].tools.is_empty(), "the summary offers no tools");
    let roles: Vec<_> = requests[0].messages.iter().map(|m| m.role).collect();
    assert_eq!(roles.last(), Some(&Role::System), "{roles:?}");
    assert!(
        requests[0]
            .messages
            .iter()
            .any(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some("call-2")),
        "the step results reach the model"
    );
    assert_eq!(done(session), ["delete:7", "rename:8:bills"]);
    assert!(sessions.plan(session).unwrap().is_empty());
    assert!(sessions.execute_plan(session).is_err(), "an empty plan");
}

fn captured_json(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|event| event.to_json().contains(r#""addedToPlan":true"#))
        .count()
}

#[tokio::test]
async fn a_plan_can_be_discarded() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 1 })),
        Reply::text("Planned."),
    ]));
    let sessions = sessions(model);
    sessions
        .set_mode("modes-discard", Mode::PlanCollect)
        .unwrap();
    sessions
        .send("modes-discard", "delete 1")
        .unwrap()
        .finish()
        .await;
    assert_eq!(sessions.plan("modes-discard").unwrap().len(), 1);
    sessions.discard_plan("modes-discard").unwrap();
    assert!(sessions.plan("modes-discard").unwrap().is_empty());
    assert!(done("modes-discard").is_empty());
}

/// A model that switches its session to `plan` when asked the second time.
struct SwitchingModel {
    script: ScriptedModel,
    sessions: std::sync::OnceLock<Sessions>,
    session: &'static str,
}

impl chalie_core::session::Model for SwitchingModel {
    fn stream(
        &self,
        request: chalie_core::session::ModelRequest,
    ) -> futures::stream::BoxStream<
        'static,
        Result<chalie_core::session::ModelChunk, chalie_core::session::ModelError>,
    > {
        if self.script.requests().len() == 1 {
            let sessions = self.sessions.get().unwrap();
            sessions.set_mode(self.session, Mode::Plan).unwrap();
        }
        self.script.stream(request)
    }
}

#[tokio::test]
async fn a_mode_change_mid_run_applies_to_the_next_call() {
    let session = "modes-switch";
    let model = Arc::new(SwitchingModel {
        script: ScriptedModel::new([
            Reply::tool_call("delete_task", json!({ "id": 1 })),
            Reply::tool_call("delete_task", json!({ "id": 2 })),
            Reply::text("Stopped at planning."),
        ]),
        sessions: std::sync::OnceLock::new(),
        session,
    });
    let sessions = sessions(model.clone());
    model.sessions.set(sessions.clone()).ok();
    sessions.set_mode(session, Mode::Auto).unwrap();
    let events = sessions
        .send(session, "delete 1 and 2")
        .unwrap()
        .finish()
        .await;
    assert!(
        events
            .iter()
            .any(failed("delete_task", "call-2", "plan-mode-read-only"))
    );
    assert_eq!(done(session), ["delete:1"]);
    assert_eq!(sessions.mode(session).unwrap(), Mode::Plan);
}

#[tokio::test]
async fn plan_mode_plans_with_reads_and_asks_once_for_missing_sections() {
    let sections = [
        "Implementation Plan",
        "Overview",
        "Requirements",
        "Architecture Changes",
        "Implementation Steps",
        "Testing Strategy",
        "Risks & Mitigations",
        "Success Criteria",
    ];
    let plan = |count: usize| -> String {
        sections[..count]
            .iter()
            .map(|section| format!("## {section}\nDetails.\n"))
            .collect()
    };
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("lookup", json!({ "query": "rent" })),
        Reply::text(&plan(6)),
        Reply::text(&plan(8)),
    ]));
    let sessions = sessions(model.clone());
    sessions.set_mode("modes-planner", Mode::Plan).unwrap();
    let events = sessions
        .send("modes-planner", "plan the rent clean-up")
        .unwrap()
        .finish()
        .await;
    // Reads still run in plan mode.
    assert_eq!(done("modes-planner"), ["lookup:rent"]);
    let requests = model.requests();
    assert!(
        requests[0]
            .messages
            .iter()
            .any(|message| message.role == Role::System
                && message.content.contains("plan mode")
                && message.content.contains("\"Risks & Mitigations\"")),
        "the planner instruction"
    );
    // The incomplete plan is withdrawn, not ended (`message.partially_completed`
    // would tell a client the message is over), and the model asked once.
    assert!(events.iter().any(|event| matches!(
        event,
        Event::MessageDiscarded { content, reason } if reason == "plan_incomplete" && *content == plan(6)
    )));
    assert!(
        !names(&events).contains(&"message.partially_completed"),
        "{:?}",
        names(&events)
    );
    assert!(requests[2].messages.iter().any(|message| {
        message
            .content
            .contains("missing these sections: Risks & Mitigations, Success Criteria")
    }));
    assert!(events.iter().any(|event| matches!(
        event,
        Event::MessageCompleted { content } if *content == plan(8)
    )));
    assert_eq!(requests.len(), 3);
}
