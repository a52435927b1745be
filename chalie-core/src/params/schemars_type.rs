//! Nested types described by schemars, inlined into chalie's schema.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ParamType;
use super::error::{ParamErrors, Problem};
use super::open::mark_recursive;

/// A parameter whose schema comes from `schemars` and whose value is parsed
/// by serde, for nested types that already derive both.
///
/// The schema is inlined: `$ref`, `$defs`, `$schema` and `title` are
/// removed, and objects get `additionalProperties: false`. A type whose
/// schema holds an object without properties (a map, `serde_json::Value`,
/// a type that contains itself) is refused by [`registry()`](crate::registry)
/// with the field's path and the fix: providers reject such objects or let
/// the model invent their fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Schemars<T>(pub T);

impl<T: JsonSchema + DeserializeOwned> ParamType for Schemars<T> {
    fn schema() -> Value {
        inlined_schema_for::<T>(Closed::Yes)
    }

    fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
        serde_json::from_value(value.clone())
            .map(Schemars)
            .map_err(|error| ParamErrors::single(path, Problem::Invalid(error.to_string())))
    }
}

/// Whether every object of an inlined schema gets `additionalProperties:
/// false`: yes for inputs (providers demand it), no for outputs (readers
/// must tolerate additions).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closed {
    Yes,
    No,
}

/// The schemars schema of `T`, inlined: no `$ref`, `$defs`, `$schema` or
/// `title`; where a recursive type recurs, an object marked as such.
pub(crate) fn inlined_schema_for<T: JsonSchema>(closed: Closed) -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    tidy(&mut schema, closed);
    schema
}

fn tidy(schema: &mut Value, closed: Closed) {
    match schema {
        Value::Object(map) => {
            for key in ["$schema", "$defs", "definitions", "title"] {
                map.remove(key);
            }
            if map.contains_key("$ref") {
                map.clear();
                map.insert("type".into(), "object".into());
                mark_recursive(map);
                return;
            }
            // Only an object that lists its properties is closed: one
            // without (a map, a struct of no fields) is left as schemars
            // wrote it, for the registry to refuse by what it is.
            let lists_properties = map
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|properties| !properties.is_empty());
            if closed == Closed::Yes
                && lists_properties
                && map.get("type").and_then(Value::as_str) == Some("object")
            {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    // Property names are data, not keywords: tidy each
                    // property's schema, never the names themselves.
                    ("properties", Value::Object(properties)) => properties
                        .values_mut()
                        .for_each(|property| tidy(property, closed)),
                    (_, value) => tidy(value, closed),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| tidy(item, closed)),
        _ => {}
    }
}
