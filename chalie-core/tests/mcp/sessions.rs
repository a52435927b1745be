//! External tools in sessions, composed as a user composes them: a real MCP
//! server process (the official Python SDK's, which writes a line to a
//! ledger file for every call that reaches it) attached to the dispatcher
//! with `external_tools`, sessions over that dispatcher, and a scripted
//! model. Nothing is pinned: the server's tools are reached through
//! `find_tools`, within the channel's profile, or not at all.

use std::path::Path;
use std::sync::Arc;

use chalie_core::mcp::{McpSource, ServerSpec, Transport};
use chalie_core::session::{
    Event, Mode, ModelRequest, Reply, ScriptedModel, Sessions, ToolCallStatus,
};
use chalie_core::{
    Channel, contracts::Profile, descriptor::Provider, dispatch::ChannelTools,
    dispatch::ExternalTools, dispatch::Policy, dispatch::Setting,
};
use serde_json::json;

use crate::dispatcher_with;
use crate::python::{python, script};

/// The ledger server as source `ledger`, journaling into `ledger`.
async fn ledger_server(ledger: &Path) -> Arc<dyn ExternalTools> {
    let mut spec = ServerSpec::stdio(
        "ledger",
        python().display().to_string(),
        [script("ledger_server.py").display().to_string()],
    );
    if let Transport::Stdio { env, .. } = &mut spec.transport {
        env.insert("LEDGER".into(), ledger.display().to_string());
    }
    Arc::new(McpSource::connect(spec).await.unwrap())
}

/// The calls that reached the server, in order.
fn journal(ledger: &Path) -> Vec<String> {
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Every ledger tool allowed on a chat: only reachability stands between
/// the model and the server.
fn chat_policy() -> Policy {
    let mut policy = Policy::new();
    for tool in [
        "ledger__add_entry",
        "ledger__count_entries",
        "ledger__clear",
    ] {
        policy.set(Channel::Chat, tool, Setting::Allow).unwrap();
    }
    policy
}

/// Sessions over a dispatcher with the ledger server attached, the chat's
/// tools set to `chat` (the README's composition: nothing pinned).
fn sessions(
    source: &Arc<dyn ExternalTools>,
    chat: ChannelTools,
    model: &Arc<ScriptedModel>,
) -> Sessions {
    let dispatcher = dispatcher_with(&[Arc::clone(source)], |builder| {
        builder
            .policy(chat_policy())
            .channel_tools(Channel::Chat, chat)
    });
    Sessions::builder(dispatcher, Arc::clone(model) as _).build()
}

fn offered(request: &ModelRequest) -> Vec<&str> {
    request.tool_names()
}

/// The ledger tools the second request offered.
fn ledger_tools_offered_next(model: &ScriptedModel) -> Vec<String> {
    offered(&model.requests()[1])
        .into_iter()
        .filter(|name| name.starts_with("ledger__"))
        .map(str::to_owned)
        .collect()
}

fn failure_code<'a>(events: &'a [Event], call: &str) -> Option<&'a str> {
    events.iter().find_map(|event| match event {
        Event::ToolFailed { call_id, error, .. } if call_id == call => Some(error.code.as_str()),
        _ => None,
    })
}

#[tokio::test]
async fn a_discovered_external_tool_is_offered_called_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.txt");
    let source = ledger_server(&ledger).await;
    let model = Arc::new(ScriptedModel::new([
        // Not offered yet: refused, and the server never hears of it.
        Reply::tool_call("ledger__add_entry", json!({ "text": "milk" })),
        Reply::tool_call("find_tools", json!({ "query": "ledger" })),
        Reply::tool_call(
            "ledger__add_entry",
            json!({ "text": "milk", "amount": 2, "act_summary": "Adding milk" }),
        ),
        Reply::text("Added milk."),
    ]));
    let sessions = sessions(&source, ChannelTools::new(), &model);
    // The user let writes run without asking: the policy allows them.
    sessions.set_mode("ext-discover", Mode::Auto).unwrap();
    let run = sessions.send("ext-discover", "add milk twice").unwrap();
    let events = run.finish().await;

    assert_eq!(failure_code(&events, "call-1"), Some("tool-not-available"));
    assert_eq!(
        journal(&ledger),
        ["add_entry:milk:2"],
        "only the discovered call reached the server"
    );

    // Offered: not before discovery, then with the server's schema and the
    // framework fields, rendered for the session's provider.
    let requests = model.requests();
    assert!(!offered(&requests[0]).contains(&"ledger__add_entry"));
    assert!(offered(&requests[2]).contains(&"ledger__add_entry"));
    let descriptor = requests[2]
        .tools
        .iter()
        .find(|tool| tool.name() == "ledger__add_entry")
        .unwrap();
    assert_eq!(
        descriptor.description(),
        "Adds an entry to the household ledger."
    );
    let properties = &descriptor.parameters()["properties"];
    assert_eq!(properties["text"]["type"], "string");
    assert!(properties["act_summary"].is_object());
    let openai = descriptor.render(Provider::OpenAiChat);
    assert_eq!(openai["function"]["name"], "ledger__add_entry");
    // The server's schema as it wrote it: `amount` stays optional.
    assert_eq!(openai["function"]["strict"], false);
    assert_eq!(
        openai["function"]["parameters"]["required"],
        json!(["text"])
    );
    let anthropic = descriptor.render(Provider::Anthropic);
    assert_eq!(
        anthropic["input_schema"]["properties"]["text"]["type"],
        "string"
    );

    // Called, gated and recorded like any call; the envelope reached the model.
    let records = sessions.store().tool_calls(run.id()).unwrap();
    assert_eq!(records[0].status, ToolCallStatus::Failed);
    assert_eq!(records[2].status, ToolCallStatus::Completed);
    let envelope = records[2].envelope.as_deref().unwrap();
    assert!(
        envelope.starts_with("[ledger__add_entry(status=success")
            && envelope.contains("added milk x2"),
        "{envelope}"
    );
    assert!(
        requests[3]
            .messages
            .iter()
            .any(|message| message.content.contains("added milk x2")),
        "the envelope was fed back"
    );
}

#[tokio::test]
async fn the_channel_profile_selects_external_tools_by_server_and_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.txt");
    let source = ledger_server(&ledger).await;

    // A profile without the server: discovery activates the tools, and
    // they stay out of the request and out of reach. Each session lets
    // writes run without asking, so only reachability keeps a write from
    // the server.
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("find_tools", json!({ "query": "ledger" })),
        Reply::tool_call("ledger__add_entry", json!({ "text": "milk" })),
        Reply::text("I cannot."),
    ]));
    let outside = ChannelTools::new().profile(Profile::new());
    let sessions_outside = sessions(&source, outside, &model);
    sessions_outside
        .set_mode("ext-outside", Mode::Auto)
        .unwrap();
    let events = sessions_outside
        .send("ext-outside", "add milk")
        .unwrap()
        .finish()
        .await;
    assert_eq!(failure_code(&events, "call-2"), Some("tool-not-available"));
    assert!(ledger_tools_offered_next(&model).is_empty());
    assert!(journal(&ledger).is_empty(), "nothing reached the server");

    // The server listed, one of its tools hidden: the rest is offered and
    // runs, the hidden one is neither offered nor run.
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("find_tools", json!({ "query": "ledger" })),
        Reply::tool_call("ledger__clear", json!({})),
        Reply::tool_call("ledger__count_entries", json!({})),
        Reply::text("Three entries."),
    ]));
    let by_server = ChannelTools::new().profile(
        Profile::new()
            .with_server("ledger")
            .hiding_external_tool("ledger__clear"),
    );
    let sessions_by_server = sessions(&source, by_server, &model);
    sessions_by_server
        .set_mode("ext-by-server", Mode::Auto)
        .unwrap();
    let events = sessions_by_server
        .send("ext-by-server", "how many entries")
        .unwrap()
        .finish()
        .await;
    assert_eq!(failure_code(&events, "call-2"), Some("tool-not-available"));
    assert_eq!(journal(&ledger), ["count_entries"]);
    assert_eq!(
        ledger_tools_offered_next(&model),
        ["ledger__add_entry", "ledger__count_entries"]
    );

    // One tool by name: only that one.
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("find_tools", json!({ "query": "ledger" })),
        Reply::tool_call("ledger__add_entry", json!({ "text": "eggs" })),
        Reply::tool_call("ledger__count_entries", json!({})),
        Reply::text("Three entries."),
    ]));
    let by_name =
        ChannelTools::new().profile(Profile::new().with_external_tool("ledger__count_entries"));
    let sessions_by_name = sessions(&source, by_name, &model);
    sessions_by_name
        .set_mode("ext-by-name", Mode::Auto)
        .unwrap();
    let events = sessions_by_name
        .send("ext-by-name", "how many entries")
        .unwrap()
        .finish()
        .await;
    assert_eq!(failure_code(&events, "call-2"), Some("tool-not-available"));
    assert_eq!(journal(&ledger), ["count_entries", "count_entries"]);
    assert_eq!(ledger_tools_offered_next(&model), ["ledger__count_entries"]);
}
