//! The event contract as a client sees it: the router served on a real
//! socket, a run's `text/event-stream` read as it arrives, each `data:`
//! line parsed. Every run opens with `run.started`; a call that asks
//! starts only after the answer (and never when the answer is no);
//! `plan.step_added` names the plan the client then runs; the tool events
//! carry the ability's sanitized card, and the session's history gives
//! the cards back after a reload, to its owner only.

use std::sync::Arc;

use chalie_core::session::{Reply, ScriptedModel, Sessions};
use chalie_core::{Channel, Dispatcher, dispatch::Policy, dispatch::Setting};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::abilities::done;
use crate::http::{ALICE, BOB, client, serve};
use crate::registry;

/// One run's events as the client read them off the wire.
struct Read {
    /// `type` of each event, in order.
    names: Vec<String>,
    /// Each event's JSON.
    events: Vec<Value>,
}

impl Read {
    fn event(&self, name: &str) -> &Value {
        self.events
            .iter()
            .find(|event| event["type"] == name)
            .unwrap_or_else(|| panic!("no `{name}` in {:?}", self.names))
    }
}

/// Reads `GET /runs/{run_id}/events` incrementally until the settlement,
/// calling `on_event` with each event as it arrives (to answer an approval
/// mid-stream), and checks the stream then ends.
async fn read_run<F, Fut>(base: &str, run_id: &str, mut on_event: F) -> Read
where
    F: FnMut(Value) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut response = client(ALICE)
        .get(format!("{base}/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut buffer = Vec::<u8>::new();
    let mut read = Read {
        names: Vec::new(),
        events: Vec::new(),
    };
    loop {
        // One frame ends at a blank line; a chunk may hold part of one or several.
        while let Some(end) = buffer.windows(2).position(|pair| pair == b"\n\n") {
            let frame: Vec<u8> = buffer.drain(..end + 2).collect();
            let frame = String::from_utf8(frame).unwrap();
            let data: String = frame
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect();
            if data.is_empty() {
                continue; // a keep-alive comment
            }
            let event: Value = serde_json::from_str(&data).unwrap();
            let name = event["type"].as_str().unwrap().to_owned();
            read.names.push(name.clone());
            read.events.push(event.clone());
            on_event(event).await;
            if name == "run.settlement.completed" {
                assert!(
                    response.chunk().await.unwrap().is_none() && buffer.is_empty(),
                    "the stream ends with the run"
                );
                return read;
            }
        }
        let chunk = response
            .chunk()
            .await
            .unwrap()
            .expect("the stream ended before the run settled");
        buffer.extend_from_slice(&chunk);
    }
}

async fn body(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

async fn post(base: &str, path: &str, body_json: Value) -> reqwest::Response {
    client(ALICE)
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(body_json.to_string())
        .send()
        .await
        .unwrap()
}

/// Alice sends `content` to `session`; returns the run's id.
async fn send(base: &str, session: &str, content: &str) -> String {
    let started = post(
        base,
        &format!("/sessions/{session}/messages"),
        json!({ "content": content }),
    )
    .await;
    assert_eq!(started.status(), StatusCode::CREATED);
    body(started).await["runId"].as_str().unwrap().to_owned()
}

/// Answers `call` of `run` (`approve` or `reject`) as Alice.
async fn answer(base: &str, run_id: &str, call: &str, verdict: &str) {
    let response = post(
        base,
        &format!("/runs/{run_id}/tools/{call}/{verdict}"),
        json!({}),
    )
    .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
}

/// Answers the run's one approval with `verdict` as soon as it is asked.
async fn read_answering(base: &str, run_id: &str, verdict: &'static str) -> Read {
    read_run(base, run_id, |event| {
        let (base, run_id) = (base.to_owned(), run_id.to_owned());
        async move {
            if event["type"] == "tool.approval_required" {
                let call = event["toolCallId"].as_str().unwrap().to_owned();
                answer(&base, &run_id, &call, verdict).await;
            }
        }
    })
    .await
}

/// Composed as the README tells a host: a policy allowing the two
/// abilities on chat (a write still asks in `approval` mode), both pinned.
fn composed(model: Arc<ScriptedModel>) -> Sessions {
    let mut policy = Policy::new();
    for name in ["card_notes", "shelve_task"] {
        policy.set(Channel::Chat, name, Setting::Allow).unwrap();
    }
    let dispatcher = Dispatcher::builder(registry()).policy(policy).build();
    Sessions::builder(Arc::new(dispatcher), model)
        .pinned(["card_notes", "shelve_task"])
        .build()
}

const PHASE: &str = "agent.phase.changed";

#[tokio::test]
async fn the_event_stream_keeps_its_order_and_the_history_gives_the_cards_back() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("card_notes", json!({ "query": "rent" })),
        Reply::deltas(["Rent is due."]),
        Reply::tool_call(
            "shelve_task",
            json!({ "id": 7, "act_summary": "Shelving task 7" }),
        ),
        Reply::deltas(["Shelved."]),
        Reply::tool_call("shelve_task", json!({ "id": 8 })),
        Reply::deltas(["Kept it."]),
        Reply::tool_call("shelve_task", json!({ "id": 9 })),
        Reply::deltas(["Planned."]),
        Reply::deltas(["Task 9 is shelved."]),
    ]));
    let base = serve(composed(model)).await;
    let opened = post(&base, "/sessions", json!({})).await;
    assert_eq!(opened.status(), StatusCode::CREATED);
    let session = body(opened).await["id"].as_str().unwrap().to_owned();

    // A plain read: started, completed with its card, the answer.
    let run_id = send(&base, &session, "what about rent?").await;
    let read = read_run(&base, &run_id, |_| async {}).await;
    assert_eq!(
        read.names,
        [
            "run.started",
            PHASE,
            PHASE,
            "tool.started",
            "tool.completed",
            PHASE,
            "message.delta",
            PHASE,
            "message.completed",
            "run.settlement.completed",
        ]
    );
    assert_eq!(
        read.events[0],
        json!({ "type": "run.started", "runId": run_id, "sessionId": session })
    );
    let notes_card = json!({ "title": "Notes[31m on rent", "count": 2 });
    assert_eq!(read.event("tool.completed")["card"], notes_card);

    // An approved write: asked, answered, then started, then its progress
    // (the model's `act_summary`), then completed.
    let run_id = send(&base, &session, "shelve task 7").await;
    let read = read_answering(&base, &run_id, "approve").await;
    assert_eq!(
        read.names,
        [
            "run.started",
            PHASE,
            PHASE,
            "tool.approval_required",
            "tool.approval_response",
            "tool.started",
            "tool.progress",
            "tool.completed",
            PHASE,
            "message.delta",
            PHASE,
            "message.completed",
            "run.settlement.completed",
        ]
    );
    assert_eq!(read.event("tool.approval_response")["approved"], true);
    assert_eq!(
        read.event("tool.started")["activity"]["label"],
        "Shelving task 7"
    );
    assert_eq!(
        read.event("tool.completed")["card"],
        json!({ "shelved": 7 })
    );

    // A rejected write: asked, answered no, failed; it never started.
    let run_id = send(&base, &session, "shelve task 8").await;
    let read = read_answering(&base, &run_id, "reject").await;
    assert_eq!(
        read.names,
        [
            "run.started",
            PHASE,
            PHASE,
            "tool.approval_required",
            "tool.approval_response",
            "tool.failed",
            PHASE,
            "message.delta",
            PHASE,
            "message.completed",
            "run.settlement.completed",
        ]
    );
    assert_eq!(read.event("tool.approval_response")["approved"], false);
    assert_eq!(
        read.event("tool.failed")["error"]["code"],
        "approval-rejected"
    );
    assert_eq!(done(&session), ["card_notes:rent", "shelve:7"]);

    // plan_collect: the write becomes a step of the plan the event names,
    // and that plan runs through the route the id points at.
    let collect = client(ALICE)
        .patch(format!("{base}/sessions/{session}"))
        .header("content-type", "application/json")
        .body(json!({ "mode": "plan_collect" }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(collect.status(), StatusCode::OK);
    let run_id = send(&base, &session, "shelve task 9").await;
    let read = read_run(&base, &run_id, |_| async {}).await;
    assert_eq!(
        read.names,
        [
            "run.started",
            PHASE,
            PHASE,
            "tool.started",
            "plan.step_added",
            "tool.completed",
            PHASE,
            "message.delta",
            PHASE,
            "message.completed",
            "run.settlement.completed",
        ]
    );
    let step = read.event("plan.step_added");
    assert_eq!(step["stepIndex"], 0);
    let plan_id = step["planId"].as_str().unwrap().to_owned();
    let plan = client(ALICE)
        .get(format!("{base}/sessions/{plan_id}/plan"))
        .send()
        .await
        .unwrap();
    assert_eq!(plan.status(), StatusCode::OK);
    let plan = body(plan).await;
    assert_eq!(plan["steps"][0]["callId"], step["callId"]);
    assert!(plan["steps"][0].get("call_id").is_none(), "{plan}");
    assert_eq!(read.event("tool.completed")["addedToPlan"], true);
    assert!(read.event("tool.completed").get("card").is_none());
    assert_eq!(done(&session), ["card_notes:rent", "shelve:7"]);

    let executed = post(
        &base,
        &format!("/sessions/{plan_id}/plan/execute"),
        json!({}),
    )
    .await;
    assert_eq!(executed.status(), StatusCode::CREATED);
    let run_id = body(executed).await["runId"].as_str().unwrap().to_owned();
    let read = read_run(&base, &run_id, |_| async {}).await;
    assert_eq!(
        read.names,
        [
            "run.started",
            PHASE,
            "tool.started",
            "tool.completed",
            PHASE,
            "message.delta",
            PHASE,
            "message.completed",
            "run.settlement.completed",
        ]
    );
    assert_eq!(
        read.event("tool.completed")["card"],
        json!({ "shelved": 9 })
    );
    assert_eq!(done(&session), ["card_notes:rent", "shelve:7", "shelve:9"]);

    // Reloaded, the client gets every message back with its calls' cards;
    // never the envelopes the model read.
    let history = client(ALICE)
        .get(format!("{base}/sessions/{session}/messages"))
        .send()
        .await
        .unwrap();
    assert_eq!(history.status(), StatusCode::OK);
    let history = body(history).await;
    let messages = history["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "assistant",
            "user",
            "assistant",
            "assistant",
            "user",
            "assistant",
            "assistant",
            "user",
            "assistant",
            "assistant",
            "assistant",
            "assistant",
        ]
    );
    let calls: Vec<(&str, &str, &Value)> = messages
        .iter()
        .flat_map(|message| message["toolCalls"].as_array().unwrap())
        .map(|call| {
            (
                call["toolKey"].as_str().unwrap(),
                call["status"].as_str().unwrap(),
                &call["card"],
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("card_notes", "completed", &notes_card),
            ("shelve_task", "completed", &json!({ "shelved": 7 })),
            ("shelve_task", "failed", &Value::Null),
            ("shelve_task", "completed", &Value::Null),
            ("shelve_task", "completed", &json!({ "shelved": 9 })),
        ]
    );
    assert_eq!(messages[0]["content"], "what about rent?");
    assert_eq!(messages[2]["content"], "Rent is due.");
    assert!(
        !history.to_string().contains("[card_notes("),
        "no envelope in the history: {history}"
    );

    // Only the owner reads it.
    let response = client(BOB)
        .get(format!("{base}/sessions/{session}/messages"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let error = body(response).await["error"].as_str().unwrap().to_owned();
    assert!(error.contains("does not belong to `bob`"), "{error}");
}
