//! Two users, their own tokens: Bob reaches none of Alice's session, run,
//! approval or plan, through any route, and nothing he sends runs.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    ALICE, BOB, Service, Workdir, body, calendar_write, client, names, open_session, send,
};

async fn refused(response: reqwest::Response, what: &str) {
    let status = response.status();
    assert!(
        status == StatusCode::FORBIDDEN || status == StatusCode::NOT_FOUND,
        "{what}: {status}"
    );
    let answer = body(response).await;
    assert!(
        answer["code"].is_string() && answer["error"].is_string(),
        "{what}: {answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bob_reaches_none_of_alice_s_session_run_approval_or_plan() {
    let work = Workdir::new();
    let mut script = calendar_write("Gym", "Added the gym.");
    // Alice's second session collects a plan: the same write, captured.
    script.extend(calendar_write("Dentist", "Planned the dentist."));
    let script = work.script("script.json", Value::Array(script));
    let service = Service::start(&work, &["--script", script.to_str().unwrap()], &[]);
    let base = &service.base;
    let (alice, bob) = (client(ALICE), client(BOB));

    let session = open_session(base, ALICE, "approval").await;
    let (run, mut stream) = send(base, ALICE, &session, "put the gym on Saturday at 9").await;
    let asked = stream.until("tool.approval_required").await;
    let call = asked.last().unwrap().1["toolCallId"]
        .as_str()
        .unwrap()
        .to_owned();

    // Bob, with his own valid token, on everything of Alice's.
    let attempts = [
        (
            "send",
            bob.post(format!("{base}/sessions/{session}/messages"))
                .json(&json!({ "content": "delete everything" })),
        ),
        (
            "history",
            bob.get(format!("{base}/sessions/{session}/messages")),
        ),
        (
            "mode",
            bob.patch(format!("{base}/sessions/{session}"))
                .json(&json!({ "mode": "auto" })),
        ),
        (
            "approve",
            bob.post(format!("{base}/runs/{run}/tools/{call}/approve")),
        ),
        (
            "reject",
            bob.post(format!("{base}/runs/{run}/tools/{call}/reject")),
        ),
        ("run events", bob.get(format!("{base}/runs/{run}/events"))),
        (
            "message stream",
            bob.get(format!("{base}/sessions/{session}/messages/{run}/stream")),
        ),
        ("plan", bob.get(format!("{base}/sessions/{session}/plan"))),
        (
            "plans",
            bob.get(format!("{base}/plans?sessionId={session}")),
        ),
        (
            "execute",
            bob.post(format!("{base}/plans/{session}/execute")),
        ),
        ("discard", bob.delete(format!("{base}/plans/{session}"))),
    ];
    for (what, attempt) in attempts {
        refused(attempt.send().await.unwrap(), what).await;
    }
    let listed = body(bob.get(format!("{base}/sessions")).send().await.unwrap()).await;
    assert_eq!(listed, json!({ "sessions": [] }));

    // Alice's write still waits for her, and runs once she approves.
    let approved = alice
        .post(format!("{base}/runs/{run}/tools/{call}/approve"))
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), StatusCode::NO_CONTENT);
    let rest = stream.until("run.settlement.completed").await;
    let rest = names(&rest);
    assert_eq!(
        rest.iter()
            .filter(|name| **name == "tool.completed")
            .count(),
        1,
        "{rest:?}"
    );
    assert!(!rest.contains(&"tool.failed"), "{rest:?}");

    // A plan of Alice's: Bob can neither run nor drop it.
    let planning = open_session(base, ALICE, "plan_collect").await;
    let (_, mut stream) = send(base, ALICE, &planning, "plan the dentist on Saturday").await;
    let planned = stream.until("run.settlement.completed").await;
    assert!(names(&planned).contains(&"plan.step_added"), "{planned:?}");
    for (what, attempt) in [
        (
            "execute",
            bob.post(format!("{base}/plans/{planning}/execute")),
        ),
        ("discard", bob.delete(format!("{base}/plans/{planning}"))),
        (
            "plans",
            bob.get(format!("{base}/plans?sessionId={planning}")),
        ),
    ] {
        refused(attempt.send().await.unwrap(), what).await;
    }
    let bob_plans = body(bob.get(format!("{base}/plans")).send().await.unwrap()).await;
    assert_eq!(bob_plans, json!({ "plans": [] }));
    let alice_plans = body(alice.get(format!("{base}/plans")).send().await.unwrap()).await;
    assert_eq!(
        alice_plans["plans"].as_array().unwrap().len(),
        1,
        "{alice_plans}"
    );
    assert_eq!(alice_plans["plans"][0]["planId"], planning.as_str());
    assert_eq!(alice_plans["plans"][0]["steps"][0]["tool"], "calendar_edit");

    let alice_sessions = body(alice.get(format!("{base}/sessions")).send().await.unwrap()).await;
    let ids: Vec<&str> = alice_sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|session| session["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [session.as_str(), planning.as_str()]);

    // The history Alice reads has her write, completed once; Bob's send
    // added nothing.
    let history = body(
        alice
            .get(format!("{base}/sessions/{session}/messages"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(
        !history.to_string().contains("delete everything"),
        "{history}"
    );
    let writes: Vec<&Value> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["toolCalls"].as_array().unwrap())
        .filter(|call| call["toolKey"] == "calendar_edit")
        .collect();
    assert_eq!(writes.len(), 1, "{history}");
    assert_eq!(writes[0]["status"], "completed", "{history}");

    // Unauthenticated: 401 with a code; health needs no token.
    let anonymous = reqwest::get(format!("{base}/sessions")).await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(body(anonymous).await["code"], "unauthorized");
    let health = reqwest::get(format!("{base}/health")).await.unwrap();
    assert_eq!(body(health).await, json!({ "status": "ok" }));
    let me = body(bob.get(format!("{base}/me")).send().await.unwrap()).await;
    assert_eq!(me["principal"], "bob");
}
