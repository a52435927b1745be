//! Typed success outputs declared beside an ability.

use chalie_core::{
    AbilityEntry, Registry, contracts::OutputSchemas, contracts::build::build_manifest,
    declare_output,
};

use crate::catalog::{list_events, search_notes};

/// One note found.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[allow(dead_code)]
pub struct NoteHit {
    /// The note's id.
    pub id: u64,
    /// Its title.
    pub title: String,
}

/// What `search_notes` returns.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[allow(dead_code)]
pub struct NotesOutput {
    /// The notes, best first.
    pub items: Vec<NoteHit>,
    /// How many.
    pub count: usize,
}

declare_output!(search_notes, NotesOutput);

#[test]
fn declared_outputs_are_linked_and_published() {
    let outputs = OutputSchemas::linked().unwrap();
    let schema = outputs.get("search_notes").expect("declared");
    assert_eq!(schema["type"], "object");
    // Inlined: no references for an MCP client to chase.
    let text = schema.to_string();
    assert!(
        !text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"),
        "{text}"
    );
    assert_eq!(
        schema["properties"]["items"]["items"]["properties"]["title"]["type"],
        "string"
    );
    assert!(outputs.get("list_events").is_none());

    let registry = Registry::from_entries([
        AbilityEntry::of::<search_notes>(),
        AbilityEntry::of::<list_events>(),
    ])
    .unwrap();
    let manifest = build_manifest("acme", registry.iter(), &outputs);
    // Every linked output must belong to an ability in the manifest.
    let manifest = match manifest {
        Ok(manifest) => manifest,
        Err(error) => panic!("{error}"),
    };
    let notes = manifest
        .capabilities
        .iter()
        .find(|c| c.ability == "search_notes")
        .unwrap();
    assert_eq!(notes.output_schema.as_ref(), Some(schema));
    let events = manifest
        .capabilities
        .iter()
        .find(|c| c.ability == "list_events")
        .unwrap();
    assert!(events.output_schema.is_none());
}
