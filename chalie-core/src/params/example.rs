//! Input examples: whole calls an ability declares with
//! `#[ability(input_examples = [...])]`, shown to Anthropic models beside
//! the schema (`input_examples`) and run by the smoke suite.
//!
//! `#[ability]` writes each example as constant data into the ability's
//! spec; the checks it runs on them while the crate compiles live with the
//! ability (`ability/example_checks.rs`).

use serde_json::{Map, Value};

use super::{DefaultLiteral, str_eq};

/// One value of an input example, as the attribute wrote it: a JSON value
/// that can be built in a constant.
#[derive(Debug, Clone, Copy)]
pub enum ExampleValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number, sign included.
    Int(i128),
    /// A number with a fraction or an exponent.
    Float(f64),
    /// A string.
    Str(&'static str),
    /// An array of values.
    Array(&'static [ExampleValue]),
    /// An object: its keys and values, in the order written.
    Object(&'static [(&'static str, ExampleValue)]),
}

// Numbers compare by their bits, so the spec holding examples stays `Eq`:
// two examples are the same when they were written the same.
impl PartialEq for ExampleValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Null, Self::Null) => true,
            (Self::Bool(a), Self::Bool(b)) => a == b,
            (Self::Int(a), Self::Int(b)) => a == b,
            (Self::Float(a), Self::Float(b)) => a.to_bits() == b.to_bits(),
            (Self::Str(a), Self::Str(b)) => a == b,
            (Self::Array(a), Self::Array(b)) => a == b,
            (Self::Object(a), Self::Object(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for ExampleValue {}

impl ExampleValue {
    /// The JSON value.
    pub fn to_json(&self) -> Value {
        match *self {
            Self::Null => Value::Null,
            Self::Bool(flag) => flag.into(),
            Self::Int(number) => DefaultLiteral::Int(number).to_value(),
            Self::Float(number) => number.into(),
            Self::Str(text) => text.into(),
            Self::Array(values) => values.iter().map(Self::to_json).collect(),
            Self::Object(fields) => Value::Object(object(fields)),
        }
    }

    /// The value as a scalar literal, the shape the type rules read.
    pub(crate) const fn literal(&self) -> Option<DefaultLiteral> {
        match *self {
            Self::Bool(flag) => Some(DefaultLiteral::Bool(flag)),
            Self::Int(number) => Some(DefaultLiteral::Int(number)),
            Self::Float(number) => Some(DefaultLiteral::Float(number)),
            Self::Str(text) => Some(DefaultLiteral::Str(text)),
            Self::Null | Self::Array(_) | Self::Object(_) => None,
        }
    }

    /// The value as a number, for the bounds check.
    pub(crate) const fn number(&self) -> Option<f64> {
        match *self {
            Self::Int(number) => Some(number as f64),
            Self::Float(number) => Some(number),
            _ => None,
        }
    }
}

fn object(fields: &[(&'static str, ExampleValue)]) -> Map<String, Value> {
    fields
        .iter()
        .map(|(key, value)| ((*key).to_owned(), value.to_json()))
        .collect()
}

/// One input example: the arguments of a whole call, as an ability
/// declares it with `#[ability(input_examples = [...])]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputExample {
    fields: &'static [(&'static str, ExampleValue)],
}

impl InputExample {
    #[doc(hidden)]
    pub const fn __new(fields: &'static [(&'static str, ExampleValue)]) -> Self {
        Self { fields }
    }

    /// The arguments, in the order written.
    pub const fn fields(&self) -> &'static [(&'static str, ExampleValue)] {
        self.fields
    }

    /// The arguments as the JSON object a call sends.
    pub fn to_json(&self) -> Value {
        Value::Object(object(self.fields))
    }

    /// The value given for `key`, if any.
    pub(crate) const fn get(&self, key: &str) -> Option<ExampleValue> {
        let mut index = 0;
        while index < self.fields.len() {
            if str_eq(self.fields[index].0, key) {
                return Some(self.fields[index].1);
            }
            index += 1;
        }
        None
    }

    /// The action the example calls, when it names one as a string.
    pub(crate) const fn action(&self) -> Option<&'static str> {
        match self.get("action") {
            Some(ExampleValue::Str(action)) => Some(action),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_the_json_written() {
        const EXAMPLE: InputExample = InputExample::__new(&[
            ("days", ExampleValue::Int(3)),
            ("big", ExampleValue::Int(u64::MAX as i128)),
            ("low", ExampleValue::Float(-3.5)),
            ("unit", ExampleValue::Null),
            (
                "stops",
                ExampleValue::Array(&[ExampleValue::Object(&[(
                    "city",
                    ExampleValue::Str("Oslo"),
                )])]),
            ),
        ]);
        let example = EXAMPLE;
        assert_eq!(
            example.to_json(),
            serde_json::json!({
                "days": 3,
                "big": u64::MAX,
                "low": -3.5,
                "unit": null,
                "stops": [{ "city": "Oslo" }],
            })
        );
        assert_eq!(example.action(), None);
        assert_eq!(example, example);
        assert_ne!(ExampleValue::Float(0.0), ExampleValue::Float(-0.0));
    }
}
