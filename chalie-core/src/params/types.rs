//! `ParamType` for the standard types a tool's parameters use.

use serde_json::{Value, json};

use super::error::{ParamErrors, Problem};
use super::{DefaultRule, ParamType, schema};

/// The JSON type of `value`, in words, for error messages.
pub(crate) fn found(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(flag) => format!("the boolean `{flag}`"),
        Value::Number(number) => format!("the number `{number}`"),
        Value::String(text) => {
            let short: String = text.chars().take(40).collect();
            let ellipsis = if text.chars().count() > 40 { "…" } else { "" };
            format!("the string `{short}{ellipsis}`")
        }
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn wrong_type<T: ParamType>(value: &Value, path: &str) -> ParamErrors {
    ParamErrors::single(
        path,
        Problem::WrongType {
            expected: schema::describe(&T::schema()),
            found: found(value),
        },
    )
}

impl ParamType for String {
    const DEFAULT_RULE: DefaultRule = DefaultRule::String;

    fn schema() -> Value {
        json!({ "type": "string" })
    }

    fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| wrong_type::<Self>(value, path))
    }
}

impl ParamType for bool {
    const DEFAULT_RULE: DefaultRule = DefaultRule::Bool;

    fn schema() -> Value {
        json!({ "type": "boolean" })
    }

    fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
        value
            .as_bool()
            .ok_or_else(|| wrong_type::<Self>(value, path))
    }
}

macro_rules! integer_param {
    ($($ty:ty),*) => {$(
        impl ParamType for $ty {
            const DEFAULT_RULE: DefaultRule = DefaultRule::Integer {
                min: <$ty>::MIN as i128,
                max: <$ty>::MAX as i128,
            };

            fn schema() -> Value {
                if <$ty>::MIN == 0 {
                    json!({ "type": "integer", "minimum": 0 })
                } else {
                    json!({ "type": "integer" })
                }
            }

            fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
                let number = match value {
                    Value::Number(number) => number,
                    other => return Err(wrong_type::<Self>(other, path)),
                };
                let integral = number
                    .as_i64()
                    .map(i128::from)
                    .or_else(|| number.as_u64().map(i128::from))
                    // Models often send `3.0` for 3; accept whole floats.
                    .or_else(|| number.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e18).map(|f| f as i128));
                let Some(integral) = integral else {
                    return Err(ParamErrors::single(path, Problem::WrongType {
                        expected: "a whole number".into(),
                        found: found(value),
                    }));
                };
                <$ty>::try_from(integral).map_err(|_| ParamErrors::single(path, Problem::OutOfRange {
                    bound: format!("between {} and {}", <$ty>::MIN, <$ty>::MAX),
                    found: found(value),
                }))
            }
        }

        impl Bounded for $ty {}
    )*};
}

integer_param!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! float_param {
    ($($ty:ty),*) => {$(
        impl ParamType for $ty {
            const DEFAULT_RULE: DefaultRule = DefaultRule::Number;

            fn schema() -> Value {
                json!({ "type": "number" })
            }

            fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
                value.as_f64().map(|number| number as $ty).ok_or_else(|| wrong_type::<Self>(value, path))
            }
        }

        impl Bounded for $ty {}
    )*};
}

float_param!(f32, f64);

impl<T: ParamType> ParamType for Option<T> {
    const OPTIONAL: bool = true;
    const DEFAULT_RULE: DefaultRule = T::DEFAULT_RULE;

    fn schema() -> Value {
        T::schema()
    }

    fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
        match value {
            Value::Null => Ok(None),
            other => T::parse(other, path).map(Some),
        }
    }
}

impl<T: ParamType> ParamType for Vec<T> {
    const DEFAULT_RULE: DefaultRule = DefaultRule::NoLiteral("an array");

    fn schema() -> Value {
        json!({ "type": "array", "items": T::schema() })
    }

    fn parse(value: &Value, path: &str) -> Result<Self, ParamErrors> {
        let Value::Array(items) = value else {
            return Err(wrong_type::<Self>(value, path));
        };
        let mut errors = ParamErrors::new();
        let mut parsed = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match T::parse(item, &format!("{path}[{index}]")) {
                Ok(item) => parsed.push(item),
                Err(item_errors) => errors.extend(item_errors),
            }
        }
        if errors.is_empty() {
            Ok(parsed)
        } else {
            Err(errors)
        }
    }
}

/// A number that `#[param(min = …, max = …)]` can bound: a type whose JSON
/// is a number. The bounds are checked on the number sent (or defaulted),
/// the number the schema's bounds speak of.
#[diagnostic::on_unimplemented(
    message = "`min` and `max` bound numbers, and `{Self}` is not a number",
    label = "not a number type",
    note = "bound an integer or float field, or drop `min`/`max` and describe the limit in the doc comment"
)]
pub trait Bounded {
    /// Named by the field table of a bounded field as
    /// `<Type as Bounded>::NUMBER`, so a field type that is not a number
    /// is one error, at the field's type, when the crate compiles.
    #[doc(hidden)]
    const NUMBER: () = ();
}

impl<T: Bounded> Bounded for Option<T> {}
