//! A process that stops while an approval is pending loses nothing: the
//! database reopened, the approval can still be given and the run completes.

use std::sync::Arc;

use chalie_core::session::{
    ApprovalState, Event, Reply, RunStatus, ScriptedModel, SessionStore, SqliteStore,
    ToolCallStatus,
};
use serde_json::json;

use crate::abilities::done;
use crate::{allow_all, names, sessions_with, wait_for};

/// Runs until the write waits for approval, then stops "the process".
async fn stop_while_pending(path: &std::path::Path, session: &str) -> String {
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(path).unwrap());
    let model = Arc::new(ScriptedModel::new([Reply::tool_call(
        "delete_task",
        json!({ "id": 7 }),
    )]));
    let sessions = sessions_with(allow_all(), model, Some(store));
    let run = sessions.send(session, "delete task 7").unwrap();
    wait_for(&run, "tool.approval_required").await;
    sessions.shutdown();
    run.id().to_owned()
}

/// Rejected while the process was down, the resumed call goes straight
/// from the answer to its failure: it never starts, as live.
#[tokio::test]
async fn a_rejection_given_while_down_fails_the_call_without_starting_it() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("sessions.db");
    let session = "restart-reject-first";
    let run_id = stop_while_pending(&path, session).await;

    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
    let model = Arc::new(ScriptedModel::new([Reply::deltas(["Kept task 7."])]));
    let sessions = sessions_with(allow_all(), model, Some(store));
    sessions.reject(&run_id, "call-1").unwrap();
    let resumed = sessions.resume().unwrap();
    let events = resumed[0].finish().await;
    assert_eq!(
        names(&events),
        [
            "run.started",
            "agent.phase.changed", // executing_tool
            "tool.approval_response",
            "tool.failed",
            "agent.phase.changed", // reading_result
            "message.delta",
            "agent.phase.changed", // verifying
            "message.completed",
            "run.settlement.completed",
        ]
    );
    assert!(done(session).is_empty());
}

#[tokio::test]
async fn an_approval_given_after_a_restart_completes_the_run() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("sessions.db");
    let session = "restart-approve-first";
    let run_id = stop_while_pending(&path, session).await;
    assert!(done(session).is_empty());

    // A new process: the same database, a model that answers the rest.
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
    let pending = store.pending_approvals(session).unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].run_id.as_str(), pending[0].call_id.as_str()),
        (run_id.as_str(), "call-1")
    );
    let model = Arc::new(ScriptedModel::new([Reply::text("Deleted task 7.")]));
    let sessions = sessions_with(allow_all(), model.clone(), Some(store.clone()));
    sessions.approve(&run_id, "call-1").unwrap();
    let resumed = sessions.resume().unwrap();
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].id(), run_id);
    let events = resumed[0].finish().await;
    assert_eq!(
        names(&events),
        [
            "run.started",
            "agent.phase.changed", // executing_tool
            // Answered while the process was down: the call starts after
            // the answer, as it would have live.
            "tool.approval_response",
            "tool.started",
            "tool.completed",
            "agent.phase.changed", // reading_result
            "message.delta",
            "message.delta",
            "message.delta",
            "agent.phase.changed", // verifying
            "message.completed",
            "run.settlement.completed",
        ]
    );
    assert!(events.contains(&Event::ToolApprovalResponse {
        tool_call_id: "call-1".into(),
        approved: true
    }));
    assert_eq!(done(session), ["delete:7"], "ran exactly once");
    // The model saw the whole conversation, the envelope last.
    let request = &model.requests()[0];
    assert_eq!(request.messages[0].content, "delete task 7");
    assert!(
        request.messages[2]
            .content
            .starts_with("[delete_task(status=success)]")
    );
    assert_eq!(
        store.run(&run_id).unwrap().unwrap().status,
        RunStatus::Completed
    );
    let calls = store.tool_calls(&run_id).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolCallStatus::Completed);
    assert_eq!(
        store.approval(&run_id, "call-1").unwrap().unwrap().state,
        ApprovalState::Approved
    );
}

#[tokio::test]
async fn a_resumed_run_asks_again_and_waits_for_the_answer() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("sessions.db");
    let session = "restart-resume-first";
    let run_id = stop_while_pending(&path, session).await;

    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
    let model = Arc::new(ScriptedModel::new([Reply::text("Done.")]));
    let sessions = sessions_with(allow_all(), model, Some(store));
    let resumed = sessions.resume().unwrap();
    let run = &resumed[0];
    let asked = wait_for(run, "tool.approval_required").await;
    assert_eq!(
        asked,
        Event::ToolApprovalRequired {
            tool_key: "delete_task".into(),
            tool_call_id: "call-1".into(),
            input: json!({ "id": 7 })
        }
    );
    assert!(done(session).is_empty());
    sessions.approve(&run_id, "call-1").unwrap();
    let events = run.finish().await;
    assert_eq!(
        events.last().map(Event::name),
        Some("run.settlement.completed")
    );
    assert_eq!(done(session), ["delete:7"]);
    assert!(
        sessions.resume().unwrap().is_empty(),
        "nothing left to resume"
    );
}

#[tokio::test]
async fn a_plan_stopped_mid_way_resumes_its_remaining_steps_as_auto() {
    use chalie_core::session::Mode;
    use chalie_core::{Channel, dispatch::Setting};

    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("sessions.db");
    let session = "restart-plan";
    // delete_task asks by policy, even in a plan; rename_task is allowed.
    let mut policy = allow_all();
    policy
        .set(Channel::Chat, "delete_task", Setting::Ask)
        .unwrap();
    let run_id = {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        // `rename_task` is not pinned: the model finds it first, and the
        // plan's run reaches it because the plan holds it.
        let model = Arc::new(ScriptedModel::new([
            Reply::tool_call("find_tools", json!({ "query": ["rename a task"] })),
            Reply::tool_call("rename_task", json!({ "id": 8, "title": "bills" }))
                .then_tool_call("delete_task", json!({ "id": 7 })),
            Reply::text("Planned."),
        ]));
        let sessions = crate::sessions_with(policy.clone(), model, Some(store));
        sessions.set_mode(session, Mode::PlanCollect).unwrap();
        sessions.send(session, "tidy up").unwrap().finish().await;
        sessions.set_mode(session, Mode::Approval).unwrap();
        let run = sessions.execute_plan(session).unwrap();
        wait_for(&run, "tool.approval_required").await;
        sessions.shutdown();
        run.id().to_owned()
    };
    assert_eq!(
        done(session),
        ["find_tools:rename a task", "rename:8:bills"]
    );

    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
    let model = Arc::new(ScriptedModel::new([Reply::deltas([
        "Renamed 8, deleted 7.",
    ])]));
    let sessions = crate::sessions_with(policy, model, Some(store));
    sessions.approve(&run_id, "call-3").unwrap();
    let resumed = sessions.resume().unwrap();
    assert_eq!(resumed.len(), 1);
    let events = resumed[0].finish().await;
    assert_eq!(
        names(&events),
        [
            "run.started",
            "agent.phase.changed",
            "tool.approval_response",
            "tool.started",
            "tool.completed",
            "agent.phase.changed",
            "message.delta",
            "agent.phase.changed",
            "message.completed",
            "run.settlement.completed",
        ]
    );
    assert_eq!(
        done(session),
        ["find_tools:rename a task", "rename:8:bills", "delete:7"]
    );
}

#[tokio::test]
async fn a_background_result_reaches_the_model_after_a_restart_and_a_cut_off_one_is_reported() {
    use chalie_core::{Channel, Dispatcher, dispatch::Setting};

    use crate::abilities::report_gate;
    use crate::isolation::finished_in_store;

    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("sessions.db");
    let mut policy = allow_all();
    policy
        .set(Channel::Chat, "slow_report", Setting::Allow)
        .unwrap();
    let build = |model: Arc<ScriptedModel>| {
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        let dispatcher = Dispatcher::builder(crate::registry())
            .policy(policy.clone())
            .build();
        chalie_core::session::Sessions::builder(Arc::new(dispatcher), model)
            .store(store)
            .pinned(["slow_report"])
            .build()
    };
    let asks = |session: &str| {
        let session = session.to_owned();
        async move {
            let model = Arc::new(ScriptedModel::new([
                Reply::tool_call("slow_report", json!({ "async": true })),
                Reply::text("It is being built."),
            ]));
            let sessions = build(model);
            let run = sessions.send(&session, "build the report").unwrap();
            run.finish().await;
            (sessions, run.id().to_owned())
        }
    };

    // Finished before the stop, never delivered: it survives the restart.
    let (first, finished_run) = asks("restart-bg-done").await;
    report_gate("restart-bg-done").notify_one();
    finished_in_store(&first, &finished_run, "call-1").await;
    first.shutdown();
    drop(first);
    // Cut off by the stop: still running when the process went away.
    let (second, cut_run) = asks("restart-bg-cut").await;
    second.shutdown();
    drop(second);

    let model = Arc::new(ScriptedModel::new([
        Reply::text("Your report: 12 tasks done."),
        Reply::text("The report did not finish; shall I start it again?"),
    ]));
    let restarted = build(Arc::clone(&model));

    let events = restarted
        .send("restart-bg-done", "is it done?")
        .unwrap()
        .finish()
        .await;
    assert!(events.iter().any(|event| matches!(
        event,
        Event::ToolCompleted { call_id, .. } if call_id == "call-1"
    )));
    assert!(
        model.requests()[0]
            .messages
            .iter()
            .any(|message| message.content.contains("report: 12 tasks done"))
    );
    let record = &restarted.store().tool_calls(&finished_run).unwrap()[0];
    assert_eq!(record.status, ToolCallStatus::Completed);

    let events = restarted
        .send("restart-bg-cut", "is it done?")
        .unwrap()
        .finish()
        .await;
    assert!(events.iter().any(|event| matches!(
        event,
        Event::ToolFailed { call_id, error, .. }
            if call_id == "call-1" && error.code == "background-interrupted"
    )));
    assert!(
        model.requests()[1]
            .messages
            .iter()
            .any(|message| message.content.contains("background-interrupted"))
    );
    let record = &restarted.store().tool_calls(&cut_run).unwrap()[0];
    assert_eq!(record.status, ToolCallStatus::Failed);
    assert!(
        done("restart-bg-cut").is_empty(),
        "the cut-off report never ran"
    );
}

/// Sessions on the SQLite file at `path` that reach and allow `archive_task`
/// (a write that never finishes), and nothing else.
fn archiving(path: &std::path::Path, model: Arc<ScriptedModel>) -> chalie_core::session::Sessions {
    let mut policy = chalie_core::dispatch::Policy::new();
    policy
        .set(
            chalie_core::Channel::Chat,
            "archive_task",
            chalie_core::dispatch::Setting::Allow,
        )
        .unwrap();
    let dispatcher = chalie_core::Dispatcher::builder(crate::registry())
        .policy(policy)
        .build();
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(path).unwrap());
    chalie_core::session::Sessions::builder(Arc::new(dispatcher), model)
        .store(store)
        .pinned(["archive_task"])
        .build()
}

#[tokio::test]
async fn an_approved_write_cut_off_by_a_stop_is_reported_after_the_restart_not_run_again() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("sessions.db");
    let session = "restart-mid-write";
    let before = archiving(
        &path,
        Arc::new(ScriptedModel::new([Reply::tool_call(
            "archive_task",
            json!({ "id": 9 }),
        )])),
    );
    let run = before.send(session, "archive task 9").unwrap();
    let Event::ToolApprovalRequired { tool_call_id, .. } =
        wait_for(&run, "tool.approval_required").await
    else {
        unreachable!("wait_for returns the event it was asked for")
    };
    before.approve(run.id(), &tool_call_id).unwrap();
    while done(session).is_empty() {
        tokio::task::yield_now().await;
    }
    let run_id = run.id().to_owned();
    // The process stops while the approved write's body runs.
    before.shutdown();
    drop(before);

    let model = Arc::new(ScriptedModel::new([Reply::text("Task 9 may be archived.")]));
    let after = archiving(&path, model.clone());
    let resumed = after.resume().unwrap();
    assert_eq!(resumed.len(), 1);
    let events = resumed[0].finish().await;
    assert!(
        !names(&events).contains(&"tool.started"),
        "the write is not run again: {events:?}"
    );
    assert!(
        !names(&events).contains(&"tool.approval_required"),
        "nor asked about again"
    );
    assert_eq!(done(session), ["archive:9"], "ran once");
    let request = &model.requests()[0];
    assert!(
        request
            .messages
            .iter()
            .any(|m| m.content.starts_with("[archive_task(status=error")
                && m.content.contains("write-interrupted"))
    );
    let calls = after.store().tool_calls(&run_id).unwrap();
    assert_eq!(calls[0].status, ToolCallStatus::Failed);
    assert_eq!(
        after.store().run(&run_id).unwrap().unwrap().status,
        RunStatus::Completed
    );
}
