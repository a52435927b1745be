//! Many clients at once, over real TCP: each opens a session, sends a
//! message that calls a tool, and reads its run's events as SSE. Every
//! event reaches its own client, in order, and no other; clients that
//! vanish mid-stream leave nothing held (a second wave as large as the
//! first still fits under the stream limit); memory is reported. Past the
//! configured limits new work is `503 overloaded` with `Retry-After`.
//!
//! `CHALIE_SOAK_CLIENTS` sets how many clients (default 200).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chalie_core::session::{BearerTokens, MemoryStore, router};
use chalie_core::turn::Principal;
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::{PerConversation, peak_rss_kib, report, rss_kib, sessions, size};

const TOKEN: &str = "load-0123456789abcdef0123456789abcdef";

/// What one client saw.
#[derive(Default)]
struct Seen {
    events: usize,
    /// Events out of order, or naming another client's session, run or words.
    misdelivered: usize,
    /// Whether the stream reached `run.settlement.completed`.
    ended: bool,
    /// An error answer that retrying did not get past.
    refused: Option<u16>,
    /// `503`s retried after their `Retry-After`.
    retried: usize,
    /// The run, once started.
    run: Option<String>,
}

/// Sends a request, retrying a `503` after its `Retry-After` as a client
/// should, a few times at most.
async fn with_retries(
    seen: &mut Seen,
    request: impl Fn() -> reqwest::RequestBuilder,
) -> Option<reqwest::Response> {
    for _ in 0..5 {
        let response = request().send().await.unwrap();
        if response.status() != 503 {
            if !response.status().is_success() {
                seen.refused = Some(response.status().as_u16());
                return None;
            }
            return Some(response);
        }
        seen.retried += 1;
        let wait: u64 = response.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
    }
    seen.refused = Some(503);
    None
}

/// One client's whole conversation; `vanish` drops the connection after
/// the first event.
async fn converse(client: reqwest::Client, base: String, number: usize, vanish: bool) -> Seen {
    let mut seen = Seen::default();
    let Some(opened) = with_retries(&mut seen, || client.post(format!("{base}/sessions"))).await
    else {
        return seen;
    };
    let session: Value = opened.json().await.unwrap();
    let session = session["id"].as_str().unwrap().to_owned();
    let words = format!("question {number}");
    let Some(started) = with_retries(&mut seen, || {
        client
            .post(format!("{base}/sessions/{session}/messages"))
            .json(&json!({ "content": words }))
    })
    .await
    else {
        return seen;
    };
    let started: Value = started.json().await.unwrap();
    let run = started["runId"].as_str().unwrap().to_owned();
    seen.run = Some(run.clone());
    let Some(mut response) = with_retries(&mut seen, || {
        client.get(format!("{base}/runs/{run}/events"))
    })
    .await
    else {
        return seen;
    };
    let mut buffer = String::new();
    loop {
        let Some(end) = buffer.find("\n\n") else {
            match response.chunk().await.unwrap() {
                Some(chunk) => {
                    buffer.push_str(std::str::from_utf8(&chunk).unwrap());
                    continue;
                }
                None => return seen,
            }
        };
        let frame: String = buffer.drain(..end + 2).collect();
        let field = |name: &str| {
            frame
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .map(str::to_owned)
        };
        let (Some(event), Some(id), Some(data)) =
            (field("event: "), field("id: "), field("data: "))
        else {
            continue; // a keep-alive comment
        };
        let data: Value = serde_json::from_str(&data).unwrap();
        let mine = data.get("runId").is_none_or(|value| value == run.as_str())
            && data
                .get("sessionId")
                .is_none_or(|value| value == session.as_str())
            && data
                .get("input")
                .and_then(|input| input.get("query"))
                .is_none_or(|query| query == words.as_str())
            && data
                .get("content")
                .is_none_or(|content| content == format!("answered {words}").as_str());
        if id != seen.events.to_string() || !mine || data["type"] != event {
            seen.misdelivered += 1;
        }
        seen.events += 1;
        if event == "run.settlement.completed" {
            seen.ended = true;
            return seen;
        }
        if vanish {
            return seen; // the response drops: the connection closes
        }
    }
}

/// Every client of a wave at once; returns what each saw.
async fn wave(base: &str, clients: usize, vanishing_every: usize) -> Vec<(bool, Seen)> {
    // No idle connection kept: the server closes one idle past its header
    // timeout, and a POST reused on it at that moment would be lost.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .default_headers(
            [(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {TOKEN}").parse().unwrap(),
            )]
            .into_iter()
            .collect(),
        )
        .build()
        .unwrap();
    let tasks: Vec<_> = (0..clients)
        .map(|number| {
            let vanish = vanishing_every > 0 && number % vanishing_every == 0;
            let client = client.clone();
            let base = base.to_owned();
            tokio::spawn(async move { (vanish, converse(client, base, number, vanish).await) })
        })
        .collect();
    futures::future::join_all(tasks)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_clients_each_get_their_own_events_in_order() {
    let clients = size("CHALIE_SOAK_CLIENTS", 200);
    let model = Arc::new(PerConversation { tool: "lookup" });
    // Limits just above one wave: a stream or run still held from the
    // first wave makes the second refused.
    let sessions = sessions(model, Arc::new(MemoryStore::new()))
        .max_running(clients)
        .max_streams(clients)
        .build();
    let tokens = BearerTokens::new()
        .with(TOKEN, Principal::new("load"))
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = router(sessions.clone(), tokens);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let before = rss_kib().unwrap_or(0);

    // One client in ten vanishes after the first event.
    let first = wave(&base, clients, 10).await;
    // The runs of vanished clients go on without them; each ends.
    for (_, seen) in &first {
        if let Some(run) = &seen.run {
            sessions.run(run).unwrap().finish().await;
        }
    }
    let after_first = rss_kib().unwrap_or(0);
    let second = wave(&base, clients, 0).await;
    let after_second = rss_kib().unwrap_or(0);

    let all: Vec<&(bool, Seen)> = first.iter().chain(&second).collect();
    let misdelivered: usize = all.iter().map(|(_, seen)| seen.misdelivered).sum();
    let refused: Vec<u16> = all.iter().filter_map(|(_, seen)| seen.refused).collect();
    let unfinished = all
        .iter()
        .filter(|(vanish, seen)| !vanish && seen.refused.is_none() && !seen.ended)
        .count();
    let events: usize = all.iter().map(|(_, seen)| seen.events).sum();
    let retried: usize = all.iter().map(|(_, seen)| seen.retried).sum();
    let runs_started = all.iter().filter(|(_, seen)| seen.run.is_some()).count();
    // A run ends when its stream says so, or (a vanished client's) when
    // `finish` returned above.
    let runs_ended = all
        .iter()
        .filter(|(vanish, seen)| seen.run.is_some() && (*vanish || seen.ended))
        .count();
    let vanished = first.iter().filter(|(vanish, _)| *vanish).count();
    report(json!({
        "test": "load",
        "clients": clients * 2,
        "events": events,
        "misdelivered": misdelivered,
        "unfinished_streams": unfinished,
        "refused": refused.len(),
        "retried_503": retried,
        "runs_started": runs_started,
        "runs_ended": runs_ended,
        "vanished": vanished,
        "rss_kib": { "before": before, "after_first_wave": after_first, "after_second_wave": after_second },
        "peak_rss_kib": peak_rss_kib(),
    }));
    assert_eq!(
        misdelivered, 0,
        "events reached the wrong client or out of order"
    );
    assert!(refused.is_empty(), "refused under the limit: {refused:?}");
    assert_eq!(unfinished, 0, "streams ended before their run");
}

/// A run that waits on an approval holds its place; past the limit the
/// router answers `503 overloaded` with `Retry-After`, and once a run ends
/// its place is free again. The same for open event streams.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_limits_new_work_is_503_with_retry_after() {
    let model = Arc::new(PerConversation {
        tool: "delete_task",
    });
    let sessions = sessions(model, Arc::new(MemoryStore::new()))
        .max_running(2)
        .max_streams(1)
        .build();
    let tokens = BearerTokens::new()
        .with(TOKEN, Principal::new("load"))
        .unwrap();
    let app = router(sessions.clone(), tokens);
    let call = |method: &str, path: String, body: Option<Value>| {
        let app = app.clone();
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
        if body.is_some() {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        let body = body.map_or_else(Body::empty, |body| Body::from(body.to_string()));
        async move { app.oneshot(request.body(body).unwrap()).await.unwrap() }
    };
    let json_of = async |response: axum::response::Response| -> Value {
        serde_json::from_slice(
            &axum::body::to_bytes(response.into_body(), 1 << 16)
                .await
                .unwrap(),
        )
        .unwrap()
    };
    let send = |session: &str| {
        call(
            "POST",
            format!("/sessions/{session}/messages"),
            Some(json!({ "content": "delete task 7" })),
        )
    };

    // Two runs wait on their approvals: the third is refused.
    let mut runs = Vec::new();
    for session in ["limit-a", "limit-b"] {
        let started = send(session).await;
        assert_eq!(started.status(), StatusCode::CREATED);
        runs.push(json_of(started).await["runId"].as_str().unwrap().to_owned());
    }
    let refused = send("limit-c").await;
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(refused.headers().contains_key(header::RETRY_AFTER));
    assert_eq!(json_of(refused).await["code"], "overloaded");

    // One stream is open: a second is refused, and fits once the first is gone.
    let open = call("GET", format!("/runs/{}/events", runs[0]), None).await;
    assert_eq!(open.status(), StatusCode::OK);
    let second = call("GET", format!("/runs/{}/events", runs[1]), None).await;
    assert_eq!(second.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(json_of(second).await["code"], "overloaded");
    drop(open);
    let again = call("GET", format!("/runs/{}/events", runs[1]), None).await;
    assert_eq!(again.status(), StatusCode::OK);
    drop(again);

    // A run ends (its write rejected): its place takes a new one.
    let run = sessions.run(&runs[0]).unwrap();
    let call_id = loop {
        let pending = run.log().snapshot().iter().find_map(|event| {
            match serde_json::from_str::<Value>(&event.to_json()).ok()? {
                json if json["type"] == "tool.approval_required" => {
                    Some(json["toolCallId"].as_str()?.to_owned())
                }
                _ => None,
            }
        });
        if let Some(call_id) = pending {
            break call_id;
        }
        tokio::task::yield_now().await;
    };
    let rejected = call(
        "POST",
        format!("/runs/{}/tools/{call_id}/reject", runs[0]),
        None,
    )
    .await;
    assert_eq!(rejected.status(), StatusCode::NO_CONTENT);
    run.finish().await;
    // The place was given back as the run's log closed.
    assert_eq!(send("limit-c").await.status(), StatusCode::CREATED);
}

/// With more finished runs than the process keeps, the newest stay: a
/// client subscribing just after its run ended still reads its events.
/// (The load test above shows it with as many clients as the limit.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_just_ended_stays_readable_past_the_kept_runs() {
    let model = Arc::new(PerConversation { tool: "lookup" });
    // Finished runs past three times the limit are forgotten, oldest
    // first, down to the limit.
    let sessions = sessions(model, Arc::new(MemoryStore::new()))
        .max_running(600)
        .build();
    let mut last = None;
    let mut first = None;
    for number in 0..1900 {
        let run = sessions
            .send(&format!("kept-{number}"), "look up rust")
            .unwrap();
        run.finish().await;
        first.get_or_insert_with(|| run.id().to_owned());
        if let Some(previous) = last.replace(run.id().to_owned()) {
            let previous = sessions.run(&previous);
            assert!(
                previous.is_some(),
                "run {} was forgotten as the next began",
                number - 1
            );
        }
    }
    // And the kept runs are bounded: the oldest was forgotten.
    let first = first.unwrap();
    assert!(
        sessions.run(&first).is_none(),
        "the first run `{first}` is still kept after 1900"
    );
}
