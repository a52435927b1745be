//! An approval given through replica B completes the run replica A
//! started: promptly, through the database's notification, and once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chalie_core::session::{Event, Reply, RunStatus, ScriptedModel, SessionError, ToolCallStatus};
use serde_json::json;

use super::{fresh_database, replica};
use crate::abilities::done;
use crate::wait_for;

/// Far below the 60 s approval timeout a missed notification would wait out.
const PROMPTLY: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_on_b_completes_the_run_a_started_once() {
    let url = fresh_database().await;
    let session = "replicas-approve-on-b";
    let model_a = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 7 })),
        Reply::text("Deleted task 7."),
    ]));
    let a = replica(&url, model_a.clone());
    // B's model is never asked: B only answers the approval.
    let model_b = Arc::new(ScriptedModel::new([]));
    let b = replica(&url, model_b.clone());

    let run = a.send(session, "delete task 7").unwrap();
    wait_for(&run, "tool.approval_required").await;
    let pending = b.store().pending_approvals(session).unwrap();
    assert_eq!(pending.len(), 1, "B sees A's pending approval");
    assert!(done(session).is_empty(), "nothing runs before the approval");

    let approved_at = Instant::now();
    b.approve(run.id(), &pending[0].call_id).unwrap();
    let completed = tokio::time::timeout(PROMPTLY, wait_for(&run, "tool.completed"))
        .await
        .expect("A heard B's approval");
    let latency = approved_at.elapsed();
    assert!(matches!(
        completed,
        Event::ToolCompleted { success: true, .. }
    ));
    let events = tokio::time::timeout(PROMPTLY, run.finish()).await.unwrap();
    assert_eq!(
        events.last().map(Event::name),
        Some("run.settlement.completed")
    );
    assert!(latency < PROMPTLY, "{latency:?}");

    assert_eq!(done(session), ["delete:7"], "the write ran exactly once");
    assert_eq!(model_b.requests().len(), 0, "B ran nothing");
    // Answered once: a second answer, on either replica, is refused.
    for replica in [&a, &b] {
        assert!(matches!(
            replica.approve(run.id(), &pending[0].call_id),
            Err(SessionError::NotPending { .. })
        ));
    }
    let calls = b.store().tool_calls(run.id()).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolCallStatus::Completed);
    assert_eq!(
        b.store().run(run.id()).unwrap().unwrap().status,
        RunStatus::Completed
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejection_on_b_tells_a_s_model_and_runs_nothing() {
    let url = fresh_database().await;
    let session = "replicas-reject-on-b";
    let model_a = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 8 })),
        Reply::text("I did not delete it."),
    ]));
    let a = replica(&url, model_a.clone());
    let b = replica(&url, Arc::new(ScriptedModel::new([])));
    let run = a.send(session, "delete task 8").unwrap();
    wait_for(&run, "tool.approval_required").await;
    let call_id = b.store().pending_approvals(session).unwrap()[0]
        .call_id
        .clone();
    b.reject(run.id(), &call_id).unwrap();
    let events = tokio::time::timeout(PROMPTLY, run.finish()).await.unwrap();
    assert!(events.contains(&Event::ToolApprovalResponse {
        tool_call_id: call_id,
        approved: false
    }));
    assert!(done(session).is_empty());
}
