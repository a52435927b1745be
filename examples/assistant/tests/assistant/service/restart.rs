//! The service stopped (SIGTERM) between an approval request and the
//! approval, and started again on the same database: the approval is still
//! pending, Alice approves it on the new process, and the write runs once.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{ALICE, Service, Sse, Workdir, body, calendar_write, client, open_session, send};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_requested_before_a_restart_is_approved_after_it_and_the_write_runs_once() {
    let work = Workdir::new();
    let first_script = work.script("first.json", Value::Array(calendar_write("Gym", "unused")));
    let first = Service::start(&work, &["--script", first_script.to_str().unwrap()], &[]);
    let base = first.base.clone();
    let session = open_session(&base, ALICE, "approval").await;
    let (run, mut stream) = send(&base, ALICE, &session, "put the gym on Saturday at 9").await;
    let asked = stream.until("tool.approval_required").await;
    let call = asked.last().unwrap().1["toolCallId"]
        .as_str()
        .unwrap()
        .to_owned();
    let write_started = |events: &[(String, Value)]| {
        events
            .iter()
            .filter(|(name, data)| name == "tool.started" && data["toolKey"] == "calendar_edit")
            .count()
    };
    assert_eq!(write_started(&asked), 0, "{asked:?}");
    // The stop closes the open stream rather than hanging on it.
    assert!(first.terminate(), "the service exits cleanly on SIGTERM");
    assert!(
        tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while stream.next().await.is_some() {}
        })
        .await
        .is_ok()
    );

    // The new process resumes the run; only its last reply is left to say.
    let second_script = work.script("second.json", json!([{ "text": "Added the gym." }]));
    let second = Service::start(&work, &["--script", second_script.to_str().unwrap()], &[]);
    let base = second.base.clone();
    let pending = body(
        client(ALICE)
            .get(format!("{base}/sessions/{session}/messages"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(pending.to_string().contains("calendar_edit"), "{pending}");
    let mut resumed = Sse::open(ALICE, &format!("{base}/runs/{run}/events")).await;
    let asked_again = resumed.until("tool.approval_required").await;
    assert_eq!(asked_again.last().unwrap().1["toolCallId"], call.as_str());

    let approved = client(ALICE)
        .post(format!("{base}/runs/{run}/tools/{call}/approve"))
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), StatusCode::NO_CONTENT);
    let rest = resumed.until("run.settlement.completed").await;
    assert_eq!(write_started(&asked_again), 0, "{asked_again:?}");
    assert_eq!(write_started(&rest), 1, "{rest:?}");
    assert!(
        rest.iter()
            .any(|(name, data)| name == "tool.completed" && data["callId"] == call.as_str()),
        "{rest:?}"
    );

    // A second approval of the same call is refused: it is no longer pending.
    let again = client(ALICE)
        .post(format!("{base}/runs/{run}/tools/{call}/approve"))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::CONFLICT);
    assert_eq!(body(again).await["code"], "not-pending");

    // The history: one write, completed.
    let history = body(
        client(ALICE)
            .get(format!("{base}/sessions/{session}/messages"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let writes: Vec<&Value> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["toolCalls"].as_array().unwrap())
        .filter(|call| call["toolKey"] == "calendar_edit")
        .collect();
    assert_eq!(writes.len(), 1, "{history}");
    assert_eq!(writes[0]["status"], "completed", "{history}");
    assert!(second.log().contains("resumed"), "{}", second.log());
}
