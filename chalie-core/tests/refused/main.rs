//! Abilities the registry refuses: parameters whose schema holds an object
//! without properties that `#[derive(Params)]` could not see in the tokens.
//!
//! A binary of its own: an ability linked here makes `registry()` fail for
//! every test of the binary, which is the guarantee under test.

// A failed unwrap is a failed test, which is what a test should do.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use chalie_core::params::{OpenShape, Schemars};
use chalie_core::{
    AbilityEntry, Dispatcher, Params, Registry, RegistryError, ToolResult, ability, registry,
};

/// Labels as a map: schemars describes it as an object whose keys the
/// model would choose.
#[allow(dead_code)] // read by serde only
#[derive(schemars::JsonSchema, serde::Deserialize)]
struct Labelled {
    /// The item.
    item: String,
    /// Label name to value.
    labels: BTreeMap<String, String>,
}

#[derive(Params)]
struct LabelParams {
    /// What to label.
    target: Schemars<Labelled>,
}

/// Labels an item.
#[ability(examples = [
    "label this item",
    "tag the box as fragile",
    "add a colour label",
    "mark it urgent",
    "set the label to red",
    "put a label on it",
])]
fn labels(params: LabelParams) -> ToolResult {
    ToolResult::success(params.target.0.item)
}

/// A note whose metadata takes any JSON.
#[allow(dead_code)] // read by serde only
#[derive(schemars::JsonSchema, serde::Deserialize)]
struct Note {
    /// The text.
    text: String,
    /// Anything else.
    meta: serde_json::Value,
}

#[derive(Params)]
struct NoteParams {
    /// The note.
    note: Schemars<Note>,
}

/// Writes a note.
#[ability(examples = [
    "write a note",
    "note that the door is blue",
    "jot this down",
    "save a note about lunch",
    "make a note",
    "remember this note",
])]
fn notes(params: NoteParams) -> ToolResult {
    ToolResult::success(params.note.0.text)
}

/// A struct that contains itself through another: `#[derive(Params)]`
/// refuses `Vec<Self>` at the type, but sees only one struct at a time.
#[derive(Params)]
struct TreeParams {
    /// The node's name.
    name: String,
    /// The node's branches.
    children: Vec<Branch>,
}

#[allow(dead_code)] // read by the parser only
#[derive(Params)]
struct Branch {
    /// The branch's label.
    label: String,
    /// What grows on it: a tree again.
    subtree: Option<TreeParams>,
}

/// Plants a tree of named nodes.
#[ability(examples = [
    "plant a tree",
    "make a tree of folders",
    "build a hierarchy",
    "nest these items",
    "create an outline",
    "arrange these as a tree",
])]
fn tree(params: TreeParams) -> ToolResult {
    ToolResult::success(format!("{} ({})", params.name, params.children.len()))
}

/// An outline of headings, recursive: schemars can only refer to it.
#[allow(dead_code)] // read by serde only
#[derive(schemars::JsonSchema, serde::Deserialize)]
struct Heading {
    /// The heading's text.
    text: String,
    /// The headings under it.
    children: Vec<Heading>,
}

#[derive(Params)]
struct OutlineParams {
    /// The outline's top heading.
    top: Schemars<Heading>,
}

/// Writes an outline.
#[ability(examples = [
    "outline this essay",
    "make an outline",
    "draft the headings",
    "structure my notes",
    "list the sections",
    "plan the chapters",
])]
fn outline(params: OutlineParams) -> ToolResult {
    ToolResult::success(params.top.0.text)
}

/// The program's registry, as the README builds a dispatcher from it,
/// refuses: no model is offered the open map, with a message naming the
/// ability, the parameter's path and the fix.
#[test]
fn the_linked_registry_refuses_an_open_object_the_macro_could_not_see() {
    let error = registry().unwrap_err();
    let RegistryError::OpenObject { ability, open, .. } = &error else {
        panic!("expected an open object, got {error}");
    };
    assert_eq!(*ability, "labels");
    assert_eq!(open.path, "target.labels");
    assert_eq!(open.shape, OpenShape::Map);
    let message = error.to_string();
    assert!(message.contains("ability `labels`"), "{message}");
    assert!(message.contains("main.rs"), "{message}");
    assert!(message.contains("parameter `target.labels`"), "{message}");
    assert!(
        message.contains("; replace the map with a `Vec` of a struct"),
        "{message}"
    );
    // Nothing to build a dispatcher from.
    assert!(registry().map(Dispatcher::builder).is_err());
}

/// A struct that contains itself (through another struct, or as a
/// schemars type), and any JSON inside a schemars type, are refused the
/// same way, each with its own fix.
#[test]
fn a_recursive_struct_and_any_json_are_refused_with_their_fix() {
    let error = Registry::from_entries([AbilityEntry::of::<tree>()]).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("parameter `children[].subtree` is a struct that contains itself"),
        "{message}"
    );
    assert!(
        message.contains("; give each nested level its own struct type"),
        "{message}"
    );

    let error = Registry::from_entries([AbilityEntry::of::<outline>()]).unwrap_err();
    let RegistryError::OpenObject { open, .. } = &error else {
        panic!("expected an open object, got {error}");
    };
    assert_eq!(open.path, "top.children[]");
    assert_eq!(open.shape, OpenShape::Recursive);

    let error = Registry::from_entries([AbilityEntry::of::<notes>()]).unwrap_err();
    let RegistryError::OpenObject { ability, open, .. } = &error else {
        panic!("expected an open object, got {error}");
    };
    assert_eq!((*ability, open.path.as_str()), ("notes", "note.meta"));
    assert_eq!(open.shape, OpenShape::Any);
    assert!(
        error
            .to_string()
            .contains("; describe the shape with a struct"),
        "{error}"
    );
}
