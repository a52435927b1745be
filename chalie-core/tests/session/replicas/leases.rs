//! A replica killed mid-run has its runs resumed by another, exactly once,
//! once its lease expires: no write runs twice, no tool result is lost.

use std::sync::Arc;
use std::time::Duration;

use chalie_core::session::{
    Event, Model, ModelChunk, ModelError, ModelRequest, Reply, Role, RunStatus, ScriptedModel,
    Sessions, ToolCallStatus,
};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::json;

use super::{LEASE, fresh_database, replica};
use crate::abilities::done;
use crate::wait_for;

/// Kills a replica the way a crash does: its runs stop where they are and
/// it renews nothing any more.
fn kill(replica: Sessions) {
    replica.shutdown();
    drop(replica);
}

/// Resumes on every replica at once; returns the runs each took.
async fn resume_everywhere(replicas: &[&Sessions]) -> Vec<Vec<chalie_core::session::Run>> {
    let tasks: Vec<_> = replicas
        .iter()
        .map(|replica| {
            let replica = (*replica).clone();
            tokio::spawn(async move { replica.resume().unwrap() })
        })
        .collect();
    let mut taken = Vec::new();
    for task in tasks {
        taken.push(task.await.unwrap());
    }
    taken
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_waiting_for_approval_moves_to_one_replica_when_its_own_dies() {
    let url = fresh_database().await;
    let session = "replicas-killed-waiting";
    let a = replica(
        &url,
        Arc::new(ScriptedModel::new([Reply::tool_call(
            "delete_task",
            json!({ "id": 3 }),
        )])),
    );
    let run = a.send(session, "delete task 3").unwrap();
    wait_for(&run, "tool.approval_required").await;
    let run_id = run.id().to_owned();
    kill(a);

    let model = || Arc::new(ScriptedModel::new([Reply::text("Deleted task 3.")]));
    let (b, c) = (replica(&url, model()), replica(&url, model()));
    // A's lease has not expired yet: nobody may take the run.
    let early = resume_everywhere(&[&b, &c]).await;
    assert!(
        early.iter().all(Vec::is_empty),
        "taken while A's lease held"
    );

    tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    let taken = resume_everywhere(&[&b, &c]).await;
    assert_eq!(
        taken.iter().map(Vec::len).sum::<usize>(),
        1,
        "exactly one replica resumes it"
    );
    let (owner, other) = if taken[0].is_empty() {
        (&c, &b)
    } else {
        (&b, &c)
    };
    let resumed = taken.into_iter().flatten().next().unwrap();
    assert_eq!(resumed.id(), run_id);
    wait_for(&resumed, "tool.approval_required").await;
    // The answer comes through the replica that does not hold the run.
    let call_id = other.store().pending_approvals(session).unwrap()[0]
        .call_id
        .clone();
    other.approve(&run_id, &call_id).unwrap();
    let events = tokio::time::timeout(Duration::from_secs(5), resumed.finish())
        .await
        .unwrap();
    assert_eq!(
        events.last().map(Event::name),
        Some("run.settlement.completed")
    );
    assert_eq!(done(session), ["delete:3"], "the write ran exactly once");
    assert_eq!(
        owner.store().run(&run_id).unwrap().unwrap().status,
        RunStatus::Completed
    );
    // Settled: nobody resumes it again.
    assert!(resume_everywhere(&[&b, &c]).await.iter().all(Vec::is_empty));
}

/// Calls `delete_task` once, then never answers: the replica dies while
/// it waits for the model.
struct CallsThenStalls;

impl Model for CallsThenStalls {
    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<ModelChunk, ModelError>> {
        let answered = request.messages.iter().any(|m| m.role == Role::Tool);
        if answered {
            return futures::stream::pending().boxed();
        }
        let call = chalie_core::session::ModelToolCall {
            id: "call-stalled".into(),
            name: "delete_task".into(),
            arguments: json!({ "id": 4 }),
        };
        futures::stream::iter([Ok(ModelChunk::ToolCall(call))]).boxed()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_after_a_write_ran_hands_over_its_result_not_the_write() {
    let url = fresh_database().await;
    let session = "replicas-killed-after-write";
    let a = replica(&url, Arc::new(CallsThenStalls));
    a.set_mode(session, chalie_core::session::Mode::Auto)
        .unwrap();
    let run = a.send(session, "delete task 4").unwrap();
    wait_for(&run, "tool.completed").await;
    // The result is stored with the call's record before the run asks the
    // model again, which is where A now hangs.
    let run_id = run.id().to_owned();
    let store = a.store().clone();
    let stored = async {
        while !store
            .messages(session)
            .unwrap()
            .iter()
            .any(|m| m.message.role == Role::Tool)
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), stored)
        .await
        .unwrap();
    kill(a);

    let model = Arc::new(ScriptedModel::new([Reply::text("Deleted task 4.")]));
    let b = replica(&url, model.clone());
    tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    let resumed = b.resume().unwrap();
    assert_eq!(resumed.len(), 1);
    let events = resumed[0].finish().await;
    assert!(events.contains(&Event::MessageCompleted {
        content: "Deleted task 4.".into()
    }));
    assert!(
        !events.iter().any(|e| e.name() == "tool.started"),
        "the write is not run again: {events:?}"
    );
    assert_eq!(done(session), ["delete:4"], "no duplicated write");
    // No lost result: B's model read A's envelope.
    let request = &model.requests()[0];
    assert!(request.messages.iter().any(|m| m.role == Role::Tool
        && m.content.starts_with("[delete_task(status=success)]")));
    let calls = b.store().tool_calls(&run_id).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolCallStatus::Completed);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_while_a_write_runs_hands_over_an_interrupted_write_not_a_second_run() {
    let url = fresh_database().await;
    let session = "replicas-killed-mid-write";
    let a = replica(
        &url,
        Arc::new(ScriptedModel::new([Reply::tool_call(
            "archive_task",
            json!({ "id": 5 }),
        )])),
    );
    a.set_mode(session, chalie_core::session::Mode::Auto)
        .unwrap();
    let run = a.send(session, "archive task 5").unwrap();
    wait_for(&run, "tool.started").await;
    let run_id = run.id().to_owned();
    // The body has begun (it never ends): A dies in the middle of the write.
    let began = async {
        while done(session).is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), began)
        .await
        .unwrap();
    let store = a.store().clone();
    assert_eq!(
        store.tool_calls(&run_id).unwrap()[0].status,
        ToolCallStatus::Executing,
        "recorded before the body ran"
    );
    kill(a);

    let model = Arc::new(ScriptedModel::new([Reply::text(
        "I could not confirm task 5 was archived.",
    )]));
    let b = replica(&url, model.clone());
    tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    let resumed = b.resume().unwrap();
    assert_eq!(resumed.len(), 1);
    let events = resumed[0].finish().await;
    assert!(
        !events.iter().any(|e| e.name() == "tool.started"),
        "the write is not run again: {events:?}"
    );
    assert!(events.iter().any(|e| matches!(
        e,
        Event::ToolFailed { error, .. } if error.code == "write-interrupted"
    )));
    assert_eq!(done(session), ["archive:5"], "no duplicated write");
    // No lost result: B's model reads that the write was interrupted.
    let request = &model.requests()[0];
    assert!(request.messages.iter().any(|m| m.role == Role::Tool
        && m.content.starts_with("[archive_task(status=error")
        && m.content.contains("write-interrupted")));
    let calls = b.store().tool_calls(&run_id).unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].status, ToolCallStatus::Failed);
    assert_eq!(
        b.store().run(&run_id).unwrap().unwrap().status,
        RunStatus::Completed
    );
}
