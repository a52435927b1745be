//! Arguments built from a schema, for abilities that declare no example
//! calls.

use chalie_core::AbilityEntry;
use serde_json::{Map, Value, json};

/// Arguments that satisfy the schema: each required field gets a value of
/// its type (the first enum value, the minimum, a short string), and the
/// first declared action with its required fields.
pub(super) fn sample_arguments(entry: &AbilityEntry) -> Value {
    let schema = entry.parameters();
    let mut arguments = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut wanted: Vec<&str> = required.clone();
    if let Some(action) = entry.spec().actions().first() {
        arguments.insert("action".into(), json!(action.name()));
        wanted.extend(action.required().iter().copied());
    }
    if let Some(properties) = properties {
        for name in wanted {
            if arguments.contains_key(name) {
                continue;
            }
            if let Some(property) = properties.get(name) {
                arguments.insert(name.to_owned(), sample_value(property));
            }
        }
    }
    Value::Object(arguments)
}

fn sample_value(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|values| values.first())
    {
        return first.clone();
    }
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => json!("example"),
        Some("integer") => json!(schema.get("minimum").and_then(Value::as_i64).unwrap_or(1)),
        Some("number") => json!(schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.0)),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => {
            let mut object = Map::new();
            let properties = schema.get("properties").and_then(Value::as_object);
            for name in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if let Some(property) = properties.and_then(|properties| properties.get(name)) {
                    object.insert(name.to_owned(), sample_value(property));
                }
            }
            Value::Object(object)
        }
        _ => Value::Null,
    }
}
