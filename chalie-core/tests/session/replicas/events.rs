//! A run's events can be followed over SSE from either replica: the one
//! driving it, or one behind the same load balancer that is not.

use std::sync::Arc;
use std::time::Duration;

use chalie_core::session::{Reply, ScriptedModel};
use serde_json::{Value, json};

use super::{fresh_database, replica};
use crate::abilities::done;
use crate::http::{ALICE, BOB, Frames, client, serve};

#[tokio::test(flavor = "multi_thread")]
async fn a_run_started_on_a_is_followed_and_approved_over_sse_on_b() {
    let url = fresh_database().await;
    let a = replica(
        &url,
        Arc::new(ScriptedModel::new([
            Reply::tool_call("delete_task", json!({ "id": 9 })),
            Reply::text("Deleted task 9."),
        ])),
    );
    let b = replica(&url, Arc::new(ScriptedModel::new([])));
    let (on_a, on_b) = (serve(a.clone()).await, serve(b.clone()).await);
    let alice = client(ALICE);

    let started = alice
        .post(format!("{on_a}/sessions/replicas-sse/messages"))
        .header("content-type", "application/json")
        .body(json!({ "content": "delete task 9" }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 201);
    let body: Value = serde_json::from_slice(&started.bytes().await.unwrap()).unwrap();
    let run_id = body["runId"].as_str().unwrap().to_owned();

    // Another principal is refused on B as on A.
    let bob = client(BOB)
        .get(format!("{on_b}/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(bob.status(), 403);

    let response = alice
        .get(format!("{on_b}/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut frames = Frames {
        response,
        buffer: String::new(),
    };
    let mut seen = Vec::new();
    let follow = async {
        loop {
            let (event, id, data) = frames.next().await.unwrap();
            assert_eq!(id, seen.len().to_string());
            seen.push(event.clone());
            if event == "tool.approval_required" {
                let call_id = data["toolCallId"].as_str().unwrap();
                let approved = alice
                    .post(format!("{on_b}/runs/{run_id}/tools/{call_id}/approve"))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(approved.status(), 204);
            }
            if event == "run.settlement.completed" {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), follow)
        .await
        .expect("B's stream reached the settlement");
    assert!(
        frames.next().await.is_none(),
        "B's stream ends with the run"
    );

    // B streamed what A's own log holds, event for event.
    let on_a_log: Vec<String> = a
        .run(&run_id)
        .unwrap()
        .finish()
        .await
        .iter()
        .map(|event| event.name().to_owned())
        .collect();
    assert_eq!(seen, on_a_log);
    assert_eq!(done("replicas-sse"), ["delete:9"]);
}
