//! The run loop, event for event: a read call, several cycles, progress,
//! discovery, the narrated-action retry, a model without tools, the rate
//! limit, the iteration cap and a failing model.

use std::sync::Arc;
use std::time::Duration;

use chalie_core::session::{Activity, Event, Phase, Reply, Run, ScriptedModel, Sessions};
use chalie_core::{Dispatcher, dispatch::RateLimit};
use serde_json::json;

use crate::abilities::done;
use crate::{allow_all, names, registry, sessions};

/// The events with timings zeroed, to compare exactly.
pub fn stable(events: Vec<Event>) -> Vec<Event> {
    events
        .into_iter()
        .map(|mut event| {
            match &mut event {
                Event::ToolCompleted { execution_ms, .. }
                | Event::ToolFailed { execution_ms, .. } => *execution_ms = 0,
                _ => {}
            }
            event
        })
        .collect()
}

/// The first event of every run.
pub fn run_started(run: &Run) -> Event {
    Event::RunStarted {
        run_id: run.id().into(),
        session_id: run.session_id().into(),
    }
}

pub fn phase(phase: Phase) -> Event {
    Event::AgentPhaseChanged { phase }
}

pub fn delta(text: &str) -> Event {
    Event::MessageDelta { delta: text.into() }
}

pub fn started(tool: &str, call: &str, label: &str) -> Event {
    Event::ToolStarted {
        tool_key: tool.into(),
        call_id: call.into(),
        activity: Activity {
            label: label.into(),
        },
    }
}

pub fn completed(tool: &str, call: &str) -> Event {
    Event::ToolCompleted {
        tool_key: tool.into(),
        call_id: call.into(),
        execution_ms: 0,
        success: true,
        reused: false,
        added_to_plan: false,
        card: None,
    }
}

pub fn settled(run_id: &str, status: &str, tool_calls: usize, iterations: usize) -> Event {
    Event::RunSettlementCompleted {
        run_id: run_id.into(),
        status: status.into(),
        tool_calls,
        iterations,
    }
}

#[tokio::test]
async fn a_read_call_streams_progress_then_the_answer() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("list_tasks", json!({})),
        Reply::text("One task: pay rent."),
    ]));
    let sessions = sessions(model.clone());
    let run = sessions.send("runs-read", "what are my tasks?").unwrap();
    let events = stable(run.finish().await);
    assert_eq!(
        events,
        vec![
            run_started(&run),
            phase(Phase::Planning),
            phase(Phase::ExecutingTool),
            started(
                "list_tasks",
                "call-1",
                "Lists the user's open tasks, reporting progress page by page"
            ),
            Event::ToolProgress {
                tool_key: "list_tasks".into(),
                call_id: "call-1".into(),
                message: "fetched page 1 of 2".into()
            },
            Event::ToolProgress {
                tool_key: "list_tasks".into(),
                call_id: "call-1".into(),
                message: "fetched page 2 of 2".into()
            },
            completed("list_tasks", "call-1"),
            phase(Phase::ReadingResult),
            // "One" could open "One moment…", a narration: held one word.
            delta("One task:"),
            delta(" pay"),
            delta(" rent."),
            phase(Phase::Verifying),
            Event::MessageCompleted {
                content: "One task: pay rent.".into()
            },
            settled(run.id(), "completed", 1, 2),
        ]
    );
    assert_eq!(done("runs-read"), ["list_tasks"]);
    // The model read the envelope on its second request.
    let second = &model.requests()[1];
    let envelope = &second.messages.last().unwrap().content;
    assert!(
        envelope.starts_with("[list_tasks(status=success)]"),
        "{envelope}"
    );
    assert_eq!(
        second.tool_names(),
        ["find_tools", "lookup", "list_tasks", "delete_task"]
    );
}

#[tokio::test]
async fn a_run_cycles_until_the_model_answers_and_reuses_a_repeated_read() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call(
            "lookup",
            json!({ "query": "rust", "act_summary": "Reading about Rust" }),
        ),
        Reply::tool_call("lookup", json!({ "query": "tokio" }))
            .then_tool_call("lookup", json!({ "query": "rust" })),
        Reply::text("Both are covered."),
    ]));
    let sessions = sessions(model.clone());
    let run = sessions
        .send("runs-cycles", "tell me about rust and tokio")
        .unwrap();
    let events = stable(run.finish().await);
    let mut reused = completed("lookup", "call-3");
    if let Event::ToolCompleted { reused: flag, .. } = &mut reused {
        *flag = true;
    }
    assert_eq!(
        events,
        vec![
            run_started(&run),
            phase(Phase::Planning),
            phase(Phase::ExecutingTool),
            started("lookup", "call-1", "Reading about Rust"),
            // The dispatcher reports the act_summary as the call's first progress.
            Event::ToolProgress {
                tool_key: "lookup".into(),
                call_id: "call-1".into(),
                message: "Reading about Rust".into()
            },
            completed("lookup", "call-1"),
            phase(Phase::ReadingResult),
            phase(Phase::ExecutingTool),
            started("lookup", "call-2", "Looking it up"),
            completed("lookup", "call-2"),
            started("lookup", "call-3", "Looking it up"),
            reused,
            phase(Phase::ReadingResult),
            delta("Both"),
            delta(" are"),
            delta(" covered."),
            phase(Phase::Verifying),
            Event::MessageCompleted {
                content: "Both are covered.".into()
            },
            settled(run.id(), "completed", 3, 3),
        ]
    );
    // The repeated read ran once.
    assert_eq!(done("runs-cycles"), ["lookup:rust", "lookup:tokio"]);
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn discovery_puts_activated_abilities_into_the_next_request() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("find_tools", json!({ "query": ["rename a task"] })),
        Reply::tool_call("rename_task", json!({ "id": 7, "title": "bills" })),
        Reply::text("Renamed."),
    ]));
    let sessions = sessions(model.clone());
    sessions
        .set_mode("runs-discovery", chalie_core::session::Mode::Auto)
        .unwrap();
    let events = sessions
        .send("runs-discovery", "rename task 7 to bills")
        .unwrap()
        .finish()
        .await;
    let resolved: Vec<_> = events
        .iter()
        .filter(|event| event.name() == "capability.resolved")
        .collect();
    assert_eq!(
        resolved,
        [&Event::CapabilityResolved {
            tools: vec!["rename_task".into()]
        }]
    );
    let requests = model.requests();
    assert!(!requests[0].tool_names().contains(&"rename_task"));
    assert_eq!(requests[1].tool_names().last(), Some(&"rename_task"));
    assert_eq!(
        done("runs-discovery"),
        ["find_tools:rename a task", "rename:7:bills"]
    );
}

#[tokio::test]
async fn a_narrated_action_is_retried_once_and_its_prose_never_streams() {
    let model = Arc::new(ScriptedModel::new([
        Reply::text("I need to fetch your tasks first."),
        Reply::tool_call("list_tasks", json!({})),
        Reply::text("I see one task."),
    ]));
    let sessions = sessions(model.clone());
    let run = sessions
        .send("runs-narration", "what are my tasks?")
        .unwrap();
    let events = stable(run.finish().await);
    assert_eq!(
        names(&events),
        [
            "run.started",
            "agent.phase.changed", // planning
            "agent.phase.changed", // verifying: the narration is caught
            "capability.resolved", // discovery ran over the narrated text
            "agent.phase.changed", // planning again, with the stronger instruction
            "agent.phase.changed", // executing_tool
            "tool.started",
            "tool.progress",
            "tool.progress",
            "tool.completed",
            "agent.phase.changed", // reading_result
            "message.delta",
            "message.delta",
            "message.delta",
            "message.delta",
            "agent.phase.changed", // verifying
            "message.completed",
            "run.settlement.completed",
        ]
    );
    let streamed: String = events
        .iter()
        .filter_map(|event| match event {
            Event::MessageDelta { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    // A retried run may open with "I": only the final answer streams.
    assert_eq!(streamed, "I see one task.");
    assert!(
        !events
            .iter()
            .any(|event| event.to_json().contains("fetch your tasks"))
    );
    let retry = &model.requests()[1];
    let last = retry.messages.last().unwrap();
    assert!(
        last.content
            .contains("described an action instead of taking it"),
        "{}",
        last.content
    );
}

#[tokio::test]
async fn a_narrated_action_widens_the_tools_by_discovery_before_the_retry() {
    let model = Arc::new(ScriptedModel::new([
        Reply::text("I'll rename task 7 to bills now."),
        Reply::tool_call("rename_task", json!({ "id": 7, "title": "bills" })),
        Reply::text("Renamed."),
    ]));
    let sessions = sessions(model.clone());
    sessions
        .set_mode("runs-narration-discovery", chalie_core::session::Mode::Auto)
        .unwrap();
    let events = sessions
        .send("runs-narration-discovery", "rename task 7 to bills")
        .unwrap()
        .finish()
        .await;
    assert_eq!(
        names(&events)[..5],
        [
            "run.started",
            "agent.phase.changed", // planning
            "agent.phase.changed", // verifying: a narration
            "capability.resolved", // discovery over the narrated text
            "agent.phase.changed", // planning the retry
        ]
    );
    let requests = model.requests();
    assert!(!requests[0].tool_names().contains(&"rename_task"));
    assert!(requests[1].tool_names().contains(&"rename_task"));
    assert_eq!(
        done("runs-narration-discovery"),
        [
            "find_tools:I'll rename task 7 to bills now.",
            "rename:7:bills"
        ]
    );
}

#[tokio::test]
async fn a_second_narration_is_the_answer() {
    let model = Arc::new(ScriptedModel::new([
        Reply::text("Let me check that."),
        Reply::text("Let me check that."),
    ]));
    let sessions = sessions(model.clone());
    let events = sessions
        .send("runs-narration-twice", "hm?")
        .unwrap()
        .finish()
        .await;
    assert_eq!(
        events.iter().rev().nth(1),
        Some(&Event::MessageCompleted {
            content: "Let me check that.".into()
        })
    );
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_model_without_tools_runs_conversationally() {
    let model =
        Arc::new(ScriptedModel::new([Reply::text("I will think about it.")]).without_tools());
    let sessions = sessions(model.clone());
    let run = sessions.send("runs-no-tools", "hello").unwrap();
    let events = run.finish().await;
    assert_eq!(
        events,
        vec![
            run_started(&run),
            Event::RunConversational {
                reason: "the model cannot call tools; none are offered".into()
            },
            phase(Phase::Planning),
            delta("I"),
            delta(" will"),
            delta(" think"),
            delta(" about"),
            delta(" it."),
            phase(Phase::Verifying),
            Event::MessageCompleted {
                content: "I will think about it.".into()
            },
            settled(run.id(), "completed", 0, 1),
        ]
    );
    assert!(model.requests()[0].tools.is_empty());
}

#[tokio::test]
async fn at_the_rate_limit_the_run_goes_on_without_tools_and_the_model_is_told() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("lookup", json!({ "query": "a" })),
        Reply::tool_call("lookup", json!({ "query": "b" })),
        Reply::text("Here is what I found about a."),
    ]));
    let dispatcher = Dispatcher::builder(registry())
        .policy(allow_all())
        .rate_limit(RateLimit::new(1, Duration::from_secs(60)))
        .build();
    let sessions = Sessions::builder(Arc::new(dispatcher), model.clone())
        .pinned(["lookup"])
        .build();
    let events = stable(
        sessions
            .send("runs-rate", "look up a and b")
            .unwrap()
            .finish()
            .await,
    );
    let failed = events
        .iter()
        .find(|event| event.name() == "tool.failed")
        .unwrap();
    assert!(matches!(failed, Event::ToolFailed { error, .. } if error.code == "rate-limited"));
    assert!(events.contains(&Event::ToolDegraded {
        tool_key: "lookup".into(),
        call_id: "call-2".into(),
        reason: "rate_limited".into()
    }));
    assert_eq!(
        events.iter().rev().nth(1).map(Event::name),
        Some("message.completed")
    );
    let last_request = &model.requests()[2];
    assert!(last_request.tools.is_empty());
    assert!(
        last_request
            .messages
            .last()
            .unwrap()
            .content
            .contains("rate limit was reached")
    );
}

#[tokio::test]
async fn the_iteration_cap_ends_the_run_partially() {
    let model = Arc::new(ScriptedModel::new([
        Reply::text("Checking").then_tool_call("lookup", json!({ "query": "x" })),
        Reply::tool_call("lookup", json!({ "query": "y" })),
    ]));
    let dispatcher = Dispatcher::builder(registry()).policy(allow_all()).build();
    let sessions = Sessions::builder(Arc::new(dispatcher), model)
        .pinned(["lookup"])
        .max_iterations(2)
        .build();
    let run = sessions.send("runs-cap", "loop").unwrap();
    let events = run.finish().await;
    let tail: Vec<_> = events.iter().rev().take(2).rev().cloned().collect();
    assert_eq!(
        tail,
        [
            Event::MessagePartiallyCompleted {
                content: "Checking".into(),
                reason: "iteration_limit".into()
            },
            settled(run.id(), "partial", 2, 2),
        ]
    );
}

#[tokio::test]
async fn a_failing_model_fails_the_run_with_what_it_said() {
    let model = Arc::new(ScriptedModel::new([
        Reply::text("Partly").then_error("connection reset")
    ]));
    let sessions = sessions(model);
    let run = sessions.send("runs-fail", "hi").unwrap();
    let events = run.finish().await;
    assert_eq!(
        events[2..],
        [
            delta("Partly"),
            Event::MessagePartiallyCompleted {
                content: "Partly".into(),
                reason: "model_error".into()
            },
            Event::RunFailed {
                error: "the model failed: connection reset".into()
            },
            settled(run.id(), "failed", 0, 1),
        ]
    );
}
