//! The service stopped (SIGTERM) between an approval request and the
//! approval, and started again on the same database: the approval is still
//! pending, Alice approves it on the new process, and the write runs once.
//! Her calendar outlives the restart: on the new process she reads the
//! event written before it and the one written after, and Bob neither.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fake_model::{Received, openai_text, openai_tool_call_with_id, serve};
use super::{ALICE, BOB, Service, Sse, Workdir, body, calendar_write, client, open_session, send};

/// The replies of one calendar read of 2026-03-07, the day
/// [`calendar_write`] writes on: discover the calendar, read the day, answer.
fn calendar_read() -> Vec<Vec<String>> {
    vec![
        openai_tool_call_with_id(
            "call_find",
            "find_tools",
            &json!({ "query": ["what is on my calendar"] }),
        ),
        openai_tool_call_with_id(
            "call_read",
            "calendar",
            &json!({ "action": "range", "from": "2026-03-07", "to": "2026-03-07" }),
        ),
        openai_text("Here is your day."),
    ]
}

/// `token` reads 2026-03-07 through the service; the calendar's result as
/// the model received it (the `request`th request to the model is the one
/// after the read).
async fn read_the_day(base: &str, token: &str, received: &Received, request: usize) -> String {
    let session = open_session(base, token, "approval").await;
    let (_, mut stream) = send(base, token, &session, "what is on my calendar on the 7th").await;
    let events = stream.until("run.settlement.completed").await;
    assert!(
        events
            .iter()
            .any(|(name, data)| name == "tool.completed" && data["toolKey"] == "calendar"),
        "{events:?}"
    );
    let (_, sent) = received.lock().unwrap()[request].clone();
    sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool" && message["tool_call_id"] == "call_read")
        .unwrap_or_else(|| panic!("no calendar result: {sent}"))["content"]
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_requested_before_a_restart_is_approved_after_it_and_the_write_runs_once() {
    let work = Workdir::new();
    let mut first_replies = calendar_write("Dentist", "Added the dentist.");
    first_replies.extend(calendar_write("Gym", "unused"));
    let first_script = work.script("first.json", Value::Array(first_replies));
    let first = Service::start(&work, &["--script", first_script.to_str().unwrap()], &[]);
    let base = first.base.clone();
    // An event written and approved before the restart.
    let before = open_session(&base, ALICE, "approval").await;
    let (dentist, mut stream) = send(&base, ALICE, &before, "the dentist on Saturday at 9").await;
    let asked = stream.until("tool.approval_required").await;
    let dentist_call = asked.last().unwrap().1["toolCallId"]
        .as_str()
        .unwrap()
        .to_owned();
    let approved = client(ALICE)
        .post(format!(
            "{base}/runs/{dentist}/tools/{dentist_call}/approve"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(approved.status(), StatusCode::NO_CONTENT);
    stream.until("run.settlement.completed").await;

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
    // Then Alice and Bob each read the day (a model server that keeps what
    // it was sent, so the calendar's results can be read).
    let mut second_replies = vec![openai_text("Added the gym.")];
    second_replies.extend(calendar_read());
    second_replies.extend(calendar_read());
    let (url, received) = serve(second_replies).await;
    let second = Service::start(
        &work,
        &[
            "--model-url",
            &format!("{url}/v1"),
            "--model",
            "local-model",
        ],
        &[("OPENAI_API_KEY", "sk-local-test")],
    );
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

    // Alice's calendar is in the service's database, not in the process:
    // the event approved before the restart and the one after. Bob's
    // calendar is his own: neither. (Requests 1-3 are Alice's read, 4-6
    // Bob's; the third of each carries the calendar's result.)
    let alices = read_the_day(&base, ALICE, &received, 3).await;
    assert!(alices.contains("Dentist"), "{alices}");
    assert!(alices.contains("Gym"), "{alices}");
    let bobs = read_the_day(&base, BOB, &received, 6).await;
    assert!(!bobs.contains("Dentist") && !bobs.contains("Gym"), "{bobs}");
    assert!(bobs.contains("0 events"), "{bobs}");
}
