//! `find_tools` and `find_skills` called the way a model calls them: through the
//! dispatcher, with the index handed over as a [`Discovery`] extension.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chalie_core::{
    Channel, Dispatcher, ToolCall, Turn, contracts::Profile, descriptor::AssembleOptions,
    dispatch::Dispatched, dispatch::Policy, envelope::Envelope,
};
use chalie_index::{Descriptor, Discovery, Index, SkillRules, Source};
use serde_json::{Value, json};

use crate::support::{embedder, external};

fn registry() -> &'static chalie_core::Registry {
    chalie_core::registry().expect("unique ability names")
}

/// The linked abilities, an external tool that shares `read_file`, and one skill.
fn descriptors() -> Vec<Descriptor> {
    let mut all = Descriptor::from_registry(registry());
    let mut github = external("github", "read_file", "Read a file from a repository");
    github.parameters = Some(json!({
        "type": "object",
        "properties": { "repo": { "type": "string" }, "path": { "type": "string" } },
        "required": ["repo", "path"],
    }));
    all.push(github);
    all.push(Descriptor {
        name: "plan_trip".into(),
        summary: "Playbook for planning a trip".into(),
        source: Source::Skill,
        discoverable: true,
        body: "1. Ask for dates.\n2. Check the weather.\n".into(),
        ..Descriptor::default()
    });
    all
}

fn build(dir: &Path, descriptors: &[Descriptor]) {
    Index::build(descriptors, embedder().as_ref(), dir, &mut |_| {}).expect("build");
}

/// A dispatcher with an empty policy (everything asks) and no approver: only internal
/// abilities can run, which is what `find_tools` and `find_skills` must be.
fn dispatcher(discovery: Discovery) -> Dispatcher {
    Dispatcher::builder(registry().clone())
        .policy(Policy::new())
        .extension(discovery)
        .build()
}

fn discovery(dir: &Path) -> Discovery {
    let discovery = Discovery::open_linked(dir, embedder(), registry());
    assert!(discovery.error().is_none(), "{:?}", discovery.error());
    discovery
}

async fn call(dispatcher: &Dispatcher, turn: &Turn, tool: &str, query: Value) -> Dispatched {
    dispatcher
        .dispatch(turn, ToolCall::new(tool, json!({ "query": query })))
        .await
}

fn parsed(done: &Dispatched) -> (Envelope, Value) {
    let envelope = Envelope::parse(&done.envelope).expect("well-formed envelope");
    let body = envelope.json().unwrap_or(Value::Null);
    (envelope, body)
}

fn names(body: &Value) -> Vec<&str> {
    body["injected"]
        .as_array()
        .map(|list| list.iter().filter_map(|hit| hit["name"].as_str()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn find_tools_injects_activates_and_returns_schemas() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &descriptors());
    let dispatcher = dispatcher(discovery(dir.path()));
    let turn = Turn::builder(Channel::Chat).build();
    let done = call(
        &dispatcher,
        &turn,
        "find_tools",
        json!(["Web Search", "weather", "github__read_file", "zzz qqq"]),
    )
    .await;
    let (envelope, body) = parsed(&done);
    assert!(envelope.is_success(), "{}", done.envelope);
    assert_eq!(names(&body), ["web_search", "weather", "github__read_file"]);
    assert_eq!(body["not_found"], json!(["zzz qqq"]));
    assert_eq!(
        envelope.attribute("injected"),
        Some("3"),
        "{}",
        done.envelope
    );
    assert_eq!(envelope.attribute("not_found"), Some("1"));

    // A local ability's schema is what the dispatcher validates against on this channel.
    let entry = registry().get("weather").expect("linked");
    let expected =
        chalie_core::descriptor::assemble(entry, AssembleOptions::for_channel(Channel::Chat));
    assert_eq!(&body["injected"][1]["parameters"], expected.parameters());
    assert!(body["injected"][1]["parameters"]["properties"]["location"].is_object());
    // An external tool's comes from its descriptor data.
    assert_eq!(
        body["injected"][2]["parameters"]["required"],
        json!(["repo", "path"])
    );
    assert_eq!(
        turn.activated_tools(),
        ["web_search", "weather", "github__read_file"]
    );
    // Internal: the gate was not consulted, though the policy would ask and nobody can.
    assert_eq!(
        done.record().decision,
        chalie_core::turn::GateDecision::Internal
    );
}

#[tokio::test]
async fn ambiguous_bare_names_are_refused_with_the_names_to_ask_for() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &descriptors());
    let dispatcher = dispatcher(discovery(dir.path()));
    let turn = Turn::builder(Channel::Chat).build();
    let done = call(&dispatcher, &turn, "find_tools", json!(["read_file"])).await;
    let (envelope, body) = parsed(&done);
    assert!(envelope.is_success(), "{}", done.envelope);
    assert!(names(&body).is_empty());
    assert_eq!(body["ambiguous"][0]["entry"], "read_file");
    let mut candidates: Vec<&str> = body["ambiguous"][0]["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    candidates.sort_unstable();
    assert_eq!(candidates, ["github__read_file", "read_file"]);
    assert!(turn.activated_tools().is_empty());
}

#[tokio::test]
async fn discovery_and_hidden_abilities_never_surface() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &descriptors());
    let dispatcher = dispatcher(discovery(dir.path()));
    let turn = Turn::builder(Channel::Chat).build();
    let done = call(
        &dispatcher,
        &turn,
        "find_tools",
        json!([
            "find_tools",
            "find_skills",
            "secret_admin",
            "delete all accounts"
        ]),
    )
    .await;
    let (envelope, body) = parsed(&done);
    assert!(envelope.is_success(), "{}", done.envelope);
    for hidden in ["find_tools", "find_skills", "secret_admin"] {
        assert!(!names(&body).contains(&hidden), "{}", done.envelope);
    }
}

#[tokio::test]
async fn a_profile_hides_local_abilities_outside_its_toolsets() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &descriptors());
    let profile = Profile::new().with_toolset("travel");
    let dispatcher = dispatcher(discovery(dir.path()).with_profile(&profile));
    let turn = Turn::builder(Channel::Chat).build();
    let done = call(
        &dispatcher,
        &turn,
        "find_tools",
        json!(["weather", "web_search"]),
    )
    .await;
    let (_, body) = parsed(&done);
    assert_eq!(names(&body), ["weather"]);
    assert_eq!(body["not_found"], json!(["web_search"]));
}

#[tokio::test]
async fn a_profile_returns_external_tools_only_of_the_servers_and_names_it_lists() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &descriptors());
    let found = |profile: Profile| {
        let dispatcher = dispatcher(discovery(dir.path()).with_profile(&profile));
        async move {
            let turn = Turn::builder(Channel::Chat).build();
            let done = call(
                &dispatcher,
                &turn,
                "find_tools",
                json!(["github__read_file"]),
            )
            .await;
            let (_, body) = parsed(&done);
            (
                names(&body)
                    .into_iter()
                    .map(str::to_owned)
                    .collect::<Vec<_>>(),
                turn.activated_tools(),
            )
        }
    };
    // Unavailable unless configured: the profile lists no server.
    let (hidden, activated) = found(Profile::new().with_toolset("travel")).await;
    assert!(hidden.is_empty(), "{hidden:?}");
    assert!(activated.is_empty());
    let (by_server, _) = found(Profile::new().with_server("github")).await;
    assert_eq!(by_server, ["github__read_file"]);
    let (by_name, _) = found(Profile::new().with_external_tool("github__read_file")).await;
    assert_eq!(by_name, ["github__read_file"]);
    let (hidden, _) = found(
        Profile::new()
            .with_server("github")
            .hiding_external_tool("github__read_file"),
    )
    .await;
    assert!(hidden.is_empty(), "{hidden:?}");
}

/// Rules naming the skill and the session; counts how often it was asked.
#[derive(Default)]
struct Metric {
    asked: Arc<AtomicUsize>,
}

impl SkillRules for Metric {
    fn rules(&self, skills: &[&str], turn: &Turn) -> Vec<Vec<String>> {
        self.asked.fetch_add(1, Ordering::Relaxed);
        skills
            .iter()
            .map(|skill| {
                vec![format!(
                    "{skill} for {}: temperatures in Celsius",
                    turn.session_id()
                )]
            })
            .collect()
    }
}

#[tokio::test]
async fn find_skills_returns_the_playbook_with_the_hosts_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &descriptors());
    let metric = Metric::default();
    let asked = Arc::clone(&metric.asked);
    let dispatcher = dispatcher(discovery(dir.path()).with_skill_rules(metric));
    let turn = Turn::builder(Channel::Chat).session_id("ann").build();
    let done = call(
        &dispatcher,
        &turn,
        "find_skills",
        json!(["plan trip", "weather"]),
    )
    .await;
    let (envelope, body) = parsed(&done);
    assert!(envelope.is_success(), "{}", done.envelope);
    // Skills only: the `weather` ability is not a skill.
    assert_eq!(names(&body), ["plan_trip"]);
    assert_eq!(
        body["injected"][0]["playbook"],
        "1. Ask for dates.\n2. Check the weather.\n"
    );
    assert_eq!(
        body["injected"][0]["rules"],
        json!(["plan_trip for ann: temperatures in Celsius"])
    );
    assert_eq!(body["not_found"], json!(["weather"]));
    assert_eq!(asked.load(Ordering::Relaxed), 1, "the host is asked once");
    assert!(
        turn.activated_tools().is_empty(),
        "skills are text, not tools"
    );
    // What a host serves as MCP skills: the skills only, playbook in full.
    let index = discovery(dir.path());
    let skills: Vec<(&str, &str)> = index
        .index()
        .expect("the index just built opens")
        .skills()
        .map(|(name, _, playbook)| (name, playbook))
        .collect();
    assert_eq!(
        skills,
        [("plan_trip", "1. Ask for dates.\n2. Check the weather.\n")]
    );
}

#[tokio::test]
async fn bad_query_arrays_are_self_correcting_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &descriptors());
    let dispatcher = dispatcher(discovery(dir.path()));
    let turn = Turn::builder(Channel::Chat).build();
    let nine: Vec<String> = (0..9).map(|i| format!("tool {i}")).collect();
    let long = "x".repeat(chalie_index::MAX_ENTRY_CHARS + 1);
    for (query, says) in [
        (json!([]), "empty"),
        (json!(nine), "9 entries"),
        (json!(["weather", "  "]), "`query[1]` is blank"),
        (json!([long]), "longer than"),
        (json!("weather"), "query"),
    ] {
        let done = call(&dispatcher, &turn, "find_tools", query).await;
        let (envelope, _) = parsed(&done);
        assert_eq!(
            envelope.code(),
            Some("invalid-arguments"),
            "{}",
            done.envelope
        );
        assert!(done.envelope.contains(says), "{}", done.envelope);
    }
}

#[tokio::test]
async fn a_stale_index_is_an_error_with_its_code_and_a_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Built before `web_search` existed: the linked abilities no longer match.
    let older: Vec<Descriptor> = descriptors()
        .into_iter()
        .filter(|d| d.name != "web_search")
        .collect();
    build(dir.path(), &older);
    let discovery = Discovery::open_linked(dir.path(), embedder(), registry());
    assert_eq!(discovery.error().map(|e| e.code()), Some("index-stale"));
    let dispatcher = dispatcher(discovery);
    let turn = Turn::builder(Channel::Chat).build();
    let done = call(&dispatcher, &turn, "find_tools", json!(["weather"])).await;
    let (envelope, _) = parsed(&done);
    assert_eq!(envelope.code(), Some("index-stale"), "{}", done.envelope);
    assert!(
        envelope
            .hint()
            .is_some_and(|h| h.contains("cargo xtask index")),
        "{}",
        done.envelope
    );
}

#[tokio::test]
async fn a_corrupt_index_is_an_error_not_an_empty_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &descriptors());
    let path = dir.path().join("descriptors.json");
    let mut bytes = std::fs::read(&path).expect("read");
    bytes[10] ^= 0x20;
    std::fs::write(&path, bytes).expect("write");
    let dispatcher = dispatcher(Discovery::open(dir.path(), embedder()));
    let turn = Turn::builder(Channel::Chat).build();
    for tool in ["find_tools", "find_skills"] {
        let done = call(&dispatcher, &turn, tool, json!(["weather"])).await;
        assert_eq!(
            parsed(&done).0.code(),
            Some("index-corrupt"),
            "{}",
            done.envelope
        );
    }
}

#[tokio::test]
async fn without_the_extension_the_host_is_told_which_type_to_provide() {
    let dispatcher = Dispatcher::builder(registry().clone()).build();
    let turn = Turn::builder(Channel::Chat).build();
    let done = call(&dispatcher, &turn, "find_tools", json!(["weather"])).await;
    let (envelope, _) = parsed(&done);
    assert_eq!(envelope.code(), Some("not-configured"), "{}", done.envelope);
    assert!(done.envelope.contains("Discovery"), "{}", done.envelope);
}
