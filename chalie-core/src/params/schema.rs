//! Building the inlined, object-rooted schemas providers accept.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

/// One field as `#[derive(Params)]` describes it.
#[doc(hidden)]
pub struct FieldSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: Value,
    pub optional: bool,
    pub default: Option<Value>,
    pub min: Option<f64>,
    pub max: Option<f64>,
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

    pub fn field(&mut self, field: FieldSpec) {
        let mut schema = match field.schema {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        // The field's own words come first: the model reads this key.
        let mut ordered = Map::new();
        ordered.insert(
            "description".into(),
            Value::String(field.description.to_owned()),
        );
        for (key, value) in schema.iter_mut() {
            if key != "description" {
                ordered.insert(key.clone(), value.take());
            }
        }
        if let Some(min) = field.min {
            ordered.insert("minimum".into(), number(min));
        }
        if let Some(max) = field.max {
            ordered.insert("maximum".into(), number(max));
        }
        let has_default = field.default.is_some();
        if let Some(default) = field.default {
            ordered.insert("default".into(), default);
        }
        if !field.optional && !has_default {
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

/// Integral bounds render as integers (`1`, not `1.0`).
fn number(value: f64) -> Value {
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
