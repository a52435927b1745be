//! Building the inlined, object-rooted schemas providers accept.

use std::collections::HashMap;
use std::sync::{OnceLock, PoisonError, RwLock};

use serde_json::{Map, Value, json};

use super::DefaultLiteral;
use super::open::mark_recursive;

/// One field as `#[derive(Params)]` describes it: plain data, written
/// once per struct into a `static` and read both to build the schema and
/// to parse, so the generated code holds no per-field logic of its own.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct FieldSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// The field type's schema and whether it may be left out.
    pub kind: FieldKind,
    /// `#[param(default = …)]`, as the literal was written.
    pub default: Option<DefaultLiteral>,
    /// `#[param(min, max, clamp)]`.
    pub bounds: Bounds,
    /// `#[param(actions = [...])]`: the actions the field belongs to;
    /// empty when it belongs to all.
    pub actions: &'static [&'static str],
}

/// What a field's type contributes to its [`FieldSpec`], taken from its
/// [`ParamType`](super::ParamType) impl when the `static` is evaluated.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct FieldKind {
    /// The type's own schema.
    pub schema: fn() -> Value,
    /// Whether the field may be left out (`Option`).
    pub optional: bool,
    /// Whether the type parses a value: asked of a struct's `action` field
    /// when another field was sent with an action it does not belong to.
    pub accepts: fn(&Value) -> bool,
    /// Which literals the type parses ([`ParamType::DEFAULT_RULE`](super::ParamType::DEFAULT_RULE)):
    /// read by the compile-time checks of input examples.
    pub rule: super::DefaultRule,
}

/// The schema of a `#[derive(Params)]` struct from its fields, built the
/// first time it is asked for and kept. One function and one cache for
/// every struct, so a crate of many abilities compiles one copy of the
/// schema-building code and no static per struct.
#[doc(hidden)]
pub fn params_schema(fields: &'static [FieldSpec]) -> &'static Value {
    // Keyed by the table's address: each struct's table is its own
    // static. (Tables of no fields may share an address, and their
    // schemas are the same.)
    static SCHEMAS: OnceLock<RwLock<HashMap<usize, &'static Value>>> = OnceLock::new();
    let schemas = SCHEMAS.get_or_init(Default::default);
    let key = fields.as_ptr() as usize;
    if let Some(schema) = schemas
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key)
    {
        return schema;
    }
    // Built with no lock held: a field's schema may be another struct's,
    // asked for from here. A struct that contains itself through another
    // (`#[derive(Params)]` refuses `Vec<Self>` itself) would ask for its
    // own schema without end: inside itself it is an
    // object marked as recurring, so its schema is finite, and the
    // registry refuses it with the field's path.
    if BUILDING.with_borrow(|building| building.contains(&key)) {
        return recursive_schema();
    }
    BUILDING.with_borrow_mut(|building| building.push(key));
    let mut schema = ObjectSchema::new();
    for field in fields {
        schema.field(field);
    }
    let schema = schema.finish();
    BUILDING.with_borrow_mut(|building| building.retain(|other| *other != key));
    let mut schemas = schemas.write().unwrap_or_else(PoisonError::into_inner);
    // Kept for the program's life, once per struct, as a static would be;
    // a schema another thread built meanwhile is kept instead of this one.
    schemas
        .entry(key)
        .or_insert_with(|| Box::leak(Box::new(schema)))
}

thread_local! {
    /// The tables whose schemas this thread is building, outermost first.
    static BUILDING: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The schema of a struct inside itself.
fn recursive_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut schema = Map::new();
        schema.insert("type".into(), "object".into());
        mark_recursive(&mut schema);
        Value::Object(schema)
    })
}

/// Accumulates properties into an object schema with
/// `additionalProperties: false` and `properties` always present.
#[doc(hidden)]
#[derive(Default)]
pub struct ObjectSchema {
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl ObjectSchema {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn field(&mut self, field: &FieldSpec) {
        let description = describe_field(field);
        let mut schema = match (field.kind.schema)() {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        // The field's own words come first: the model reads this key.
        let mut ordered = Map::new();
        ordered.insert("description".into(), Value::String(description));
        for (key, value) in schema.iter_mut() {
            if key != "description" {
                ordered.insert(key.clone(), value.take());
            }
        }
        // A clamped side accepts any number, so the schema states no bound
        // there that a validating client would enforce (not even the
        // type's own, e.g. an unsigned integer's `minimum: 0`): the
        // description gives the range instead.
        let Bounds { min, max, clamp } = field.bounds;
        for (key, bound) in [("minimum", min), ("maximum", max)] {
            match bound {
                Some(_) if clamp => {
                    ordered.remove(key);
                }
                Some(bound) => {
                    ordered.insert(key.into(), number(bound));
                }
                None => {}
            }
        }
        let has_default = field.default.is_some();
        if let Some(default) = field.default {
            ordered.insert("default".into(), default.to_value());
        }
        if !field.kind.optional && !has_default {
            self.required.push(Value::String(field.name.to_owned()));
        }
        self.properties
            .insert(field.name.to_owned(), Value::Object(ordered));
    }

    pub fn finish(self) -> Value {
        json!({
            "type": "object",
            "properties": self.properties,
            "required": self.required,
            "additionalProperties": false,
        })
    }
}

/// The field's doc comment, then what the model must know that the
/// schema cannot say: a clamped range, the actions the field belongs to.
fn describe_field(field: &FieldSpec) -> String {
    let mut description = field.description.to_owned();
    let mut sentence = |text: String| {
        let ends_a_sentence = description.trim_end().ends_with(['.', '!', '?', ':', ')']);
        if description.trim().is_empty() {
            description.clear();
        } else if !ends_a_sentence {
            description.push('.');
        }
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str(&text);
    };
    if field.bounds.clamp {
        let range = match (field.bounds.min, field.bounds.max) {
            (Some(min), Some(max)) => format!("{min}–{max}"),
            (Some(min), None) => format!("at least {min}"),
            (None, Some(max)) => format!("at most {max}"),
            // The macro refuses a clamp without bounds.
            (None, None) => String::new(),
        };
        if !range.is_empty() {
            sentence(format!("Clamped to {range}."));
        }
    }
    match field.actions {
        [] => {}
        [action] => sentence(format!("Only for action `{action}`.")),
        actions => sentence(format!(
            "Only for actions {}.",
            actions
                .iter()
                .map(|action| format!("`{action}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
    description
}

/// Integral bounds render as integers (`1`, not `1.0`).
pub(crate) fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// The schema of a closed set of strings.
#[doc(hidden)]
pub fn enum_schema(values: &[&str]) -> Value {
    json!({ "type": "string", "enum": values })
}

/// What a stub impl returns beside a compile error; never reached.
#[doc(hidden)]
pub fn fallback_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| ObjectSchema::new().finish())
}

/// "a string", "one of `a`, `b`", "an array of integers": what a schema
/// takes, in words, for error messages.
pub(crate) fn describe(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let listed: Vec<String> = values
            .iter()
            .map(|value| format!("`{}`", plain(value)))
            .collect();
        return format!("one of {}", listed.join(", "));
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("array") => match schema.get("items") {
            Some(items) => format!("an array of {}", plural(&describe(items))),
            None => "an array".into(),
        },
        Some(kind) => article(kind),
        None => "a value matching the schema".into(),
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn article(kind: &str) -> String {
    match kind {
        "integer" | "object" | "array" => format!("an {kind}"),
        other => format!("a {other}"),
    }
}

fn plural(description: &str) -> String {
    let bare = description
        .trim_start_matches("an ")
        .trim_start_matches("a ");
    if bare.starts_with("one of") || bare.contains(' ') {
        format!("values that are {description}")
    } else {
        format!("{bare}s")
    }
}

/// `#[param(min, max, clamp)]` on a field.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Bounds {
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// Out-of-range numbers become the nearest bound instead of an error.
    pub clamp: bool,
}

impl Bounds {
    /// No `#[param(min, max, clamp)]`: what most fields have, named once
    /// so the generated table spells it in one path.
    pub const NONE: Self = Self {
        min: None,
        max: None,
        clamp: false,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsigned() -> Value {
        json!({ "type": "integer", "minimum": 0 })
    }

    fn spec(description: &'static str, clamp: bool, actions: &'static [&'static str]) -> FieldSpec {
        FieldSpec {
            name: "bpm",
            description,
            kind: FieldKind {
                schema: unsigned,
                optional: true,
                accepts: |_| true,
                rule: crate::params::DefaultRule::Integer { min: 0, max: 255 },
            },
            default: None,
            bounds: Bounds {
                min: Some(40.0),
                max: None,
                clamp,
            },
            actions,
        }
    }

    fn property(field: FieldSpec) -> Value {
        let mut schema = ObjectSchema::new();
        schema.field(&field);
        schema.finish()["properties"]["bpm"].clone()
    }

    #[test]
    fn the_added_sentences_follow_the_doc_comment_as_sentences() {
        let clamped = property(spec("Beats per minute", true, &["generate", "remix"]));
        assert_eq!(
            clamped["description"],
            "Beats per minute. Clamped to at least 40. Only for actions `generate`, `remix`."
        );
        // The clamped side drops even the type's own bound.
        assert!(clamped.get("minimum").is_none(), "{clamped}");
        let bounded = property(spec("Beats per minute.", false, &[]));
        assert_eq!(bounded["description"], "Beats per minute.");
        assert_eq!(bounded["minimum"], 40);
    }
}
