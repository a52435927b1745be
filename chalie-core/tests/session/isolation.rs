//! Isolation, attacked the way a user composes the parts: sessions over a
//! dispatcher built as the README builds one (the channel's core, no pins
//! unless stated), with a scripted model that calls what it was never
//! offered, sends fields it should not, or writes where the mode forbids.
//! Each refusal must leave nothing run, be on the record, and tell the
//! model what to do.

use std::sync::Arc;

use chalie_core::session::{Event, Mode, Reply, ScriptedModel, Sessions, ToolCallStatus};
use chalie_core::{
    Channel, Dispatcher, ToolCall, Turn, contracts::Profile, dispatch::ChannelTools,
    dispatch::Refusal, turn::CallStatus, turn::GateDecision,
};
use serde_json::json;

use crate::abilities::done;
use crate::{allow_all, registry};

/// Sessions as a user builds them: the chat's default tools, nothing
/// pinned, every test ability allowed by the policy (so only reachability
/// stands in the way).
fn plain_sessions(model: Arc<ScriptedModel>, dispatcher: Dispatcher) -> Sessions {
    Sessions::builder(Arc::new(dispatcher), model).build()
}

fn failure_code<'a>(events: &'a [Event], call: &str) -> Option<&'a str> {
    events.iter().find_map(|event| match event {
        Event::ToolFailed { call_id, error, .. } if call_id == call => Some(error.code.as_str()),
        _ => None,
    })
}

fn offered(request: &chalie_core::session::ModelRequest) -> Vec<String> {
    request
        .tools
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect()
}

#[tokio::test]
async fn a_never_offered_tool_is_refused_until_find_tools_activates_it() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("rename_task", json!({ "id": 7, "title": "bills" })),
        Reply::tool_call("find_tools", json!({ "query": ["rename a task"] })),
        Reply::tool_call("rename_task", json!({ "id": 7, "title": "bills" })),
        Reply::text("Renamed."),
    ]));
    let dispatcher = Dispatcher::builder(registry()).policy(allow_all()).build();
    let sessions = plain_sessions(Arc::clone(&model), dispatcher);
    sessions.set_mode("iso-never", Mode::Auto).unwrap();
    let run = sessions
        .send("iso-never", "rename task 7 to bills")
        .unwrap();
    let events = run.finish().await;

    // The first call was refused before anything ran, with what to do.
    assert_eq!(failure_code(&events, "call-1"), Some("tool-not-available"));
    assert_eq!(
        done("iso-never"),
        ["find_tools:rename a task", "rename:7:bills"],
        "only the discovered call ran"
    );
    let records = sessions.store().tool_calls(run.id()).unwrap();
    assert_eq!(records[0].status, ToolCallStatus::Failed);
    let refused = records[0].envelope.as_deref().unwrap();
    assert!(
        refused.contains("code=tool-not-available") && refused.contains("find_tools"),
        "{refused}"
    );
    assert_eq!(records[2].status, ToolCallStatus::Completed);

    // What the model was offered matches what it could call.
    let requests = model.requests();
    assert!(!offered(&requests[0]).contains(&"rename_task".to_owned()));
    assert!(offered(&requests[2]).contains(&"rename_task".to_owned()));
}

#[tokio::test]
async fn a_tool_pinned_on_another_channel_is_refused_on_this_one() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("lookup", json!({ "query": "rent" })),
        Reply::text("Nothing."),
    ]));
    let dispatcher = Dispatcher::builder(registry())
        .policy(allow_all())
        .pin(Channel::External, ["lookup"])
        .build();
    let sessions = plain_sessions(Arc::clone(&model), dispatcher);
    let run = sessions.send("iso-channel", "look up rent").unwrap();
    let events = run.finish().await;
    assert_eq!(failure_code(&events, "call-1"), Some("tool-not-available"));
    assert!(done("iso-channel").is_empty(), "nothing ran");
    assert!(!offered(&model.requests()[0]).contains(&"lookup".to_owned()));
}

#[tokio::test]
async fn a_tool_outside_the_channel_profile_stays_out_even_once_activated() {
    // `find_tools` activates `rename_task`, but this chat's profile enables
    // no toolset, so discovery cannot widen what the chat reaches.
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("find_tools", json!({ "query": ["rename a task"] })),
        Reply::tool_call("rename_task", json!({ "id": 7, "title": "bills" })),
        Reply::text("I could not."),
    ]));
    let dispatcher = Dispatcher::builder(registry())
        .policy(allow_all())
        .channel_tools(Channel::Chat, ChannelTools::new().profile(Profile::new()))
        .build();
    let sessions = plain_sessions(Arc::clone(&model), dispatcher);
    sessions.set_mode("iso-profile", Mode::Auto).unwrap();
    let run = sessions.send("iso-profile", "rename task 7").unwrap();
    let events = run.finish().await;
    assert_eq!(failure_code(&events, "call-2"), Some("tool-not-available"));
    assert_eq!(done("iso-profile"), ["find_tools:rename a task"]);
    assert!(!offered(&model.requests()[1]).contains(&"rename_task".to_owned()));
}

#[tokio::test]
async fn an_internal_write_is_blocked_in_plan_and_becomes_a_step_in_plan_collect() {
    for (session, mode) in [("iso-plan", Mode::Plan), ("iso-collect", Mode::PlanCollect)] {
        let model = Arc::new(ScriptedModel::new([
            Reply::tool_call("remember", json!({ "content": "dentist on Friday" })),
            Reply::text("Planned."),
        ]));
        let dispatcher = Dispatcher::builder(registry()).policy(allow_all()).build();
        let sessions = Sessions::builder(Arc::new(dispatcher), model)
            .pinned(["remember"])
            .build();
        sessions.set_mode(session, mode).unwrap();
        let run = sessions.send(session, "remember my dentist").unwrap();
        let events = run.finish().await;
        assert!(done(session).is_empty(), "{mode}: the internal write ran");
        match mode {
            Mode::Plan => {
                assert_eq!(failure_code(&events, "call-1"), Some("plan-mode-read-only"));
                assert!(sessions.plan(session).unwrap().is_empty());
            }
            _ => {
                let plan = sessions.plan(session).unwrap();
                assert_eq!(plan.len(), 1);
                assert_eq!(plan[0].tool, "remember");
                assert!(events.iter().any(|event| matches!(
                    event,
                    Event::ToolCompleted {
                        added_to_plan: true,
                        ..
                    }
                )));
            }
        }
    }
}

#[tokio::test]
async fn an_internal_write_still_runs_without_a_prompt_in_approval_mode() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("remember", json!({ "content": "tea" })),
        Reply::text("Noted."),
    ]));
    let dispatcher = Dispatcher::builder(registry()).build();
    let sessions = Sessions::builder(Arc::new(dispatcher), model)
        .pinned(["remember"])
        .build();
    let run = sessions
        .send("iso-internal", "remember I like tea")
        .unwrap();
    let events = run.finish().await;
    assert_eq!(done("iso-internal"), ["remember:tea"]);
    assert!(
        !events
            .iter()
            .any(|event| event.name() == "tool.approval_required")
    );
}

#[tokio::test]
async fn forged_permission_fields_are_refused_and_nothing_is_asked_or_run() {
    // A model trying to pass a write off as something else.
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call(
            "delete_task",
            json!({ "id": 7, "permission": "lookup", "internal": true, "decision": "allowed" }),
        ),
        Reply::text("Done?"),
    ]));
    let dispatcher = Dispatcher::builder(registry()).policy(allow_all()).build();
    let sessions = Sessions::builder(Arc::new(dispatcher), model)
        .pinned(["delete_task"])
        .build();
    let run = sessions.send("iso-forged", "delete task 7").unwrap();
    let events = run.finish().await;
    assert_eq!(failure_code(&events, "call-1"), Some("invalid-arguments"));
    assert!(done("iso-forged").is_empty());
    assert!(
        !events
            .iter()
            .any(|event| event.name() == "tool.approval_required"),
        "a malformed call never reaches an approver"
    );
}

#[tokio::test]
async fn direct_dispatch_refuses_an_unoffered_tool_on_the_trail() {
    let dispatcher = Dispatcher::builder(registry()).policy(allow_all()).build();
    let turn = Turn::builder(Channel::Chat)
        .session_id("iso-direct")
        .build();
    let done_call = dispatcher
        .dispatch(&turn, ToolCall::new("delete_task", json!({ "id": 7 })))
        .await;
    assert_eq!(done_call.refusal(), Some(Refusal::NotAvailable));
    let record = done_call.record();
    assert_eq!(record.status, CallStatus::Error);
    assert_eq!(record.decision, GateDecision::NotReached);
    assert_eq!(record.error_code.as_deref(), Some("tool-not-available"));
    assert_eq!(turn.trail().len(), 1);
    assert!(done("iso-direct").is_empty());

    // A pin in code is the typed grant: the same call then runs.
    let pinned = Turn::builder(Channel::Chat)
        .session_id("iso-direct")
        .pin(["delete_task"])
        .build();
    let ran = dispatcher
        .dispatch(&pinned, ToolCall::new("delete_task", json!({ "id": 7 })))
        .await;
    assert_eq!(ran.refusal(), None);
    assert_eq!(done("iso-direct"), ["delete:7"]);
}

#[tokio::test]
async fn a_background_result_reaches_the_model_in_the_next_request() {
    use crate::abilities::report_gate;

    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("slow_report", json!({ "async": true })),
        Reply::text("It is being built; I will tell you."),
        Reply::text("The report says 12 tasks are done."),
    ]));
    let mut policy = allow_all();
    policy
        .set(
            Channel::Chat,
            "slow_report",
            chalie_core::dispatch::Setting::Allow,
        )
        .unwrap();
    let dispatcher = Arc::new(Dispatcher::builder(registry()).policy(policy).build());
    let sessions = Sessions::builder(Arc::clone(&dispatcher), Arc::clone(&model) as _)
        .pinned(["slow_report"])
        .build();
    let session = "iso-background";
    let first = sessions.send(session, "build the report").unwrap();
    let events = first.finish().await;
    // A receipt, not yet `tool.completed`.
    assert!(!events.iter().any(|event| event.name() == "tool.completed"));
    let receipt = &model.requests()[1];
    assert!(
        receipt
            .messages
            .iter()
            .any(|message| message.content.contains("running in the background"))
    );

    report_gate(session).notify_one();
    finished_in_store(&sessions, first.id(), "call-1").await;

    let second = sessions.send(session, "is it done?").unwrap();
    let events = second.finish().await;
    assert!(events.iter().any(|event| matches!(
        event,
        Event::ToolCompleted { call_id, .. } if call_id == "call-1"
    )));
    // Delivered later, the call's card comes with its `tool.completed`.
    assert!(events.iter().any(|event| matches!(
        event,
        Event::ToolCompleted { call_id, card: Some(card), .. }
            if call_id == "call-1" && *card == json!({ "done": 12 })
    )));
    let delivered = &model.requests()[2];
    assert!(
        delivered
            .messages
            .iter()
            .any(|message| message.content.contains("report: 12 tasks done")),
        "the final envelope reached the model"
    );
    let record = &sessions.store().tool_calls(first.id()).unwrap()[0];
    assert_eq!(record.status, ToolCallStatus::Completed);
    assert_eq!(record.card, Some(json!({ "done": 12 })));
    // The history shows what the user and the assistant said, and the
    // call with its card; the notice that carried the envelope to the
    // model is not the user's and is left out.
    let history = sessions.history(session).unwrap();
    let said: Vec<&str> = history
        .iter()
        .map(|message| message.content.as_str())
        .collect();
    assert_eq!(
        said,
        [
            "build the report",
            "",
            "It is being built; I will tell you.",
            "is it done?",
            "The report says 12 tasks are done.",
        ]
    );
    assert_eq!(history[1].tool_calls[0].card, Some(json!({ "done": 12 })));
    assert!(
        record
            .envelope
            .as_deref()
            .unwrap()
            .contains("12 tasks done")
    );
}

#[tokio::test]
async fn internal_tools_never_offer_async() {
    let model = Arc::new(ScriptedModel::new([Reply::text("Hi.")]));
    let dispatcher = Dispatcher::builder(registry()).build();
    let sessions = Sessions::builder(Arc::new(dispatcher), Arc::clone(&model) as _)
        .pinned(["remember", "lookup"])
        .build();
    sessions.send("iso-async", "hello").unwrap().finish().await;
    let request = &model.requests()[0];
    let schema = |name: &str| {
        request
            .tools
            .iter()
            .find(|tool| tool.name() == name)
            .map(|tool| tool.parameters().clone())
            .unwrap()
    };
    assert!(schema("remember")["properties"].get("async").is_none());
    assert!(schema("lookup")["properties"].get("async").is_some());
}

/// Waits until the background call's final envelope is in the store.
pub async fn finished_in_store(sessions: &Sessions, run: &str, call: &str) {
    for _ in 0..500 {
        let records = sessions.store().tool_calls(run).unwrap();
        if records
            .iter()
            .any(|record| record.call_id == call && record.status == ToolCallStatus::Finished)
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("`{call}` never finished");
}
