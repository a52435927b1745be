//! Finding an object without properties inside a parameters schema.
//!
//! Some providers reject a tool whose parameters hold an object without
//! properties (a map, any JSON value, a struct inside itself), and the rest
//! let the model fill it with fields it invents. `#[derive(Params)]`
//! refuses the types it can see (`Value`, `HashMap`, ...) when the crate
//! compiles; this finds the rest in the built schema, for the registry to
//! refuse before any model is offered the ability.

use serde_json::Value;

/// The `$comment` a struct's schema has inside itself: a struct that
/// contains itself cannot be inlined, and this marks where it recurs. A
/// comment, not the description, which the field's own words replace.
pub(crate) const RECURSIVE_COMMENT: &str = "recurs: an object of the same shape as one it is in";

/// Marks `schema` (an object) as where a struct recurs.
pub(crate) fn mark_recursive(schema: &mut serde_json::Map<String, Value>) {
    schema.insert("$comment".into(), RECURSIVE_COMMENT.into());
}

/// An object without properties, found at `path` in a parameters schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenObject {
    /// The parameter's path, e.g. `window.labels` or `stops[].meta`.
    pub path: String,
    /// What made it open, which decides the fix.
    pub shape: OpenShape,
}

/// Why a part of a schema is an object without properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OpenShape {
    /// A struct that contains itself, directly or through others.
    Recursive,
    /// A map: an object whose keys the model would choose.
    Map,
    /// Any JSON value (`serde_json::Value`), or an object of no fields.
    Any,
}

impl OpenShape {
    /// What it is, in words, for the registry's message.
    pub fn what(self) -> &'static str {
        match self {
            Self::Recursive => "a struct that contains itself, so it cannot be inlined",
            Self::Map => "an open map",
            Self::Any => "any JSON value",
        }
    }

    /// How to close it, for the registry's message.
    pub fn fix(self) -> &'static str {
        match self {
            Self::Recursive => {
                "give each nested level its own struct type, so the depth is fixed and every level has properties"
            }
            Self::Map => {
                "replace the map with a `Vec` of a struct with a key field and a value field"
            }
            Self::Any => {
                "describe the shape with a struct whose fields the model can read, or take free text as a `String`"
            }
        }
    }
}

/// The first object without properties inside `schema`, outermost first,
/// or `None` when every object in it lists its properties. The root
/// itself may have none: that is an ability without parameters, which
/// every provider takes.
pub fn find_open_object(schema: &Value) -> Option<OpenObject> {
    let Value::Object(root) = schema else {
        return None;
    };
    let properties = root.get("properties").and_then(Value::as_object)?;
    properties
        .iter()
        .find_map(|(name, property)| open_in(property, name.clone()))
}

/// The first open object in the subschema `schema` found at `path`.
fn open_in(schema: &Value, path: String) -> Option<OpenObject> {
    let map = match schema {
        // `true` accepts anything, `false` nothing; only the first is open.
        Value::Bool(true) => return Some(open(path, OpenShape::Any)),
        Value::Object(map) => map,
        _ => return None,
    };
    let is_object = match map.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        // No type and nothing else that constrains it: any value.
        None => {
            const CONSTRAINING: &[&str] = &[
                "enum",
                "const",
                "anyOf",
                "oneOf",
                "allOf",
                "$ref",
                "not",
                "properties",
                "items",
            ];
            if !CONSTRAINING.iter().any(|key| map.contains_key(*key)) {
                return Some(open(path, OpenShape::Any));
            }
            false
        }
        Some(_) => false,
    };
    if is_object {
        let listed = map
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|properties| !properties.is_empty());
        if !listed {
            let recursive = map.get("$comment").and_then(Value::as_str) == Some(RECURSIVE_COMMENT)
                || map.contains_key("$ref");
            let keyed = map
                .get("additionalProperties")
                .is_some_and(|additional| *additional != Value::Bool(false))
                || map.contains_key("patternProperties")
                || map.contains_key("propertyNames");
            let shape = if recursive {
                OpenShape::Recursive
            } else if keyed {
                OpenShape::Map
            } else {
                OpenShape::Any
            };
            return Some(open(path, shape));
        }
    }
    if let Some(properties) = map.get("properties").and_then(Value::as_object)
        && let Some(found) = properties
            .iter()
            .find_map(|(name, property)| open_in(property, format!("{path}.{name}")))
    {
        return Some(found);
    }
    let items = map.get("items").into_iter().chain(
        map.get("prefixItems")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    );
    for item in items {
        if let Some(found) = open_in(item, format!("{path}[]")) {
            return Some(found);
        }
    }
    // The alternatives of an enum or an `Option`: each is at the same path.
    for key in ["anyOf", "oneOf", "allOf"] {
        for alternative in map.get(key).and_then(Value::as_array).into_iter().flatten() {
            if let Some(found) = open_in(alternative, path.clone()) {
                return Some(found);
            }
        }
    }
    None
}

fn open(path: String, shape: OpenShape) -> OpenObject {
    OpenObject { path, shape }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn found(property: Value) -> Option<OpenObject> {
        find_open_object(&json!({
            "type": "object",
            "properties": { "field": property },
            "additionalProperties": false,
        }))
    }

    #[test]
    fn each_open_shape_is_found_with_its_path() {
        let map = json!({ "type": "object", "additionalProperties": { "type": "string" } });
        assert_eq!(
            found(
                json!({ "type": "array", "items": { "type": "object", "properties": { "labels": map } } })
            ),
            Some(open("field[].labels".into(), OpenShape::Map))
        );
        assert_eq!(
            found(json!(true)),
            Some(open("field".into(), OpenShape::Any))
        );
        assert_eq!(found(json!({})), Some(open("field".into(), OpenShape::Any)));
        assert_eq!(
            found(json!({ "type": ["object", "null"], "properties": {} })),
            Some(open("field".into(), OpenShape::Any))
        );
        assert_eq!(
            found(
                json!({ "anyOf": [{ "type": "null" }, { "type": "object", "description": "A subtree.", "$comment": RECURSIVE_COMMENT }] })
            ),
            Some(open("field".into(), OpenShape::Recursive))
        );
    }

    #[test]
    fn closed_schemas_and_a_root_without_parameters_pass() {
        assert_eq!(
            find_open_object(&json!({ "type": "object", "properties": {} })),
            None
        );
        assert_eq!(found(json!({ "type": "string" })), None);
        assert_eq!(found(json!({ "type": "string", "enum": ["a"] })), None);
        assert_eq!(
            found(json!({ "type": "object", "properties": { "a": { "type": "integer" } } })),
            None
        );
        assert_eq!(
            found(json!({ "type": "array", "items": { "type": "number" } })),
            None
        );
    }
}
