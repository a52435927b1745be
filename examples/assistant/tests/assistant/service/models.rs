//! The service on real model clients, each against a local server that
//! speaks the API's streaming protocol: a weather question answered with a
//! `find_tools` call (streamed as tool-call deltas), the tool's result sent
//! back, and the answer streamed to the user. And without any model, the
//! service stops with one message naming the three ways to give one.

use serde_json::{Value, json};

use super::fake_model::{anthropic_text, anthropic_tool_use, openai_text, openai_tool_call, serve};
use super::{ALICE, Service, Workdir, names, open_session, send};

/// Alice asks about the weather; the run's events to the settlement.
async fn ask(service: &Service) -> Vec<(String, Value)> {
    let session = open_session(&service.base, ALICE, "approval").await;
    let (_, mut stream) = send(&service.base, ALICE, &session, "will it rain in Rome").await;
    stream.until("run.settlement.completed").await
}

/// The tool call completed and the streamed answer reached the user.
fn answered(events: &[(String, Value)]) {
    let names = names(events);
    assert!(names.contains(&"tool.completed"), "{names:?}");
    let completed = events
        .iter()
        .find(|(name, _)| name == "message.completed")
        .unwrap_or_else(|| panic!("no answer: {names:?}"));
    assert!(
        completed.1.to_string().contains("Cloudy in Rome."),
        "{}",
        completed.1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_compatible_server_streams_tool_call_deltas_and_the_answer() {
    let query = json!({ "query": ["weather in Rome"] });
    let (url, received) = serve(vec![
        openai_tool_call("find_tools", &query),
        openai_text("Cloudy in Rome."),
    ])
    .await;
    let work = Workdir::new();
    let service = Service::start(
        &work,
        &[
            "--model-url",
            &format!("{url}/v1"),
            "--model",
            "local-model",
        ],
        &[("OPENAI_API_KEY", "sk-local-test")],
    );
    answered(&ask(&service).await);

    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 2);
    let (head, first) = &received[0];
    assert!(head.starts_with("POST /v1/chat/completions"), "{head}");
    assert!(
        head.to_lowercase()
            .contains("authorization: bearer sk-local-test"),
        "{head}"
    );
    assert_eq!(first["model"], "local-model");
    assert_eq!(first["stream"], true);
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    assert!(offered.contains(&"find_tools"), "{offered:?}");
    // The call's result goes back as a tool message for the call's id.
    let (_, second) = &received[1];
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool message: {second}"));
    assert_eq!(tool_message["tool_call_id"], "call_1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_anthropic_client_streams_tool_use_and_the_answer() {
    let query = json!({ "query": ["weather in Rome"] });
    let (url, received) = serve(vec![
        anthropic_tool_use("find_tools", &query),
        anthropic_text("Cloudy in Rome."),
    ])
    .await;
    let work = Workdir::new();
    let service = Service::start(
        &work,
        &["--anthropic-url", &url, "--model", "claude-test"],
        &[("ANTHROPIC_API_KEY", "sk-ant-local-test")],
    );
    answered(&ask(&service).await);

    let received = received.lock().unwrap().clone();
    assert_eq!(received.len(), 2);
    let (head, first) = &received[0];
    assert!(head.starts_with("POST /v1/messages"), "{head}");
    assert!(
        head.to_lowercase().contains("x-api-key: sk-ant-local-test"),
        "{head}"
    );
    assert_eq!(first["model"], "claude-test");
    let (_, second) = &received[1];
    assert!(
        second.to_string().contains("\"tool_use_id\":\"toolu_1\""),
        "the result answers the tool_use: {second}"
    );
}

#[test]
fn without_a_model_it_stops_with_one_message_naming_the_three_options() {
    let work = Workdir::new();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_assistant"))
        .args(["serve", "--listen", "127.0.0.1:0", "--users"])
        .arg(work.path("users.toml"))
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for option in ["--script", "--model-url", "ANTHROPIC_API_KEY"] {
        assert!(stderr.contains(option), "{stderr}");
    }
}
