//! Hostile HTTP against the router as the README serves it: generated
//! requests (malformed, truncated and deeply nested JSON, wrong types,
//! bodies over the limit, invalid UTF-8, unknown routes and methods,
//! missing and forged tokens, another user's ids) give no panic, no `5xx`,
//! a JSON error with a code for every `4xx`, and leave every stored row as
//! it was. Most go in-process (`oneshot`), a share over real TCP.
//!
//! The generator is a seeded SplitMix64: a failure names the request's
//! number, and the same seed replays it. `CHALIE_SOAK_HTTP_REQUESTS` sets
//! how many (default 100,000), `CHALIE_SOAK_SEED` the seed.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, header};
use chalie_core::session::{
    BearerTokens, Mode, SessionStore, SqliteStore, ToolsApi, console, http_errors, router,
};
use chalie_core::turn::Principal;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

use crate::{PerConversation, report, sessions, size};

const ALICE: &str = "alice-0123456789abcdef0123456789abcdef";
const BOB: &str = "bob-0123456789abcdef0123456789abcdef00";

// The seeded SplitMix64 the envelope fuzzers use: small, reproducible.
#[path = "../support/hostile.rs"]
mod hostile;
use hostile::Rng;

/// Who the request claims to be.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Who {
    /// No credentials, or credentials that prove nobody.
    Nobody,
    /// Bob, a real user, on Alice's objects.
    Bob,
    /// Alice herself, with a request that is broken in itself.
    Alice,
}

/// One generated request, as bytes, so the same one can go in-process or
/// over a socket.
struct Generated {
    method: String,
    path: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
    who: Who,
    /// The route names no id: it reads or acts on the caller's own.
    own: bool,
}

impl std::fmt::Debug for Generated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<String> = self
            .headers
            .iter()
            .map(|(name, value)| format!("{name}: {}", String::from_utf8_lossy(value)))
            .collect();
        let body = String::from_utf8_lossy(&self.body[..self.body.len().min(80)]);
        write!(
            f,
            "{:?} {} {} {headers:?} body ({} bytes) {body:?}",
            self.who,
            self.method,
            self.path,
            self.body.len()
        )
    }
}

/// Alice's real objects, which the requests aim at.
struct Targets {
    sessions: Vec<String>,
    runs: Vec<String>,
    calls: Vec<String>,
}

/// Path segments that are not UTF-8 once percent-decoded.
const NOT_UTF8: &[&str] = &["%FF", "%C3%28", "%ED%A0%80", "a%FEb", "%F0%28%8C%BC", "%80"];

/// Ids nobody owns, for requests that prove nobody.
const FORGED: &[&str] = &[
    "s-0000000000000000",
    "..",
    "%2E%2E%2Fetc",
    "a%2Fb",
    "%00",
    "%E2%80%AE",
    "run-1-1",
    "%27%20OR%201%3D1%20--",
];

fn route_templates() -> &'static [(&'static str, &'static str, bool)] {
    // (method, path with {s} {r} {c}, takes a JSON body)
    &[
        ("POST", "/sessions", true),
        ("GET", "/sessions", false),
        ("POST", "/sessions/{s}/messages", true),
        ("GET", "/sessions/{s}/messages", false),
        ("PATCH", "/sessions/{s}", true),
        ("GET", "/sessions/{s}/plan", false),
        ("DELETE", "/sessions/{s}/plan", false),
        ("POST", "/sessions/{s}/plan/execute", false),
        ("GET", "/runs/{r}/events", false),
        ("POST", "/runs/{r}/tools/{c}/approve", false),
        ("POST", "/runs/{r}/tools/{c}/reject", false),
        ("GET", "/me", false),
        ("GET", "/sessions/{s}/messages/{r}/stream", false),
        ("GET", "/plans", false),
        ("GET", "/plans?sessionId={s}", false),
        ("POST", "/plans/{s}/execute", false),
        ("DELETE", "/plans/{s}", false),
        ("GET", "/policy", false),
        ("PUT", "/policy", true),
        ("GET", "/tools", false),
        ("GET", "/tools/discover?q=rename%20a%20task", false),
    ]
}

/// Routes nobody serves, under the mount (`""` is the mount itself, `/ai`;
/// `/ai/` is outside it, the app's, not the API's).
const UNKNOWN: &[&str] = &[
    "",
    "/admin",
    "/sessions/{s}/x",
    "/runs",
    "/runs/{r}",
    "/runs/{r}/tools/{c}",
    "/sessions/{s}/plan/run",
    "/SESSIONS",
    "/sessions//messages",
    "/%FF",
    "/sessions/{s}/messages/../../admin",
    "/tools/x",
    "/plans/{s}/x",
    "/policy/x",
    "/sessions/{s}/messages/{r}",
];

const METHODS: &[&str] = &[
    "GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "BREW", "CONNECT",
];

/// A body that is not the JSON the route takes, whatever the route.
fn broken_body(rng: &mut Rng, template: &str) -> (Vec<u8>, &'static str) {
    let json = "application/json";
    match rng.below(11) {
        0 => (br#"{"content": "trunc"#.to_vec(), json),
        1 => {
            let mut body = br#"{"content": ""#.to_vec();
            body.extend_from_slice(&[0xFF, 0xFE, 0xC3, 0x28]);
            body.extend_from_slice(br#""}"#);
            (body, json)
        }
        2 => {
            let depth = 129 + rng.below(20_000);
            let mut body = "[".repeat(depth).into_bytes();
            body.extend(b"]".repeat(rng.below(depth)));
            (body, json)
        }
        3 => {
            let depth = 129 + rng.below(5_000);
            let mut body = "{\"content\":".repeat(depth).into_bytes();
            body.extend(b"1");
            body.extend(b"}".repeat(depth));
            (body, json)
        }
        4 => (b"not json at all".to_vec(), json),
        5 => (Vec::new(), json),
        6 => (br#"{"content": "hi"}"#.to_vec(), "text/plain"),
        7 => (
            br#"{"content": "hi", "mode": "auto"}"#.to_vec(),
            "application/xml",
        ),
        8 => (br#"{"content": "hi"} trailing"#.to_vec(), json),
        // Wrong types, per route: each a 422.
        _ => {
            let wrong: &[&str] = if template == "/policy" {
                &[
                    r#"{"permission": 5, "channel": "chat", "setting": "allow"}"#,
                    r#"{"permission": "delete_task", "channel": "fax", "setting": "allow"}"#,
                    r#"{"permission": "delete_task", "channel": "chat", "setting": "maybe"}"#,
                    r#"{"permission": "no_such_tool", "channel": "chat", "setting": "allow"}"#,
                    r#"{"permission": "delete_task"}"#,
                    "{}",
                    "[]",
                    "null",
                ]
            } else if template == "/sessions" {
                &[
                    r#"{"mode": 5}"#,
                    r#"{"mode": "warp"}"#,
                    r#"{"mode": {"a": 1}}"#,
                    r#"{"mode": [[[["plan"]]]]}"#,
                    r#"{"mode": true}"#,
                ]
            } else if template.ends_with("/messages") {
                &[
                    r#"{"content": 5}"#,
                    r#"{"content": null}"#,
                    "[1, 2]",
                    r#""content""#,
                    "42",
                    r#"{"text": "hi"}"#,
                    "{}",
                    "null",
                ]
            } else {
                &[
                    r#"{"mode": 5}"#,
                    r#"{"mode": "warp"}"#,
                    "{}",
                    "[]",
                    r#"{"mode": null}"#,
                    "null",
                ]
            };
            (rng.pick(wrong).as_bytes().to_vec(), json)
        }
    }
}

/// A body over the limit: valid JSON, so only its size is wrong.
fn huge_body(rng: &mut Rng) -> Vec<u8> {
    let length = http_errors::BODY_LIMIT + 1 + rng.below(512 * 1024);
    let mut body = br#"{"content": ""#.to_vec();
    body.resize(length, b'a');
    body.extend_from_slice(br#""}"#);
    body
}

fn authorization(rng: &mut Rng, who: Who) -> Option<Vec<u8>> {
    match who {
        Who::Alice => Some(format!("Bearer {ALICE}").into_bytes()),
        Who::Bob => Some(format!("Bearer {BOB}").into_bytes()),
        Who::Nobody => match rng.below(8) {
            0 => None,
            1 => Some(format!("Bearer {:016x}{:016x}", rng.next(), rng.next()).into_bytes()),
            2 => Some(b"Bearer".to_vec()),
            3 => Some(b"Basic YWxpY2U6c2VjcmV0".to_vec()),
            4 => {
                let mut token = format!("Bearer {ALICE}").into_bytes();
                let at = 7 + rng.below(ALICE.len());
                token[at] ^= 1;
                Some(token)
            }
            5 => Some(format!("Bearer {ALICE} {BOB}").into_bytes()),
            6 => Some(vec![
                b'B', b'e', b'a', b'r', b'e', b'r', b' ', 0xE9, 0xFF, 0x80,
            ]),
            _ => Some(format!("bearer  {}", &ALICE[..ALICE.len() - 1]).into_bytes()),
        },
    }
}

fn fill(rng: &mut Rng, template: &str, who: Who, targets: &Targets, bad_path: bool) -> String {
    let id = |rng: &mut Rng, real: &[String]| -> String {
        if bad_path {
            return rng.pick(NOT_UTF8).to_string();
        }
        match who {
            Who::Nobody if rng.chance(40) => rng.pick(FORGED).to_string(),
            _ => rng.pick(real).clone(),
        }
    };
    let session = id(rng, &targets.sessions);
    let run = id(rng, &targets.runs);
    let call = id(rng, &targets.calls);
    template
        .replace("{s}", &session)
        .replace("{r}", &run)
        .replace("{c}", &call)
}

/// One request that must fail, and leave the store as it was: a caller
/// proving nobody may send anything; Bob anything at Alice's objects
/// (never at an id nobody owns, which would open a session of his own);
/// Alice only what is broken in itself.
fn generate(rng: &mut Rng, targets: &Targets, tcp: bool) -> Generated {
    let who = *rng.pick(&[Who::Nobody, Who::Nobody, Who::Bob, Who::Alice]);
    let (method, template, takes_body) = *rng.pick(route_templates());
    // What is broken in the request itself; Alice's always has something.
    let mut flaw = rng.below(if who == Who::Alice { 4 } else { 5 });
    if flaw == 3 && !takes_body {
        flaw = rng.below(3);
    }
    // A route without an id has none to spoil; `POST /sessions` opens a
    // session for any real user, so its flaw is in the body. Bob may read
    // a route without an id (his own list): the verdict checks that it
    // names nothing of Alice's.
    if !template.contains('{')
        && who != Who::Nobody
        && (flaw == 2 || (flaw == 4 && method == "POST" && template == "/sessions"))
    {
        flaw = if takes_body { 3 } else { rng.below(2) };
    }
    let mut method = method.to_owned();
    let mut path = fill(rng, template, who, targets, flaw == 2);
    let mut content_type = None;
    let mut body = Vec::new();
    match flaw {
        0 => {
            let unknown = *rng.pick(UNKNOWN);
            path = fill(rng, unknown, who, targets, false);
        }
        1 => {
            let allowed: Vec<&str> = route_templates()
                .iter()
                .filter(|(_, other, _)| *other == template)
                .map(|(method, ..)| *method)
                .collect();
            method = loop {
                let candidate = *rng.pick(METHODS);
                // HEAD answers as GET does, which is not a flaw.
                if !allowed.contains(&candidate) && candidate != "HEAD" {
                    break candidate.to_owned();
                }
            };
        }
        3 if !tcp && rng.chance(2) => {
            body = huge_body(rng);
            content_type = Some("application/json");
        }
        3 => {
            let (broken, kind) = broken_body(rng, template);
            body = broken;
            content_type = Some(kind);
        }
        _ => {
            // Nothing else broken: only the caller is wrong.
            if template == "/policy" {
                // Valid, and Bob is no administrator.
                body = br#"{"permission": "delete_task", "channel": "chat", "setting": "allow"}"#
                    .to_vec();
                content_type = Some("application/json");
            } else if takes_body {
                let (valid, kind) = *rng.pick(&[
                    (r#"{"content": "delete task 7"}"#, "application/json"),
                    (r#"{"mode": "auto"}"#, "application/json"),
                    (r#"{"content": "hi"}"#, "application/json; charset=utf-8"),
                ]);
                body = valid.as_bytes().to_vec();
                content_type = Some(kind);
            }
        }
    }
    let mut headers = Vec::new();
    if let Some(token) = authorization(rng, who) {
        headers.push(("authorization".to_owned(), token));
    }
    if let Some(kind) = content_type {
        headers.push(("content-type".to_owned(), kind.as_bytes().to_vec()));
    }
    Generated {
        own: flaw == 4 && !template.contains('{'),
        method,
        // The app serves the API under `/ai`, as the README mounts it.
        path: format!("/ai{path}"),
        headers,
        body,
        who,
    }
}

/// What came back: the status, the headers that matter, the body.
struct Answer {
    status: u16,
    content_type: Option<String>,
    allow: bool,
    retry_after: bool,
    body: Vec<u8>,
}

async fn in_process(app: &axum::Router, request: &Generated) -> Answer {
    let mut builder = Request::builder()
        .method(Method::from_bytes(request.method.as_bytes()).unwrap())
        .uri(&request.path);
    for (name, value) in &request.headers {
        builder = builder.header(name, HeaderValue::from_bytes(value).unwrap());
    }
    let response = app
        .clone()
        .oneshot(builder.body(Body::from(request.body.clone())).unwrap())
        .await
        .unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    // A success may be an endless stream: errors and JSON are read.
    let is_stream = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
    let body = if !is_stream {
        axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap()
            .to_vec()
    } else {
        Vec::new()
    };
    Answer {
        status,
        content_type: headers
            .get(header::CONTENT_TYPE)
            .map(|value| value.to_str().unwrap_or_default().to_owned()),
        allow: headers.contains_key(header::ALLOW),
        retry_after: headers.contains_key(header::RETRY_AFTER),
        body,
    }
}

async fn over_tcp(address: std::net::SocketAddr, request: &Generated) -> Answer {
    let mut raw = format!(
        "{} {} HTTP/1.1\r\nhost: test\r\nconnection: close\r\n",
        request.method, request.path
    )
    .into_bytes();
    for (name, value) in &request.headers {
        raw.extend_from_slice(name.as_bytes());
        raw.extend_from_slice(b": ");
        raw.extend_from_slice(value);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(format!("content-length: {}\r\n\r\n", request.body.len()).as_bytes());
    raw.extend_from_slice(&request.body);
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    socket.write_all(&raw).await.unwrap();
    let mut received = Vec::new();
    let mut chunk = [0u8; 8192];
    // Read until the head is complete, then the body to its end (errors
    // are small and the connection closes after them).
    loop {
        let read = socket.read(&mut chunk).await.unwrap_or(0);
        if read == 0 {
            break;
        }
        received.extend_from_slice(&chunk[..read]);
        if let Some(end) = find(&received, b"\r\n\r\n")
            && received.starts_with(b"HTTP/1.1 2")
            && String::from_utf8_lossy(&received[..end])
                .to_ascii_lowercase()
                .contains("text/event-stream")
        {
            received.truncate(end + 4);
            break;
        }
    }
    let end = find(&received, b"\r\n\r\n").expect("a complete HTTP head");
    let head = String::from_utf8_lossy(&received[..end]).to_string();
    let status: u16 = head[9..12].parse().unwrap();
    let header = |name: &str| {
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    let mut body = received[end + 4..].to_vec();
    if header("transfer-encoding").is_some_and(|value| value.contains("chunked")) {
        body = dechunk(&body);
    }
    Answer {
        status,
        content_type: header("content-type"),
        allow: header("allow").is_some(),
        retry_after: header("retry-after").is_some(),
        body,
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line) = find(body, b"\r\n") {
        let size =
            usize::from_str_radix(std::str::from_utf8(&body[..line]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        out.extend_from_slice(&body[line + 2..line + 2 + size]);
        body = &body[line + 2 + size + 2..];
    }
    out
}

/// Every row of every table, sorted: the whole store, to compare.
fn snapshot(path: &std::path::Path) -> BTreeMap<String, Vec<String>> {
    let connection = rusqlite::Connection::open(path).unwrap();
    let mut tables: Vec<String> = connection
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tables.sort();
    let mut all = BTreeMap::new();
    for table in tables {
        let mut statement = connection
            .prepare(&format!("SELECT * FROM \"{table}\""))
            .unwrap();
        let columns = statement.column_count();
        let mut rows: Vec<String> = statement
            .query_map([], |row| {
                Ok((0..columns)
                    .map(|column| format!("{:?}", row.get_ref(column).unwrap()))
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows.sort();
        all.insert(table, rows);
    }
    all
}

/// Checks one answer; returns what is wrong with it, if anything.
/// `alices` are Alice's ids, which no answer to Bob may name.
fn verdict(request: &Generated, answer: &Answer, alices: &[String]) -> Option<String> {
    if answer.status >= 500 {
        return Some(format!("a {} (no 5xx is promised)", answer.status));
    }
    if answer.status < 400 {
        // Only Bob's read of his own (a route without an id, e.g. his
        // session list) may succeed, and it may name nothing of Alice's;
        // anything else that succeeds acted on or read Alice's objects or
        // let nobody in. The store check catches any write that slipped
        // through.
        if request.who != Who::Bob || request.method != "GET" || !request.own {
            return Some(format!("a {} to a request that must fail", answer.status));
        }
        let body = String::from_utf8_lossy(&answer.body);
        return alices
            .iter()
            .find(|id| body.contains(id.as_str()))
            .map(|id| format!("Bob read Alice's `{id}`: {body}"));
    }
    if answer.content_type.as_deref() != Some("application/json") {
        return Some(format!("content-type {:?}", answer.content_type));
    }
    let Ok(Value::Object(body)) = serde_json::from_slice::<Value>(&answer.body) else {
        return Some(format!("body {:?}", String::from_utf8_lossy(&answer.body)));
    };
    let message = body
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let code = body.get("code").and_then(Value::as_str).unwrap_or_default();
    let kebab = !code.is_empty()
        && code
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if message.is_empty() || !kebab {
        return Some(format!("error shape {body:?}"));
    }
    if answer.status == 405 && !answer.allow {
        return Some("a 405 without `Allow`".into());
    }
    if answer.status == 401 && request.who != Who::Nobody {
        return Some("a real user's token refused".into());
    }
    if answer.status == 503 && !answer.retry_after {
        return Some("a 503 without `Retry-After`".into());
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_hostile_requests_get_json_errors_and_change_nothing() {
    let requests = size("CHALIE_SOAK_HTTP_REQUESTS", 100_000);
    let seed = size("CHALIE_SOAK_SEED", 39) as u64;
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("sessions.db");
    let store = Arc::new(SqliteStore::open(&path).unwrap());
    let model = Arc::new(PerConversation {
        tool: "delete_task",
    });
    let sessions = sessions(model, store.clone()).build();
    // Alice may change the policy: even an administrator's broken
    // request changes nothing.
    let tokens = BearerTokens::new()
        .with_admin(ALICE, Principal::new("alice"))
        .unwrap()
        .with(BOB, Principal::new("bob"))
        .unwrap();
    // The app as the README composes it: the API with the Tools view's
    // routes merged in, under `/ai`, beside the console.
    let tools = ToolsApi::new(chalie_core::registry().unwrap().clone());
    let api = router(sessions.clone(), tokens.clone()).merge(tools.router(tokens));
    let app = axum::Router::new().nest("/ai", api).merge(console());

    // Alice's objects, made the way she makes them: a run waiting on an
    // approval, a collected plan, a finished run.
    let alice = Principal::new("alice");
    let mine = sessions.as_principal(&alice);
    mine.set_mode("alice-plan", Mode::PlanCollect).unwrap();
    let waiting = mine.send("alice-approval", "delete task 7").unwrap();
    let planned = mine.send("alice-plan", "delete task 7").unwrap();
    let done = mine.send("alice-done", "delete task 7").unwrap();
    planned.finish().await;
    let pending = async |session: &str| loop {
        if let Some(approval) = store.pending_approvals(session).unwrap().pop() {
            break approval.call_id;
        }
        tokio::task::yield_now().await;
    };
    let approved = pending("alice-done").await;
    mine.approve(done.id(), &approved).unwrap();
    done.finish().await;
    let call = pending("alice-approval").await;
    // A policy row of Alice's making, which no hostile request may change.
    let set = app
        .clone()
        .oneshot(
            Request::put("/ai/policy")
                .header(header::AUTHORIZATION, format!("Bearer {ALICE}"))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(
                    r#"{"permission": "lookup", "channel": "chat", "setting": "ask"}"#,
                ))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(set.status(), 200);
    assert_eq!(mine.plan("alice-plan").unwrap().len(), 1);
    let targets = Targets {
        sessions: vec![
            "alice-approval".into(),
            "alice-plan".into(),
            "alice-done".into(),
        ],
        runs: vec![waiting.id().into(), planned.id().into(), done.id().into()],
        calls: vec![call],
    };
    let alices: Arc<Vec<String>> = Arc::new(
        [&targets.sessions, &targets.runs, &targets.calls]
            .into_iter()
            .flatten()
            .cloned()
            .collect(),
    );
    let before = snapshot(&path);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let served = app.clone();
    tokio::spawn(async move { axum::serve(listener, served).await.unwrap() });

    // Generated one after another as they are sent (the stream pulls them
    // in order), so the seed alone replays them.
    let mut rng = Rng::seeded(seed);
    let generated = (0..requests).map(move |number| {
        let tcp = number % 50 == 0;
        (number, tcp, generate(&mut rng, &targets, tcp))
    });
    let outcomes: Vec<(usize, u16, bool, Option<String>)> = futures::stream::iter(generated)
        .map(|(number, tcp, request)| {
            let app = app.clone();
            let alices = Arc::clone(&alices);
            async move {
                let task = tokio::spawn(async move {
                    let answer = if tcp {
                        over_tcp(address, &request).await
                    } else {
                        in_process(&app, &request).await
                    };
                    let wrong = verdict(&request, &answer, &alices)
                        .map(|wrong| format!("request {number} {request:?}: {wrong}"));
                    (answer.status, wrong)
                });
                match task.await {
                    Ok((status, wrong)) => (number, status, false, wrong),
                    Err(panic) => (
                        number,
                        0,
                        true,
                        Some(format!("request {number} panicked: {panic}")),
                    ),
                }
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;

    let after = snapshot(&path);
    let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
    let mut panics = 0;
    let mut wrong = Vec::new();
    for (_, status, panicked, problem) in &outcomes {
        *by_status.entry(status.to_string()).or_default() += 1;
        panics += usize::from(*panicked);
        wrong.extend(problem.clone());
    }
    let server_errors: usize = outcomes
        .iter()
        .filter(|(_, status, ..)| *status >= 500)
        .count();
    let changed: Vec<&String> = before
        .keys()
        .filter(|table| before.get(*table) != after.get(*table))
        .collect();
    report(json!({
        "test": "hostile_http",
        "requests": outcomes.len(),
        "by_status": by_status,
        "panics": panics,
        "server_errors": server_errors,
        "bad_answers": wrong.len(),
        "store_changes": changed.len(),
        "peak_rss_kib": crate::peak_rss_kib(),
    }));
    assert!(
        wrong.is_empty(),
        "{} of {requests} answers broke the contract, e.g.:\n{}",
        wrong.len(),
        wrong
            .iter()
            .take(10)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    );
    for table in &changed {
        let was: Vec<&String> = before[*table]
            .iter()
            .filter(|row| !after[*table].contains(row))
            .collect();
        let now: Vec<&String> = after[*table]
            .iter()
            .filter(|row| !before[*table].contains(row))
            .collect();
        eprintln!("table {table}: gone {was:?}, new {now:?}");
    }
    assert!(
        changed.is_empty(),
        "hostile requests changed the tables {changed:?}"
    );
    assert!(
        !after["policy_settings"].is_empty(),
        "Alice's policy row is kept"
    );
    // The store was read while the waiting run went on: it still waits.
    assert!(!waiting.log().is_closed());
}
