//! The SSE router, read by a real HTTP client over loopback: a run's
//! events stream as they happen, an approval through the API lets the
//! run finish, and the mode changes with a PATCH.

use std::sync::Arc;

use chalie_core::session::{BearerTokens, Mode, Reply, ScriptedModel, Sessions, ToolsApi, router};
use chalie_core::turn::Principal;
use serde_json::{Value, json};

use crate::abilities::done;
use crate::sessions;

/// Alice's token and Bob's, as the deployment configured them.
pub const ALICE: &str = "alice-0123456789abcdef0123456789abcdef";
pub const BOB: &str = "bob-0123456789abcdef0123456789abcdef00";

/// Serves the router on a real loopback port, authenticating Alice and
/// Bob by bearer token; returns its base URL.
pub async fn serve(sessions: Sessions) -> String {
    let tokens = BearerTokens::new()
        .with(ALICE, Principal::new("alice"))
        .unwrap()
        .with(BOB, Principal::new("bob"))
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, router(sessions, tokens))
            .await
            .unwrap()
    });
    base
}

/// Serves the app as the README composes the API (the router with the
/// Tools view's routes merged in), authenticating Alice and Bob; returns
/// its base URL.
pub async fn serve_with_tools(sessions: Sessions) -> String {
    let tokens = BearerTokens::new()
        .with(ALICE, Principal::new("alice"))
        .unwrap()
        .with(BOB, Principal::new("bob"))
        .unwrap();
    let tools = ToolsApi::new(sessions.dispatcher().registry().clone());
    let app = router(sessions, tokens.clone()).merge(tools.router(tokens));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

/// A client that sends `token` with every request.
pub fn client(token: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

/// Reads SSE frames off a response as (event, id, data).
pub struct Frames {
    pub response: reqwest::Response,
    pub buffer: String,
}

impl Frames {
    pub async fn next(&mut self) -> Option<(String, String, Value)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                let mut event = String::new();
                let mut id = String::new();
                let mut data = String::new();
                for line in frame.lines() {
                    if let Some(value) = line.strip_prefix("event: ") {
                        event = value.to_owned();
                    } else if let Some(value) = line.strip_prefix("id: ") {
                        id = value.to_owned();
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        data.push_str(value);
                    }
                }
                if event.is_empty() {
                    continue; // a keep-alive comment
                }
                return Some((event, id, serde_json::from_str(&data).unwrap()));
            }
            let chunk = self.response.chunk().await.unwrap()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}

#[tokio::test]
async fn a_client_follows_a_run_over_sse_and_approves_through_the_api() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 7 })),
        Reply::text("Deleted."),
    ]));
    let sessions = sessions(model);
    let base = serve(sessions.clone()).await;
    let client = client(ALICE);

    let started = client
        .post(format!("{base}/sessions/http-sse/messages"))
        .header("content-type", "application/json")
        .body(json!({ "content": "delete task 7" }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), 201);
    let body: Value = serde_json::from_slice(&started.bytes().await.unwrap()).unwrap();
    let run_id = body["runId"].as_str().unwrap().to_owned();

    let response = client
        .get(format!("{base}/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut frames = Frames {
        response,
        buffer: String::new(),
    };
    let mut seen = Vec::new();
    loop {
        let (event, id, data) = frames.next().await.unwrap();
        assert_eq!(id, seen.len().to_string());
        assert_eq!(data["type"], event);
        seen.push(event.clone());
        if event == "tool.approval_required" {
            assert_eq!(
                data,
                json!({ "type": "tool.approval_required", "toolKey": "delete_task", "toolCallId": "call-1", "input": { "id": 7 } })
            );
            let approved = client
                .post(format!("{base}/runs/{run_id}/tools/call-1/approve"))
                .send()
                .await
                .unwrap();
            assert_eq!(approved.status(), 204);
        }
        if event == "run.settlement.completed" {
            break;
        }
    }
    assert!(
        frames.next().await.is_none(),
        "the stream ends with the run"
    );
    let expected: Vec<String> = sessions
        .run(&run_id)
        .unwrap()
        .finish()
        .await
        .iter()
        .map(|e| e.name().to_owned())
        .collect();
    assert_eq!(seen, expected);
    assert!(seen.contains(&"tool.approval_response".to_owned()));
    assert_eq!(done("http-sse"), ["delete:7"]);

    // Answering again is a conflict; an unknown run is not found.
    let again = client
        .post(format!("{base}/runs/{run_id}/tools/call-1/reject"))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
    let missing = client
        .get(format!("{base}/runs/nope/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn patch_changes_the_mode_and_refuses_an_unknown_one() {
    let sessions = sessions(Arc::new(ScriptedModel::new([])));
    let base = serve(sessions.clone()).await;
    let client = client(ALICE);
    let patch = |body: Value| {
        client
            .patch(format!("{base}/sessions/http-mode"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let changed = patch(json!({ "mode": "plan_collect" })).await.unwrap();
    assert_eq!(changed.status(), 200);
    let body: Value = serde_json::from_slice(&changed.bytes().await.unwrap()).unwrap();
    assert_eq!(body, json!({ "id": "http-mode", "mode": "plan_collect" }));
    assert_eq!(sessions.mode("http-mode").unwrap(), Mode::PlanCollect);

    let refused = patch(json!({ "mode": "yolo" })).await.unwrap();
    assert_eq!(refused.status(), 422);
    let body: Value = serde_json::from_slice(&refused.bytes().await.unwrap()).unwrap();
    assert_eq!(
        body["error"],
        "unknown mode `yolo`; use one of `approval`, `auto`, `plan`, `plan_collect`"
    );
    assert_eq!(sessions.mode("http-mode").unwrap(), Mode::PlanCollect);
}

/// Counts words, and how many texts it was asked to count.
struct CountingWords(Arc<std::sync::atomic::AtomicUsize>);

impl chalie_core::session::CountTokens for CountingWords {
    fn count(&self, text: &str) -> usize {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        text.split_whitespace().count()
    }
    fn encoding(&self) -> &str {
        "words"
    }
}

#[tokio::test]
async fn the_tools_listing_is_made_once_and_answered_the_same_every_time() {
    let sessions = sessions(Arc::new(ScriptedModel::new([])));
    let counted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let tokens = BearerTokens::new()
        .with(ALICE, Principal::new("alice"))
        .unwrap();
    let tools = ToolsApi::new(sessions.dispatcher().registry().clone())
        .tokens(CountingWords(Arc::clone(&counted)));
    let app = router(sessions, tokens.clone()).merge(tools.router(tokens));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let list = || async {
        let answer = client(ALICE)
            .get(format!("{base}/tools"))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.headers()["content-type"], "application/json");
        answer.json::<Value>().await.unwrap()
    };
    let first = list().await;
    assert_eq!(first["encoding"], "words");
    let tools = first["tools"].as_array().unwrap();
    assert!(!tools.is_empty());
    assert!(
        tools[0]["providers"]["anthropic"]["tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
    let after_first = counted.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(after_first, tools.len() * 5, "one count per provider");
    for _ in 0..3 {
        assert_eq!(list().await, first);
    }
    // The registry never changes: nothing was rendered or counted again.
    assert_eq!(
        counted.load(std::sync::atomic::Ordering::Relaxed),
        after_first
    );
}
