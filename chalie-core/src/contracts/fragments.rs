//! Standard parameters any Params struct can take as fields, under these
//! names, so every tool pages, limits and shapes its output the same way.
//!
//! | field | type | default | bounds |
//! |---|---|---|---|
//! | `query: String` | what to search for | required | |
//! | `top_k: TopK` | how many ranked results | 10 | 1 to 50 |
//! | `max_items: MaxItems` | page size | 20 | 1 to 50 |
//! | `max_chars: MaxChars` | longest body | 4000 | 200 to 20000 |
//! | `format: Format` | `concise` or `detailed` | `concise` | |
//! | `fields: Option<Fields>` | which keys of each item | all | |
//! | `cursor: Option<Cursor>` | continue a previous result | first page | |
//!
//! `TopK`, `MaxItems`, `MaxChars` and `Format` carry their default: write
//! them without `Option`; the schema shows the default and bounds, and a
//! value out of bounds is the usual `invalid-arguments` error (not
//! clamped). Still document each field with a `///` comment naming the
//! default and bounds: the model reads the description first.

use serde_json::{Map, Value, json};

use crate::params::{ParamErrors, ParamType, Problem};

/// The standard parameter names, in the order tools usually declare them.
pub const STANDARD_PARAMS: &[&str] = &[
    "query",
    "top_k",
    "max_items",
    "max_chars",
    "format",
    "fields",
    "cursor",
];

fn integer_with_default(
    value: &Value,
    path: &str,
    default: u32,
    min: u32,
    max: u32,
) -> Result<u32, ParamErrors> {
    let number = match value {
        Value::Null => return Ok(default),
        Value::Number(number) => number,
        other => {
            return Err(ParamErrors::single(
                path,
                Problem::WrongType {
                    expected: "an integer".into(),
                    found: other.to_string(),
                },
            ));
        }
    };
    let whole = number.as_u64().or_else(|| {
        number
            .as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0)
            .map(|f| f as u64)
    });
    match whole {
        Some(whole) if (u64::from(min)..=u64::from(max)).contains(&whole) => Ok(whole as u32),
        _ => Err(ParamErrors::single(
            path,
            Problem::OutOfRange {
                bound: format!("between {min} and {max}"),
                found: number.to_string(),
            },
        )),
    }
}

macro_rules! bounded_count {
    ($(#[$doc:meta])* $name:ident, default = $default:expr, min = $min:expr, max = $max:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);

        impl $name {
            /// The value used when the model leaves the field out.
            pub const DEFAULT: u32 = $default;
            /// The smallest accepted value.
            pub const MIN: u32 = $min;
            /// The largest accepted value.
            pub const MAX: u32 = $max;

            /// The value as a `usize`.
            pub fn get(self) -> usize {
                self.0 as usize
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self(Self::DEFAULT)
            }
        }

        impl ParamType for $name {
            // The field may be left out: it then takes its default.
            const OPTIONAL: bool = true;
            const DEFAULT_RULE: crate::params::DefaultRule = crate::params::DefaultRule::Integer {
                min: Self::MIN as i128,
                max: Self::MAX as i128,
            };

            fn schema() -> Value {
                json!({ "type": "integer", "minimum": Self::MIN, "maximum": Self::MAX, "default": Self::DEFAULT })
            }

            fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
                integer_with_default(value, path, Self::DEFAULT, Self::MIN, Self::MAX).map(Self)
            }
        }
    };
}

bounded_count!(
    /// `top_k`: how many ranked results to return; default 10, 1 to 50.
    TopK, default = 10, min = 1, max = 50
);
bounded_count!(
    /// `max_items`: how many items per page; default 20, 1 to 50 (see
    /// [`Page`](crate::contracts::Page)).
    MaxItems, default = 20, min = 1, max = 50
);
bounded_count!(
    /// `max_chars`: the longest body to return, in characters; default
    /// 4000, 200 to 20000 (see [`cap_text`](crate::contracts::cap_text)).
    MaxChars, default = 4000, min = 200, max = 20000
);

/// `format`: how much of each item to return; default `concise`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Format {
    /// Names, ids and the fields a next call needs: cheap on context.
    #[default]
    Concise,
    /// Every field.
    Detailed,
}

impl Format {
    /// The wire values.
    pub const VALUES: &'static [&'static str] = &["concise", "detailed"];

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Concise => "concise",
            Format::Detailed => "detailed",
        }
    }
}

impl ParamType for Format {
    const OPTIONAL: bool = true;
    const DEFAULT_RULE: crate::params::DefaultRule =
        crate::params::DefaultRule::OneOf(Self::VALUES);

    fn schema() -> Value {
        json!({ "type": "string", "enum": Self::VALUES, "default": "concise" })
    }

    fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
        if value.is_null() {
            return Ok(Self::default());
        }
        match crate::params::parse_enum_value(value, path, Self::VALUES)? {
            "detailed" => Ok(Format::Detailed),
            _ => Ok(Format::Concise),
        }
    }
}

/// `fields`: which keys of each item to return; write
/// `fields: Option<Fields>`, absent meaning all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fields(pub Vec<String>);

impl Fields {
    /// `item` with only the selected keys (an item that is not an object
    /// is returned as it is).
    pub fn project(&self, item: &Value) -> Value {
        match item {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(key, _)| self.0.iter().any(|field| field == *key))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect::<Map<String, Value>>(),
            ),
            other => other.clone(),
        }
    }
}

impl ParamType for Fields {
    const DEFAULT_RULE: crate::params::DefaultRule =
        crate::params::DefaultRule::NoLiteral("an array");

    fn schema() -> Value {
        json!({ "type": "array", "items": { "type": "string" } })
    }

    fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
        <Vec<String> as ParamType>::parse(value, path).map(Fields)
    }
}

/// How a list ability shapes each item from its standard `format` and
/// `fields` parameters: the one place the rule lives, so every ability
/// answers them the same way.
///
/// - `fields` given: exactly those keys of each item, in the item's order;
///   a key no item of this ability has is an `invalid-arguments` error
///   listing the valid ones, never a silently empty item.
/// - otherwise `concise`: the ability's concise keys (ids, names, what a
///   next call needs); `detailed`: every key.
///
/// ```
/// use chalie_core::contracts::{Fields, Format, ItemShape};
/// use serde_json::json;
///
/// let shape = ItemShape::new(&["id", "title", "due", "notes"], &["id", "title"]);
/// let item = json!({ "id": 1, "title": "Book the hotel", "due": "2026-03-05", "notes": "…" });
/// let concise = shape.apply(Format::Concise, None, vec![item.clone()]).unwrap();
/// assert_eq!(concise, [json!({ "id": 1, "title": "Book the hotel" })]);
/// let due = Fields(vec!["due".into()]);
/// assert_eq!(shape.apply(Format::Concise, Some(&due), vec![item.clone()]).unwrap(), [json!({ "due": "2026-03-05" })]);
/// let wrong = Fields(vec!["owner".into()]);
/// let error = shape.apply(Format::Detailed, Some(&wrong), vec![item]).unwrap_err();
/// assert_eq!(error.as_error().unwrap().code().as_str(), "invalid-arguments");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ItemShape {
    keys: &'static [&'static str],
    concise: &'static [&'static str],
}

impl ItemShape {
    /// An item with `keys` (every key it can have), of which `concise` are
    /// kept by `format: concise`.
    pub const fn new(keys: &'static [&'static str], concise: &'static [&'static str]) -> Self {
        Self { keys, concise }
    }

    /// `items` shaped as `format` and `fields` ask, or the error that
    /// names the keys `fields` may list.
    pub fn apply(
        &self,
        format: Format,
        fields: Option<&Fields>,
        items: Vec<Value>,
    ) -> Result<Vec<Value>, crate::ToolResult> {
        let kept: Vec<&str> = match fields {
            Some(fields) => {
                if let Some(unknown) = fields
                    .0
                    .iter()
                    .find(|field| !self.keys.contains(&field.as_str()))
                {
                    return Err(crate::ToolResult::error(
                        "invalid-arguments",
                        format!("`fields` names `{unknown}`, which no item has"),
                        "list only keys of an item, or leave `fields` out for every key of the format",
                    )
                    .with_valid_values(self.keys.iter().copied()));
                }
                fields.0.iter().map(String::as_str).collect()
            }
            None => match format {
                Format::Concise => self.concise.to_vec(),
                Format::Detailed => return Ok(items),
            },
        };
        Ok(items
            .into_iter()
            .map(|item| match item {
                Value::Object(map) => Value::Object(
                    map.into_iter()
                        .filter(|(key, _)| kept.contains(&key.as_str()))
                        .collect(),
                ),
                other => other,
            })
            .collect())
    }
}
