//! An `ask` on the external channel answered by the MCP client's user: a
//! client that declares form elicitation gets the question as an
//! input-required result and retries with the answer; any other client
//! keeps the deny. Driven by rmcp's client, which fulfils input requests
//! through its handler and retries on its own.

use std::sync::{Arc, Mutex};

use chalie_core::envelope::Envelope;
use chalie_core::mcp::{APPROVAL_INPUT, Exposure, McpServer};
use chalie_core::turn::{ActionTrail, CallStatus, GateDecision};
use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, ErrorData, FormElicitationCapability,
    Implementation, InputResponses, ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient, RunningService,
};
use serde_json::{Value, json};

use crate::abilities::cancelled;
use crate::python::{python, script};
use crate::{dispatcher, dispatcher_with, policy, text};
use chalie_core::Channel;
use chalie_core::dispatch::{RateLimit, Setting};

/// A client whose user answers every approval question the same way.
#[derive(Clone)]
struct User {
    /// Whether the user approves.
    approves: bool,
    /// Whether the client declares that it can ask its user at all.
    declares: bool,
    /// The questions the user was shown.
    asked: Arc<Mutex<Vec<String>>>,
}

impl User {
    fn new(approves: bool, declares: bool) -> Self {
        User {
            approves,
            declares,
            asked: Arc::default(),
        }
    }
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.declares {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        ClientConfig::new(capabilities, Implementation::new("approving-client", "1.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(ElicitResult::new(ElicitationAction::Accept)
            .with_content(json!({ "approve": self.approves })))
    }
}

/// A `full` server over the test dispatcher, recording on `trail`.
fn server(trail: &ActionTrail) -> McpServer {
    McpServer::builder(dispatcher(&[]))
        .exposure(Exposure::Full)
        .trail(trail.clone())
        .build()
        .unwrap()
}

/// An `on_demand` server over the test dispatcher, recording on `trail`:
/// every other tool is called through the `call_tool` proxy.
fn on_demand_server(trail: &ActionTrail) -> McpServer {
    McpServer::builder(dispatcher(&[]))
        .exposure(Exposure::on_demand())
        .trail(trail.clone())
        .build()
        .unwrap()
}

/// `cancel_order` for `order_id`, through the `call_tool` proxy.
fn proxied_cancel(order_id: &str) -> CallToolRequestParams {
    proxied("cancel_order", order_id)
}

fn proxied(name: &str, order_id: &str) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({ "name": name, "arguments": { "order_id": order_id } })
    else {
        unreachable!()
    };
    CallToolRequestParams::new(chalie_core::mcp::CALL_PROXY).with_arguments(arguments)
}

/// The user's yes, as a client sends it back.
fn yes() -> InputResponses {
    let mut yes = InputResponses::new();
    yes.insert(
        APPROVAL_INPUT.to_owned(),
        json!({ "action": "accept", "content": { "approve": true } }),
    );
    yes
}

/// Connects `user` on protocol 2026-07-28 (`server/discover`, capabilities
/// on every request), the first with input-required results.
async fn connect(server: &McpServer, user: User) -> RunningService<RoleClient, User> {
    connect_with(
        server,
        user,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
}

async fn connect_with(
    server: &McpServer,
    user: User,
    lifecycle: ClientLifecycleMode,
) -> RunningService<RoleClient, User> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = server.clone();
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        server.serve_io(read, write).await
    });
    let (read, write) = tokio::io::split(client_end);
    user.serve_with_lifecycle((read, write), lifecycle)
        .await
        .unwrap()
}

fn cancel(order_id: &str) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({ "order_id": order_id }) else {
        unreachable!()
    };
    CallToolRequestParams::new("cancel_order").with_arguments(arguments)
}

fn code(text: &str) -> Option<String> {
    Envelope::parse(text)
        .ok()
        .and_then(|envelope| envelope.code().map(str::to_owned))
}

#[tokio::test]
async fn an_approval_answered_by_the_client_runs_the_call_once() {
    let trail = ActionTrail::default();
    let user = User::new(true, true);
    let client = connect(&server(&trail), user.clone()).await;
    let done = client.call_tool(cancel("ASK-1")).await.unwrap();
    assert_eq!(done.is_error, Some(false), "{}", text(&done));
    assert_eq!(
        text(&done),
        "[cancel_order(status=success)]\ncancelled ASK-1\n[end:cancel_order]"
    );
    assert_eq!(cancelled("ASK-1"), 1);
    // The user saw the permission and the arguments.
    let asked = user.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("`cancel_order`"), "{}", asked[0]);
    assert!(asked[0].contains("ASK-1"), "{}", asked[0]);
    // One record: the call, approved, and nothing for the round that asked.
    let records = trail.snapshot();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].decision, GateDecision::Approved);
    assert_eq!(records[0].status, CallStatus::Success);
    assert_eq!(records[0].permission, "cancel_order");
}

#[tokio::test]
async fn a_refusal_runs_nothing_and_is_on_the_trail() {
    let trail = ActionTrail::default();
    let user = User::new(false, true);
    let client = connect(&server(&trail), user.clone()).await;
    let done = client.call_tool(cancel("ASK-2")).await.unwrap();
    assert_eq!(done.is_error, Some(true));
    assert_eq!(code(&text(&done)).as_deref(), Some("approval-rejected"));
    assert!(text(&done).contains("the user declined"), "{}", text(&done));
    assert_eq!(cancelled("ASK-2"), 0);
    assert_eq!(user.asked.lock().unwrap().len(), 1);
    let records = trail.snapshot();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].decision, GateDecision::Rejected);
    assert_eq!(records[0].status, CallStatus::Error);
}

#[tokio::test]
async fn a_client_that_cannot_ask_keeps_the_deny() {
    let trail = ActionTrail::default();
    let user = User::new(true, false);
    let client = connect(&server(&trail), user.clone()).await;
    let done = client.call_tool(cancel("ASK-3")).await.unwrap();
    assert_eq!(done.is_error, Some(true));
    assert_eq!(code(&text(&done)).as_deref(), Some("permission-denied"));
    assert_eq!(cancelled("ASK-3"), 0);
    assert!(user.asked.lock().unwrap().is_empty());
    assert_eq!(trail.snapshot()[0].decision, GateDecision::Denied);

    // Nor can one on a protocol before input-required results, whatever
    // it declares at `initialize`.
    let legacy = User::new(true, true);
    let client = connect_with(
        &server(&trail),
        legacy.clone(),
        ClientLifecycleMode::Initialize,
    )
    .await;
    let done = client.call_tool(cancel("ASK-3")).await.unwrap();
    assert_eq!(code(&text(&done)).as_deref(), Some("permission-denied"));
    assert_eq!(cancelled("ASK-3"), 0);
    assert!(legacy.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_allowed_or_denied_call_asks_nobody() {
    let user = User::new(true, true);
    let client = connect(&server(&ActionTrail::default()), user.clone()).await;
    // Allowed on the external channel: runs without a question.
    let read = client
        .call_tool(
            CallToolRequestParams::new("lookup_order")
                .with_arguments(json!({ "order_id": "A-1" }).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(read.is_error, Some(false));
    assert!(user.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_tool_the_policy_denies_is_never_asked_about() {
    // `deny` as written on the external channel, not an `ask` that reads
    // as deny there: a client that can ask its user does not turn it back.
    let dispatcher = dispatcher_with(&[], |builder| {
        let mut denied = policy();
        denied
            .set(Channel::External, "cancel_order", Setting::Deny)
            .unwrap();
        builder.policy(denied)
    });
    let trail = ActionTrail::default();
    let server = McpServer::builder(dispatcher)
        .exposure(Exposure::Full)
        .trail(trail.clone())
        .build()
        .unwrap();
    let user = User::new(true, true);
    let client = connect(&server, user.clone()).await;
    let done = client.call_tool(cancel("DENY-1")).await.unwrap();
    assert_eq!(done.is_error, Some(true));
    assert_eq!(code(&text(&done)).as_deref(), Some("permission-denied"));
    assert!(user.asked.lock().unwrap().is_empty());
    assert_eq!(cancelled("DENY-1"), 0);
    assert_eq!(trail.snapshot()[0].decision, GateDecision::Denied);
}

#[tokio::test]
async fn a_call_limited_to_one_a_window_can_be_approved() {
    // The round that asks is the call's one admission; the approved retry
    // is not counted again.
    let dispatcher = dispatcher_with(&[], |builder| {
        builder.rate_limit(RateLimit::new(1, std::time::Duration::from_secs(3600)))
    });
    let server = McpServer::builder(dispatcher)
        .exposure(Exposure::Full)
        .build()
        .unwrap();
    let user = User::new(true, true);
    let client = connect(&server, user.clone()).await;
    let done = client.call_tool(cancel("RATE-1")).await.unwrap();
    assert_eq!(done.is_error, Some(false), "{}", text(&done));
    assert_eq!(cancelled("RATE-1"), 1);
    assert_eq!(user.asked.lock().unwrap().len(), 1);
    // The window is spent: the next call is refused before anyone is asked.
    let again = client.call_tool(cancel("RATE-2")).await.unwrap();
    assert_eq!(code(&text(&again)).as_deref(), Some("rate-limited"));
    assert_eq!(cancelled("RATE-2"), 0);
    assert_eq!(user.asked.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_question_is_answered_only_on_the_connection_asked() {
    let trail = ActionTrail::default();
    let server = server(&trail);
    let a = connect(&server, User::new(true, true)).await;
    let b = connect(&server, User::new(true, true)).await;
    let CallToolResponse::InputRequired(question) =
        a.peer().call_tool_once(cancel("OWN-1")).await.unwrap()
    else {
        panic!("expected an input-required result")
    };
    let state = question.request_state.unwrap();
    // Another connection holding A's state, or one next to it, learns
    // nothing and uses nothing up.
    // `chalie-approval-<number>-<secret>`: the number next to it, or the
    // secret off by one digit.
    let (head, secret) = state.rsplit_once('-').unwrap();
    let (prefix, number) = head.rsplit_once('-').unwrap();
    let number = u64::from_str_radix(number, 16).unwrap();
    let counter = |number: u64| format!("{prefix}-{number:x}-{secret}");
    let (kept, last) = secret.split_at(secret.len() - 1);
    let digit = (u32::from_str_radix(last, 16).unwrap() + 1) % 16;
    let off_by_one = format!("{head}-{kept}{digit:x}");
    for (order, sent) in [
        ("OWN-1", state.clone()),
        ("OWN-2", state.clone()),
        ("OWN-1", counter(number + 1)),
        ("OWN-1", counter(number.wrapping_sub(1))),
        ("OWN-1", off_by_one.clone()),
    ] {
        let stolen = b
            .peer()
            .call_tool_once(
                cancel(order)
                    .with_request_state(sent)
                    .with_input_responses(yes()),
            )
            .await;
        let Err(error) = stolen else {
            panic!("another connection's answer was taken: {stolen:?}")
        };
        assert!(format!("{error:?}").contains("unknown"), "{error:?}");
    }
    // Nor does a guess on A's own connection use A's question up.
    let guessed = a
        .peer()
        .call_tool_once(
            cancel("OWN-1")
                .with_request_state(off_by_one)
                .with_input_responses(yes()),
        )
        .await;
    assert!(guessed.is_err(), "{guessed:?}");
    assert_eq!(cancelled("OWN-1") + cancelled("OWN-2"), 0);
    // A's own retry still runs the call, once.
    let retry = || {
        a.peer().call_tool_once(
            cancel("OWN-1")
                .with_request_state(state.clone())
                .with_input_responses(yes()),
        )
    };
    let CallToolResponse::Complete(done) = retry().await.unwrap() else {
        panic!("expected the call's result")
    };
    assert_eq!(done.is_error, Some(false));
    assert!(retry().await.is_err());
    assert_eq!(cancelled("OWN-1"), 1);
}

#[tokio::test]
async fn on_demand_a_client_that_cannot_ask_keeps_the_deny() {
    let trail = ActionTrail::default();
    let user = User::new(true, false);
    let client = connect(&on_demand_server(&trail), user.clone()).await;
    let done = client.call_tool(proxied_cancel("ODA-1")).await.unwrap();
    assert_eq!(done.is_error, Some(true));
    assert_eq!(code(&text(&done)).as_deref(), Some("permission-denied"));
    assert_eq!(cancelled("ODA-1"), 0);
    assert!(user.asked.lock().unwrap().is_empty());
    assert_eq!(trail.snapshot()[0].decision, GateDecision::Denied);
}

#[tokio::test]
async fn on_demand_an_approval_answered_by_the_client_runs_the_call_once() {
    let trail = ActionTrail::default();
    let user = User::new(true, true);
    let client = connect(&on_demand_server(&trail), user.clone()).await;
    let done = client.call_tool(proxied_cancel("ODA-2")).await.unwrap();
    assert_eq!(done.is_error, Some(false), "{}", text(&done));
    assert_eq!(
        text(&done),
        "[cancel_order(status=success)]\ncancelled ODA-2\n[end:cancel_order]"
    );
    assert_eq!(cancelled("ODA-2"), 1);
    let asked = user.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("`cancel_order`"), "{}", asked[0]);
    assert!(asked[0].contains("ODA-2"), "{}", asked[0]);
    let records = trail.snapshot();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].decision, GateDecision::Approved);
    assert_eq!(records[0].status, CallStatus::Success);
}

#[tokio::test]
async fn on_demand_an_answer_does_not_carry_over_to_another_proxied_tool() {
    let client = connect(
        &on_demand_server(&ActionTrail::default()),
        User::new(true, true),
    )
    .await;
    let peer = client.peer();
    let CallToolResponse::InputRequired(question) =
        peer.call_tool_once(proxied_cancel("ODA-3")).await.unwrap()
    else {
        panic!("expected an input-required result")
    };
    let state = question.request_state.unwrap();
    // The same proxy, another tool inside it: refused, and nothing ran.
    let other = peer
        .call_tool_once(
            proxied("lookup_order", "ODA-3")
                .with_request_state(state)
                .with_input_responses(yes()),
        )
        .await;
    let Err(error) = other else {
        panic!("the answer carried over to another tool: {other:?}")
    };
    assert!(format!("{error:?}").contains("differs"), "{error:?}");
    assert_eq!(cancelled("ODA-3"), 0);
}

#[tokio::test]
async fn an_answer_approves_one_run_and_only_the_call_asked_about() {
    let trail = ActionTrail::default();
    let client = connect(&server(&trail), User::new(true, true)).await;
    let peer = client.peer();
    let CallToolResponse::InputRequired(question) =
        peer.call_tool_once(cancel("ASK-4")).await.unwrap()
    else {
        panic!("expected an input-required result")
    };
    assert_eq!(cancelled("ASK-4"), 0, "asking ran nothing");
    let state = question.request_state.clone().unwrap();
    assert!(
        question
            .input_requests
            .unwrap()
            .contains_key(APPROVAL_INPUT)
    );
    let mut yes = InputResponses::new();
    yes.insert(
        APPROVAL_INPUT.to_owned(),
        json!({ "action": "accept", "content": { "approve": true } }),
    );
    // The answer does not carry over to other arguments.
    let other = peer
        .call_tool_once(
            cancel("ASK-5")
                .with_request_state(state.clone())
                .with_input_responses(yes.clone()),
        )
        .await;
    assert!(other.is_err(), "{other:?}");
    assert_eq!(cancelled("ASK-5"), 0);
    // That misuse used the question up: asking again is how to go on.
    let CallToolResponse::InputRequired(question) =
        peer.call_tool_once(cancel("ASK-4")).await.unwrap()
    else {
        panic!("expected an input-required result")
    };
    let state = question.request_state.unwrap();
    let retry = || {
        peer.call_tool_once(
            cancel("ASK-4")
                .with_request_state(state.clone())
                .with_input_responses(yes.clone()),
        )
    };
    let CallToolResponse::Complete(done) = retry().await.unwrap() else {
        panic!("expected the call's result")
    };
    assert_eq!(done.is_error, Some(false));
    // A replay of the same answer runs nothing.
    assert!(retry().await.is_err());
    assert_eq!(cancelled("ASK-4"), 1);
    let records = trail.snapshot();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].decision, GateDecision::Approved);
}

/// Runs `client_approve.py` (the official Python SDK client, protocol
/// 2026-07-28) against `server` over streamable HTTP with `answer`.
async fn python_client(server: McpServer, order: &str, answer: &str) -> Value {
    let report = std::env::temp_dir().join(format!(
        "chalie-mcp-approve-{}-{order}.json",
        std::process::id()
    ));
    let http = server.serve_http(([127, 0, 0, 1], 0).into()).await.unwrap();
    let mut child = tokio::process::Command::new(python())
        .arg(script("client_approve.py"))
        .args(["--url", &http.url(), "--order", order, answer, "--report"])
        .arg(&report)
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait())
        .await
        .expect("the Python client finished within 60 s")
        .unwrap();
    http.shutdown().await.unwrap();
    assert!(
        status.success(),
        "client_approve.py failed ({status}); its stderr is above"
    );
    let text = std::fs::read_to_string(&report).unwrap();
    let _ = std::fs::remove_file(&report);
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn the_python_sdk_client_answers_the_approval() {
    let trail = ActionTrail::default();
    let approved = python_client(server(&trail), "PY-ASK-1", "--approve").await;
    assert_eq!(approved["is_error"], false, "{approved}");
    assert_eq!(cancelled("PY-ASK-1"), 1);
    let asked = approved["asked"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{approved}");
    assert!(
        asked[0]["message"]
            .as_str()
            .unwrap()
            .contains("`cancel_order`")
    );

    let refused = python_client(server(&trail), "PY-ASK-2", "--refuse").await;
    assert_eq!(refused["is_error"], true, "{refused}");
    assert_eq!(
        code(refused["text"].as_str().unwrap()).as_deref(),
        Some("approval-rejected")
    );
    assert_eq!(cancelled("PY-ASK-2"), 0);

    let silent = python_client(server(&trail), "PY-ASK-3", "--no-elicitation").await;
    assert_eq!(
        code(silent["text"].as_str().unwrap()).as_deref(),
        Some("permission-denied"),
        "{silent}"
    );
    assert!(silent["asked"].as_array().unwrap().is_empty());
    assert_eq!(cancelled("PY-ASK-3"), 0);

    let decisions: Vec<GateDecision> = trail
        .snapshot()
        .iter()
        .map(|record| record.decision)
        .collect();
    assert_eq!(
        decisions,
        [
            GateDecision::Approved,
            GateDecision::Rejected,
            GateDecision::Denied
        ]
    );
}

/// The folder `cargo xtask node-env` installs the TypeScript SDK into.
fn node_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/node")
}

/// Runs `client_approve.mjs` (the official TypeScript SDK client,
/// `@modelcontextprotocol/client` pinned to 2026-07-28) against `server`.
async fn typescript_client(server: McpServer, order: &str, answer: &str) -> Value {
    let dir = node_dir();
    assert!(
        dir.join("node_modules/@modelcontextprotocol/client")
            .exists(),
        "the TypeScript MCP SDK is not installed in `{}`; run `cargo xtask node-env` (which `cargo xtask test` runs first)",
        dir.display()
    );
    let report = std::env::temp_dir().join(format!(
        "chalie-mcp-approve-ts-{}-{order}.json",
        std::process::id()
    ));
    let http = server.serve_http(([127, 0, 0, 1], 0).into()).await.unwrap();
    let mut child = tokio::process::Command::new("node")
        .current_dir(&dir)
        .arg("client_approve.mjs")
        .args([&http.url(), order, answer])
        .arg(&report)
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("`node` runs the TypeScript client");
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait())
        .await
        .expect("the TypeScript client finished within 60 s")
        .unwrap();
    http.shutdown().await.unwrap();
    assert!(
        status.success(),
        "client_approve.mjs failed ({status}); its stderr is above"
    );
    let text = std::fs::read_to_string(&report).unwrap();
    let _ = std::fs::remove_file(&report);
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn the_typescript_sdk_client_answers_the_approval() {
    let trail = ActionTrail::default();
    let approved = typescript_client(server(&trail), "TS-ASK-1", "approve").await;
    assert_eq!(approved["is_error"], false, "{approved}");
    assert_eq!(cancelled("TS-ASK-1"), 1);
    assert_eq!(approved["asked"].as_array().unwrap().len(), 1, "{approved}");

    let refused = typescript_client(server(&trail), "TS-ASK-2", "refuse").await;
    assert_eq!(
        code(refused["text"].as_str().unwrap()).as_deref(),
        Some("approval-rejected"),
        "{refused}"
    );
    assert_eq!(cancelled("TS-ASK-2"), 0);

    let silent = typescript_client(server(&trail), "TS-ASK-3", "no-elicitation").await;
    assert_eq!(
        code(silent["text"].as_str().unwrap()).as_deref(),
        Some("permission-denied"),
        "{silent}"
    );
    assert_eq!(cancelled("TS-ASK-3"), 0);

    let decisions: Vec<GateDecision> = trail
        .snapshot()
        .iter()
        .map(|record| record.decision)
        .collect();
    assert_eq!(
        decisions,
        [
            GateDecision::Approved,
            GateDecision::Rejected,
            GateDecision::Denied
        ]
    );
}
