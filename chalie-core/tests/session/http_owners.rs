//! The router attacked over a real socket: every route refuses a request
//! without valid credentials, and Bob can neither approve, reject, change
//! the mode of, run the plan of, post to, read the history of nor follow
//! the events of a session Alice opened; nothing he sends runs anything.

use std::sync::Arc;

use chalie_core::session::{ApprovalState, Mode, Reply, ScriptedModel, Sessions};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::abilities::done;
use crate::http::{ALICE, BOB, client, serve, serve_with_tools};
use crate::{sessions, wait_for};

async fn body(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

/// Alice opens `session` over HTTP with a message; returns the run id.
async fn alice_sends(base: &str, session: &str, content: &str) -> String {
    let started = client(ALICE)
        .post(format!("{base}/sessions/{session}/messages"))
        .header("content-type", "application/json")
        .body(json!({ "content": content }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), StatusCode::CREATED);
    body(started).await["runId"].as_str().unwrap().to_owned()
}

async fn forbidden(response: reqwest::Response) {
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let error = body(response).await["error"].as_str().unwrap().to_owned();
    assert!(error.contains("does not belong to `bob`"), "{error}");
}

#[tokio::test]
async fn every_route_refuses_a_request_without_valid_credentials() {
    let model = Arc::new(ScriptedModel::new([Reply::text("Hello.")]));
    let sessions = sessions(model.clone());
    // With the Tools view's routes, so they are attacked too.
    let base = serve_with_tools(sessions.clone()).await;
    let routes = [
        (Method::POST, "/sessions"),
        (Method::GET, "/sessions"),
        (Method::GET, "/me"),
        (Method::GET, "/sessions/http-auth/messages/some-run/stream"),
        (Method::GET, "/plans"),
        (Method::GET, "/plans?sessionId=http-auth"),
        (Method::POST, "/plans/http-auth/execute"),
        (Method::DELETE, "/plans/http-auth"),
        (Method::GET, "/policy"),
        (Method::PUT, "/policy"),
        (Method::GET, "/tools"),
        (Method::GET, "/tools/discover?q=rename%20a%20task"),
        (Method::POST, "/sessions/http-auth/messages"),
        (Method::PATCH, "/sessions/http-auth"),
        (Method::GET, "/sessions/http-auth/messages"),
        (Method::GET, "/sessions/http-auth/plan"),
        (Method::POST, "/sessions/http-auth/plan/execute"),
        (Method::DELETE, "/sessions/http-auth/plan"),
        (Method::GET, "/runs/some-run/events"),
        (Method::POST, "/runs/some-run/tools/call-1/approve"),
        (Method::POST, "/runs/some-run/tools/call-1/reject"),
    ];
    let anonymous = reqwest::Client::new();
    for (method, path) in routes {
        let url = format!("{base}{path}");
        let attempts = [
            anonymous.request(method.clone(), &url),
            anonymous
                .request(method.clone(), &url)
                .bearer_auth("not-a-token-anyone-was-given-000000000"),
            anonymous
                .request(method.clone(), &url)
                .basic_auth("alice", Some(ALICE)),
            // Alice's token with one byte changed.
            anonymous
                .request(method.clone(), &url)
                .bearer_auth(format!("{}X", &ALICE[..ALICE.len() - 1])),
        ];
        for attempt in attempts {
            let response = attempt
                .header("content-type", "application/json")
                .body(json!({ "content": "hi", "mode": "auto" }).to_string())
                .send()
                .await
                .unwrap();
            assert_eq!(
                response.status(),
                StatusCode::UNAUTHORIZED,
                "{method} {path}"
            );
            let challenge = response.headers()["www-authenticate"].to_str().unwrap();
            assert!(challenge.starts_with("Bearer"), "{challenge}");
            assert!(body(response).await["error"].is_string());
        }
    }
    // Nothing reached the sessions: no session opened, the model unasked.
    assert_eq!(sessions.store().session("http-auth").unwrap(), None);
    assert!(model.requests().is_empty());
}

#[tokio::test]
async fn bob_cannot_answer_alice_s_approval_and_her_write_runs_only_when_she_approves() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 7 })),
        Reply::text("Deleted."),
    ]));
    let sessions = sessions(model);
    let base = serve(sessions.clone()).await;
    let session = "http-owners-approve";
    let run_id = alice_sends(&base, session, "delete task 7").await;
    let run = sessions.run(&run_id).unwrap();
    wait_for(&run, "tool.approval_required").await;

    let bob = client(BOB);
    for answer in ["approve", "reject"] {
        let response = bob
            .post(format!("{base}/runs/{run_id}/tools/call-1/{answer}"))
            .send()
            .await
            .unwrap();
        forbidden(response).await;
    }
    forbidden(
        bob.get(format!("{base}/runs/{run_id}/events"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    // The write never ran and still waits for Alice.
    assert!(done(session).is_empty());
    let approval = sessions.store().approval(&run_id, "call-1").unwrap();
    assert_eq!(approval.map(|a| a.state), Some(ApprovalState::Pending));

    let alice = client(ALICE);
    let events = alice
        .get(format!("{base}/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::OK);
    let approved = alice
        .post(format!("{base}/runs/{run_id}/tools/call-1/approve"))
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), StatusCode::NO_CONTENT);
    run.finish().await;
    assert_eq!(done(session), ["delete:7"]);
}

#[tokio::test]
async fn bob_can_neither_change_the_mode_post_to_nor_run_the_plan_of_alice_s_session() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 4 })),
        Reply::text("Planned."),
        Reply::text("Deleted task 4."),
    ]));
    let sessions = sessions(model.clone());
    let base = serve(sessions.clone()).await;
    let session = "http-owners-plan";
    let (alice, bob) = (client(ALICE), client(BOB));

    let collect = alice
        .patch(format!("{base}/sessions/{session}"))
        .header("content-type", "application/json")
        .body(json!({ "mode": "plan_collect" }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(collect.status(), StatusCode::OK);
    let run_id = alice_sends(&base, session, "delete task 4").await;
    sessions.run(&run_id).unwrap().finish().await;
    let asked = model.requests().len();

    forbidden(
        bob.patch(format!("{base}/sessions/{session}"))
            .header("content-type", "application/json")
            .body(json!({ "mode": "auto" }).to_string())
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(sessions.mode(session).unwrap(), Mode::PlanCollect);
    forbidden(
        bob.post(format!("{base}/sessions/{session}/messages"))
            .header("content-type", "application/json")
            .body(json!({ "content": "delete everything" }).to_string())
            .send()
            .await
            .unwrap(),
    )
    .await;
    for (method, path) in [
        (Method::GET, "messages"),
        (Method::GET, "plan"),
        (Method::POST, "plan/execute"),
        (Method::DELETE, "plan"),
    ] {
        let response = bob
            .request(method, format!("{base}/sessions/{session}/{path}"))
            .send()
            .await
            .unwrap();
        forbidden(response).await;
    }
    // Bob changed nothing: the plan is whole, no step ran, no message of
    // his was stored and the model was not asked.
    assert_eq!(sessions.plan(session).unwrap().len(), 1);
    assert!(done(session).is_empty());
    assert!(
        sessions
            .store()
            .messages(session)
            .unwrap()
            .iter()
            .all(|stored| stored.message.content != "delete everything")
    );
    assert_eq!(model.requests().len(), asked);

    let plan = body(
        alice
            .get(format!("{base}/sessions/{session}/plan"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(plan["steps"][0]["tool"], "delete_task");
    let executed = alice
        .post(format!("{base}/sessions/{session}/plan/execute"))
        .send()
        .await
        .unwrap();
    assert_eq!(executed.status(), StatusCode::CREATED);
    let run_id = body(executed).await["runId"].as_str().unwrap().to_owned();
    sessions.run(&run_id).unwrap().finish().await;
    assert_eq!(done(session), ["delete:4"]);
    let empty = alice
        .post(format!("{base}/sessions/{session}/plan/execute"))
        .send()
        .await
        .unwrap();
    assert_eq!(empty.status(), StatusCode::CONFLICT);
}

#[tokio::test]
async fn a_session_the_host_opened_is_refused_to_every_caller() {
    let model = Arc::new(ScriptedModel::new([Reply::text("Hi.")]));
    let sessions: Sessions = sessions(model);
    sessions
        .send("http-owners-host", "hi")
        .unwrap()
        .finish()
        .await;
    let base = serve(sessions.clone()).await;
    let refused = client(ALICE)
        .patch(format!("{base}/sessions/http-owners-host"))
        .header("content-type", "application/json")
        .body(json!({ "mode": "auto" }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(sessions.mode("http-owners-host").unwrap(), Mode::Approval);
}

#[tokio::test]
async fn a_session_created_with_a_mode_belongs_to_its_creator() {
    let model = Arc::new(ScriptedModel::new([Reply::text("Planning.")]));
    let sessions = sessions(model.clone());
    let base = serve(sessions.clone()).await;
    let created = client(ALICE)
        .post(format!("{base}/sessions"))
        .header("content-type", "application/json")
        .body(json!({ "mode": "plan" }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let created = body(created).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["mode"], "plan");
    assert_eq!(sessions.mode(&id).unwrap(), Mode::Plan);

    // Two creations never share an id.
    let other = client(ALICE)
        .post(format!("{base}/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::CREATED);
    assert_ne!(body(other).await["id"].as_str().unwrap(), id);

    // Bob cannot use it; a bad mode is refused.
    forbidden(
        client(BOB)
            .post(format!("{base}/sessions/{id}/messages"))
            .header("content-type", "application/json")
            .body(json!({ "content": "hi" }).to_string())
            .send()
            .await
            .unwrap(),
    )
    .await;
    let bad = client(ALICE)
        .post(format!("{base}/sessions"))
        .header("content-type", "application/json")
        .body(json!({ "mode": "turbo" }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
}
