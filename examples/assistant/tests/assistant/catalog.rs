use assistant::Host;
use chalie_core::{contracts::build::LintOptions, contracts::build::lint};
use serde_json::json;

use crate::{harness, harness_with};

#[test]
fn the_catalog_has_sixteen_abilities_with_clean_descriptions() {
    let registry = chalie_core::registry().expect("unique names");
    let names: Vec<&str> = registry.iter().map(|entry| entry.name()).collect();
    assert_eq!(
        names,
        [
            "calendar",
            "calendar_edit",
            "find_skills",
            "find_tools",
            "forecast",
            "memory",
            "note_outline",
            "note_read",
            "note_search",
            "preference",
            "scratchpad",
            "task_list",
            "tasks",
            "weather",
            "web_page",
            "web_search",
        ]
    );
    let findings = lint(registry.iter(), &LintOptions::default());
    assert!(findings.is_empty(), "{findings:#?}");
}

#[test]
fn effects_are_declared_truthfully() {
    let registry = chalie_core::registry().unwrap();
    let writes: Vec<&str> = registry
        .iter()
        .filter(|entry| entry.spec().effect() == chalie_core::Effect::Write)
        .map(|entry| entry.name())
        .collect();
    assert_eq!(writes, ["calendar_edit", "memory", "preference", "tasks"]);
}

#[test]
fn web_search_is_pinned_only_on_the_web_profile() {
    let registry = chalie_core::registry().unwrap();
    let profiles = assistant::Profiles::workspace(registry).unwrap();
    // Discovery itself is never discoverable: the core pins it everywhere.
    assert_eq!(
        assistant::pinned(&profiles.everyday, registry),
        ["find_skills", "find_tools"]
    );
    assert_eq!(
        assistant::pinned(&profiles.web, registry),
        ["find_skills", "find_tools", "web_page", "web_search"]
    );
    assert!(!registry.get("web_search").unwrap().spec().discoverable());
}

#[test]
fn the_shipped_skills_parse() {
    let skills = assistant::skills().unwrap();
    let names: Vec<&str> = skills.iter().map(|skill| skill.name.as_str()).collect();
    assert_eq!(names, ["plan_a_trip", "research_a_topic", "weekly_review"]);
    assert!(
        skills
            .iter()
            .all(|skill| skill.examples.len() == 6 && skill.body.starts_with("# "))
    );
}

/// The playbooks inside the binary are exactly those `cargo xtask index`
/// reads from `skills/`: none left out of the list, none edited apart.
#[test]
fn the_embedded_skills_are_the_skills_folder() {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("skills");
    let read = chalie_index::catalog::read_skills(&folder).unwrap();
    let embedded = assistant::skills().unwrap();
    assert_eq!(
        chalie_index::fingerprint(&read),
        chalie_index::fingerprint(&embedded)
    );
}

/// The whole catalog passes the smoke checks with the sample host, with
/// one declared example call per ability and the large outputs it can make.
#[tokio::test]
async fn smoke_over_the_whole_catalog() {
    let harness = harness();
    let report = harness
        .smoke()
        .example("weather", json!({ "location": "Valletta, MT" }))
        .example("forecast", json!({ "location": "Rome", "days": 2 }))
        .example("memory", json!({ "action": "store", "content": "I like window seats" }))
        .example("memory", json!({ "action": "recall", "query": "seats" }))
        .example("calendar", json!({ "action": "week" }))
        .example("calendar_edit", json!({ "action": "add_event", "title": "Gym", "start": "2026-03-03T18:00" }))
        .example("task_list", json!({ "status": "open" }))
        .example("tasks", json!({ "action": "create", "title": "Buy milk" }))
        .example("note_search", json!({ "query": "rate limits" }))
        .example("note_outline", json!({ "note": "journal" }))
        .example("note_read", json!({ "note": "rate-limits" }))
        .example("web_search", json!({ "query": "vector search" }))
        .example("web_page", json!({ "url": "https://example.org/travel/rome-in-march" }))
        .large_output("note_read", json!({ "note": "journal" }))
        .large_output("web_page", json!({ "url": "https://example.org/research/tool-discovery-report", "max_chars": 200 }))
        .large_output("task_list", json!({ "status": "all", "max_items": 50 }))
        .run()
        .await;
    // find_tools and find_skills need an index, scratchpad a cursor:
    // their schema-built calls must still give a clean envelope.
    report.assert_clean();
    assert_eq!(report.checked, 16);
}

#[tokio::test]
async fn find_tools_without_an_index_says_it_is_not_configured() {
    harness_with(Host::sample())
        .call("find_tools", json!({ "query": ["weather"] }))
        .await
        .assert_error("not-configured");
}
