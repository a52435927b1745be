//! The published manifest: names, hashes, and only the published half.

use chalie_core::{
    AbilityEntry, Registry, contracts::OutputSchemas, contracts::build::ManifestError,
    contracts::build::ability_name, contracts::build::build_manifest,
    contracts::build::published_name, contracts::canonical_json, contracts::schema_hash,
};
use serde_json::json;

use crate::catalog::{list_events, search_notes};

fn registry() -> Registry {
    Registry::from_entries([
        AbilityEntry::of::<search_notes>(),
        AbilityEntry::of::<list_events>(),
    ])
    .unwrap()
}

#[test]
fn published_names_are_a_bijection() {
    for name in ["weather", "search_notes", "a_b_c2"] {
        let published = published_name("acme.tools", name);
        assert_eq!(
            ability_name("acme.tools", &published).as_deref(),
            Some(name)
        );
    }
    assert_eq!(published_name("acme", "search_notes"), "acme.search-notes");
    assert_eq!(ability_name("acme", "other.search-notes"), None);
    assert_eq!(ability_name("acme", "acme.search_notes"), None);
}

#[test]
fn hashes_ignore_key_order() {
    let a = json!({ "type": "object", "properties": { "a": { "type": "string", "description": "A." } } });
    let b = json!({ "properties": { "a": { "description": "A.", "type": "string" } }, "type": "object" });
    assert_eq!(canonical_json(&a), canonical_json(&b));
    assert_eq!(schema_hash(&a), schema_hash(&b));
    assert!(schema_hash(&a).starts_with("sha256:"));
    assert_eq!(schema_hash(&a).len(), "sha256:".len() + 64);
    assert_ne!(schema_hash(&a), schema_hash(&json!({ "type": "object" })));
}

#[test]
fn the_manifest_publishes_the_contract_and_nothing_of_the_handler() {
    let manifest = build_manifest("acme", registry().iter(), &OutputSchemas::new()).unwrap();
    let names: Vec<&str> = manifest
        .capabilities
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["acme.list-events", "acme.search-notes"]);
    let notes = &manifest.capabilities[1];
    assert_eq!(notes.version, "1.2.0");
    assert_eq!(notes.toolset, "notes");
    assert!(notes.description.starts_with("Full-text search"));
    assert_eq!(notes.input_schema["properties"]["top_k"]["default"], 10);
    assert!(
        notes.input_schema["properties"]
            .get("act_summary")
            .is_none()
    );
    assert!(notes.output_schema.is_none());
    let text = serde_json::to_string(&manifest).unwrap();
    for private in ["module_path", "tests/contracts", "location", "examples"] {
        assert!(!text.contains(private), "the manifest leaks `{private}`");
    }
    // The same code gives the same manifest, byte for byte.
    let again = build_manifest("acme", registry().iter(), &OutputSchemas::new()).unwrap();
    assert_eq!(serde_json::to_string(&again).unwrap(), text);
}

#[test]
fn a_bad_namespace_or_an_orphan_output_is_an_error() {
    for namespace in ["", "Acme", "acme_tools", "acme..x", "-acme"] {
        assert_eq!(
            build_manifest(namespace, registry().iter(), &OutputSchemas::new()),
            Err(ManifestError::BadNamespace(namespace.into()))
        );
    }
    let outputs = OutputSchemas::new().with("missing", json!({ "type": "object" }));
    assert_eq!(
        build_manifest("acme", registry().iter(), &outputs),
        Err(ManifestError::UnknownOutput("missing".into()))
    );
}
