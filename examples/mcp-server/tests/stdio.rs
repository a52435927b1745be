//! The `mcp-server` program itself, spawned over stdio and driven by
//! chalie's own MCP client: what it lists in each mode, and a call that
//! reaches the assistant's data through it.

// A failed unwrap is a failed test, which is what a test should do.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use chalie_core::mcp::{McpSource, ServerSpec};
use chalie_core::{
    Channel, Dispatcher, ToolCall, Turn, dispatch::ExternalTools, dispatch::Policy,
    dispatch::Setting, envelope::Envelope,
};
use serde_json::json;

/// The program, as a server named `demo`, on the index `cargo xtask index`
/// built; loading the embedding model takes a moment, so the timeout is
/// generous.
async fn spawn(mode: &str) -> McpSource {
    let spec = ServerSpec::stdio("demo", env!("CARGO_BIN_EXE_mcp-server"), ["--mode", mode])
        .with_timeout(Duration::from_secs(120));
    McpSource::connect(spec)
        .await
        .unwrap_or_else(|error| panic!("the server did not start in {mode} mode: {error}"))
}

fn names(source: &McpSource) -> Vec<String> {
    source.tools().into_iter().map(|tool| tool.name).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_mode_lists_the_abilities_and_a_call_reads_the_assistants_data() {
    let source = Arc::new(spawn("full").await);
    let listed = names(&source);
    for expected in ["demo__weather", "demo__calendar", "demo__tasks"] {
        assert!(
            listed.iter().any(|name| name == expected),
            "{expected} in {listed:?}"
        );
    }
    assert!(
        !listed.iter().any(|name| name == "demo__find_tools"),
        "with every ability listed there is nothing to discover: {listed:?}"
    );

    let mut policy = Policy::new();
    for tool in ["demo__weather", "demo__calendar", "demo__calendar.*"] {
        policy.set(Channel::External, tool, Setting::Allow).unwrap();
    }
    let dispatcher = Dispatcher::builder(chalie_core::Registry::from_entries([]).unwrap())
        .policy(policy)
        .external_tools(Arc::clone(&source) as Arc<dyn ExternalTools>)
        // The consuming side offers the tools this test calls.
        .pin(Channel::External, ["demo__weather", "demo__calendar"])
        .build();
    let turn = Turn::builder(Channel::External).build();
    let done = dispatcher
        .dispatch(
            &turn,
            ToolCall::new("demo__weather", json!({ "location": "Rome, IT" })),
        )
        .await;
    let envelope = Envelope::parse(&done.envelope).unwrap();
    assert_eq!(
        envelope.attribute("status"),
        Some("success"),
        "{}",
        done.envelope
    );
    assert!(done.envelope.contains("Cloudy"), "{}", done.envelope);
    // The calendar is a user's: the server runs its calls as its one user.
    let week = dispatcher
        .dispatch(
            &turn,
            ToolCall::new("demo__calendar", json!({ "action": "week" })),
        )
        .await;
    assert!(
        week.envelope.contains("Flight to Rome"),
        "{}",
        week.envelope
    );
    source.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_demand_mode_lists_the_core_the_pinned_and_the_proxy() {
    let source = spawn("on_demand").await;
    let listed = names(&source);
    // The always-on core, the web profile's pinned abilities (which discovery
    // never returns) and the proxy that calls whatever `find_tools` found.
    assert_eq!(
        listed,
        [
            "demo__call_tool",
            "demo__find_skills",
            "demo__find_tools",
            "demo__memory",
            "demo__web_page",
            "demo__web_search",
        ]
    );

    // The listing never changes, so `find_tools` carries each found tool's
    // parameters, and the proxy calls it with them.
    let source = Arc::new(source);
    let mut policy = Policy::new();
    for tool in ["demo__find_tools", "demo__call_tool"] {
        policy.set(Channel::External, tool, Setting::Allow).unwrap();
    }
    let dispatcher = Dispatcher::builder(chalie_core::Registry::from_entries([]).unwrap())
        .policy(policy)
        .external_tools(Arc::clone(&source) as Arc<dyn ExternalTools>)
        .pin(Channel::External, ["demo__find_tools", "demo__call_tool"])
        .build();
    let turn = Turn::builder(Channel::External).build();
    let found = dispatcher
        .dispatch(
            &turn,
            ToolCall::new(
                "demo__find_tools",
                json!({ "query": [assistant::demo::DISCOVERY_REQUEST] }),
            ),
        )
        .await;
    // The server's envelope, inside the one the consuming dispatcher renders.
    let outer = Envelope::parse(&found.envelope).unwrap();
    let body = Envelope::parse(&outer.content).unwrap().json().unwrap();
    let weather = body["injected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "weather")
        .unwrap_or_else(|| panic!("weather found: {}", found.envelope));
    assert!(weather["summary"].is_string());
    assert_eq!(weather["parameters"]["required"], json!(["location"]));
    let called = dispatcher
        .dispatch(
            &turn,
            ToolCall::new(
                "demo__call_tool",
                json!({ "name": "weather", "arguments": { "location": "Rome, IT" } }),
            ),
        )
        .await;
    assert!(called.envelope.contains("Cloudy"), "{}", called.envelope);
    source.disconnect().await;
}

/// The index's playbooks are served as MCP skills, and chalie's own client
/// reads them back checked against their digests: the text `find_skills`
/// returns, under the server's prefix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_assistants_playbooks_are_served_as_skills() {
    let source = spawn("on_demand").await;
    let skills = source.skill_descriptors().await.unwrap();
    let names: Vec<&str> = skills
        .iter()
        .map(|skill| skill["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "demo__plan_a_trip",
            "demo__research_a_topic",
            "demo__weekly_review"
        ]
    );
    let file = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../assistant/skills/weekly_review.md"),
    )
    .unwrap();
    let playbook = skills[2]["playbook"].as_str().unwrap();
    assert!(!playbook.trim().is_empty());
    // The body of the playbook file, without its front matter.
    assert!(file.trim_end().ends_with(playbook.trim_end()), "{playbook}");
    assert!(!playbook.starts_with("---"), "{playbook}");
    source.disconnect().await;
}
