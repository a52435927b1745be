//! What changed between two versions of a schema, and the semver bump
//! each change needs.
//!
//! Inputs and outputs change in opposite directions: an input that accepts
//! less (a narrowed type, fewer enum values, a tighter bound, a new
//! required field) breaks callers, while an output that may return more
//! (a widened type, a field that may now be absent) breaks readers.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::{Map, Value};

/// A semantic-version bump, ordered from none to major.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bump {
    /// No published change.
    None,
    /// Wording only: descriptions, examples.
    Patch,
    /// Additive: callers written against the old contract still work.
    Minor,
    /// Breaking: some caller written against the old contract fails.
    Major,
}

impl fmt::Display for Bump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bump::None => "no",
            Bump::Patch => "a patch",
            Bump::Minor => "a minor",
            Bump::Major => "a major",
        })
    }
}

/// Which half of a contract a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The parameters the model sends.
    Input,
    /// The success body the ability returns.
    Output,
}

impl Side {
    /// The bump for a change that makes this side accept or return less.
    fn narrowed(self) -> Bump {
        match self {
            Side::Input => Bump::Major,
            Side::Output => Bump::Minor,
        }
    }

    /// The bump for a change that makes this side accept or return more.
    fn widened(self) -> Bump {
        match self {
            Side::Input => Bump::Minor,
            Side::Output => Bump::Major,
        }
    }
}

/// One difference between an old and a new schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaChange {
    /// Input or output.
    pub side: Side,
    /// The field, dotted (`stops[].city`); empty for the whole schema.
    pub field: String,
    /// What changed, in words.
    pub change: String,
    /// The bump it needs.
    pub bump: Bump,
}

impl fmt::Display for SchemaChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = match self.side {
            Side::Input => "input",
            Side::Output => "output",
        };
        if self.field.is_empty() {
            write!(f, "{side}: {} ({} bump)", self.change, self.bump)
        } else {
            write!(
                f,
                "{side} field `{}`: {} ({} bump)",
                self.field, self.change, self.bump
            )
        }
    }
}

/// Every difference between `old` and `new`, the two versions of one
/// side's schema. Key order never counts.
pub fn diff_schemas(old: &Value, new: &Value, side: Side) -> Vec<SchemaChange> {
    let mut differ = Differ {
        side,
        changes: Vec::new(),
    };
    differ.schema(old, new, "");
    differ.changes
}

/// The bump a list of changes needs: the largest of them.
pub fn required_bump(changes: &[SchemaChange]) -> Bump {
    changes
        .iter()
        .map(|change| change.bump)
        .max()
        .unwrap_or(Bump::None)
}

/// Keywords whose text only explains; changing them is a patch.
const WORDING: &[&str] = &["description", "examples", "title", "$comment"];
/// Lower bounds: a higher value accepts less.
const LOWER_BOUNDS: &[&str] = &[
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];
/// Upper bounds: a lower value accepts less.
const UPPER_BOUNDS: &[&str] = &[
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];
/// Keywords compared structurally below rather than as opaque values.
const STRUCTURAL: &[&str] = &[
    "type",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "default",
];

struct Differ {
    side: Side,
    changes: Vec<SchemaChange>,
}

fn empty() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn listed(values: &[&Value]) -> String {
    values
        .iter()
        .map(|value| match value {
            Value::String(text) => format!("`{text}`"),
            other => format!("`{other}`"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Differ {
    fn push(&mut self, field: &str, change: impl Into<String>, bump: Bump) {
        self.changes.push(SchemaChange {
            side: self.side,
            field: field.to_owned(),
            change: change.into(),
            bump,
        });
    }

    fn schema(&mut self, old: &Value, new: &Value, path: &str) {
        if old == new {
            return;
        }
        let old_map = old.as_object().unwrap_or(empty());
        let new_map = new.as_object().unwrap_or(empty());
        self.wording(old_map, new_map, path);
        self.types(old_map, new_map, path);
        self.enums(old_map, new_map, path);
        self.bounds(old_map, new_map, path);
        self.default(old_map, new_map, path);
        self.additional_properties(old_map, new_map, path);
        self.properties(old_map, new_map, path);
        if let (Some(old_items), Some(new_items)) = (old_map.get("items"), new_map.get("items")) {
            self.schema(old_items, new_items, &format!("{path}[]"));
        }
        self.other_keywords(old_map, new_map, path);
    }

    fn wording(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        for key in WORDING {
            if old.get(*key) != new.get(*key) {
                self.push(path, format!("`{key}` changed"), Bump::Patch);
            }
        }
    }

    fn types(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        let (old_types, new_types) = (type_set(old), type_set(new));
        if old_types == new_types {
            return;
        }
        let describe = |types: &Option<BTreeSet<String>>| match types {
            None => "any type".to_owned(),
            Some(types) => types.iter().cloned().collect::<Vec<_>>().join(" or "),
        };
        let change = format!(
            "type changed from {} to {}",
            describe(&old_types),
            describe(&new_types)
        );
        let (bump, change) = if accepts_all(&old_types, &new_types) {
            (self.side.narrowed(), format!("{change} (narrowed)"))
        } else if accepts_all(&new_types, &old_types) {
            (self.side.widened(), format!("{change} (widened)"))
        } else {
            (Bump::Major, change)
        };
        self.push(path, change, bump);
    }

    fn enums(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        let old_values = old.get("enum").and_then(Value::as_array);
        let new_values = new.get("enum").and_then(Value::as_array);
        match (old_values, new_values) {
            (None, None) => {}
            (None, Some(_)) => self.push(
                path,
                "restricted to an enum of values",
                self.side.narrowed(),
            ),
            (Some(_), None) => self.push(path, "enum restriction removed", self.side.widened()),
            (Some(old_values), Some(new_values)) => {
                let removed: Vec<&Value> = old_values
                    .iter()
                    .filter(|value| !new_values.contains(value))
                    .collect();
                let added: Vec<&Value> = new_values
                    .iter()
                    .filter(|value| !old_values.contains(value))
                    .collect();
                if !removed.is_empty() {
                    self.push(
                        path,
                        format!("enum values removed: {}", listed(&removed)),
                        self.side.narrowed(),
                    );
                }
                if !added.is_empty() {
                    self.push(
                        path,
                        format!("enum values added: {}", listed(&added)),
                        self.side.widened(),
                    );
                }
            }
        }
    }

    fn bounds(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        for (keys, lower) in [(LOWER_BOUNDS, true), (UPPER_BOUNDS, false)] {
            for key in keys {
                let old_bound = old.get(*key).and_then(Value::as_f64);
                let new_bound = new.get(*key).and_then(Value::as_f64);
                let tighter = match (old_bound, new_bound) {
                    (None, None) => continue,
                    (Some(a), Some(b)) if a == b => continue,
                    (None, Some(_)) => true,
                    (Some(_), None) => false,
                    (Some(a), Some(b)) => (b > a) == lower,
                };
                let show = |bound: Option<f64>| bound.map_or("none".to_owned(), |b| b.to_string());
                let change = format!(
                    "`{key}` {} from {} to {}",
                    if tighter { "tightened" } else { "loosened" },
                    show(old_bound),
                    show(new_bound)
                );
                let bump = if tighter {
                    self.side.narrowed()
                } else {
                    self.side.widened()
                };
                self.push(path, change, bump);
            }
        }
    }

    fn default(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        let (old_default, new_default) = (old.get("default"), new.get("default"));
        if old_default == new_default {
            return;
        }
        let show = |value: Option<&Value>| value.map_or("none".to_owned(), Value::to_string);
        let change = format!(
            "default changed from {} to {}",
            show(old_default),
            show(new_default)
        );
        // A caller that leaves the field out now gets other behaviour.
        let bump = match self.side {
            Side::Input => Bump::Minor,
            Side::Output => Bump::Patch,
        };
        self.push(path, change, bump);
    }

    fn additional_properties(
        &mut self,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
        path: &str,
    ) {
        let closed =
            |map: &Map<String, Value>| map.get("additionalProperties") == Some(&Value::Bool(false));
        match (closed(old), closed(new)) {
            (false, true) => self.push(
                path,
                "unknown fields are now rejected",
                self.side.narrowed(),
            ),
            (true, false) => {
                self.push(path, "unknown fields are now accepted", self.side.widened())
            }
            _ => {}
        }
    }

    fn properties(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        let old_properties = old.get("properties").and_then(Value::as_object);
        let new_properties = new.get("properties").and_then(Value::as_object);
        let (old_properties, new_properties) = match (old_properties, new_properties) {
            (None, None) => return,
            (old_properties, new_properties) => (
                old_properties.unwrap_or(empty()),
                new_properties.unwrap_or(empty()),
            ),
        };
        let old_required = required_set(old);
        let new_required = required_set(new);
        let added: Vec<&String> = new_properties
            .keys()
            .filter(|name| !old_properties.contains_key(*name))
            .collect();
        for (name, old_schema) in old_properties {
            let field = join(path, name);
            let Some(new_schema) = new_properties.get(name) else {
                let renamed = added
                    .iter()
                    .find(|candidate| same_shape(old_schema, &new_properties[candidate.as_str()]))
                    .map(|candidate| format!(" (renamed to `{}`?)", join(path, candidate)))
                    .unwrap_or_default();
                self.push(&field, format!("field removed{renamed}"), Bump::Major);
                continue;
            };
            let (was_required, is_required) =
                (old_required.contains(name), new_required.contains(name));
            if was_required != is_required {
                let (change, bump) = match (self.side, is_required) {
                    (Side::Input, true) => ("optional field became required", Bump::Major),
                    (Side::Input, false) => ("required field became optional", Bump::Minor),
                    (Side::Output, true) => ("field is now always present", Bump::Minor),
                    (Side::Output, false) => ("field may now be absent", Bump::Major),
                };
                self.push(&field, change, bump);
            }
            self.schema(old_schema, new_schema, &field);
        }
        for name in added {
            let field = join(path, name);
            let (change, bump) = match (self.side, new_required.contains(name.as_str())) {
                (Side::Input, true) => ("new required field", Bump::Major),
                (Side::Input, false) => ("new optional field", Bump::Minor),
                (Side::Output, _) => ("new field", Bump::Minor),
            };
            self.push(&field, change, bump);
        }
    }

    fn other_keywords(&mut self, old: &Map<String, Value>, new: &Map<String, Value>, path: &str) {
        let handled = |key: &str| {
            WORDING.contains(&key)
                || LOWER_BOUNDS.contains(&key)
                || UPPER_BOUNDS.contains(&key)
                || STRUCTURAL.contains(&key)
        };
        let keys: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
        for key in keys {
            if !handled(key) && old.get(key) != new.get(key) {
                // An unmodelled keyword (pattern, format, anyOf…): assume
                // the worst, a reviewer can still decide otherwise.
                self.push(path, format!("`{key}` changed"), Bump::Major);
            }
        }
    }
}

/// The JSON types a schema accepts; `None` when it does not say.
fn type_set(schema: &Map<String, Value>) -> Option<BTreeSet<String>> {
    match schema.get("type")? {
        Value::String(kind) => Some([kind.clone()].into()),
        Value::Array(kinds) => Some(
            kinds
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        _ => None,
    }
}

/// Whether every value of `inner` types is also one of `outer` types
/// (`number` includes `integer`).
fn accepts_all(outer: &Option<BTreeSet<String>>, inner: &Option<BTreeSet<String>>) -> bool {
    match (outer, inner) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(outer), Some(inner)) => inner
            .iter()
            .all(|kind| outer.contains(kind) || (kind == "integer" && outer.contains("number"))),
    }
}

fn required_set(schema: &Map<String, Value>) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether two field schemas are the same apart from wording: a removed
/// field and an added one of the same shape are likely a rename.
fn same_shape(a: &Value, b: &Value) -> bool {
    let strip = |value: &Value| {
        let mut value = value.clone();
        if let Value::Object(map) = &mut value {
            for key in WORDING {
                map.remove(*key);
            }
        }
        value
    };
    strip(a) == strip(b)
}
