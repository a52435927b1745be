//! Reading a JSON object field by field, collecting every problem.

use serde_json::{Map, Value};

use super::error::{ParamErrors, Problem};
use super::types::found;
use super::{FieldSpec, ParamType, schema};

/// The field every ability with actions takes, naming the action.
const ACTION_FIELD: &str = "action";

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

/// Reads the fields of one object; used by `#[derive(Params)]` code.
#[doc(hidden)]
pub struct ObjectReader<'a> {
    object: &'a Map<String, Value>,
    path: &'a str,
    errors: ParamErrors,
    /// The entries after the last one read in order: a model usually
    /// sends the fields in the schema's order, which is the order they
    /// are read in, so the next entry is tried before any search.
    ahead: serde_json::map::Iter<'a>,
}

/// The field's path, borrowed for a top-level field (the common case):
/// inlined, so that case is one test of the parent path.
#[inline]
fn field_path<'n>(path: &str, name: &'n str) -> std::borrow::Cow<'n, str> {
    if path.is_empty() {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(format!("{path}.{name}"))
    }
}

/// `object[name]`. A tool's arguments are a handful of keys, and comparing
/// a few short strings is cheaper than hashing one (`serde_json`'s map
/// hashes with SipHash); larger objects use the map's index.
pub(crate) fn find_field<'m>(object: &'m Map<String, Value>, name: &str) -> Option<&'m Value> {
    const SCAN_UP_TO: usize = 8;
    if object.len() <= SCAN_UP_TO {
        object
            .iter()
            .find_map(|(key, value)| (key == name).then_some(value))
    } else {
        object.get(name)
    }
}

impl<'a> ObjectReader<'a> {
    /// Starts reading `value`, which must be an object whose keys are all
    /// among `fields`.
    pub fn new(value: &'a Value, path: &'a str, fields: &[&str]) -> Result<Self, ParamErrors> {
        Self::open(value, path, fields)
    }

    /// [`new`](Self::new) over any list of named fields: names, or a
    /// struct's field table.
    pub(super) fn open<F: Named>(
        value: &'a Value,
        path: &'a str,
        fields: &[F],
    ) -> Result<Self, ParamErrors> {
        let object = match value {
            Value::Object(object) => object,
            // A tool without parameters may be called with `null`.
            Value::Null if fields.is_empty() => {
                static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
                EMPTY.get_or_init(Map::new)
            }
            other => {
                let found: &'static str = match other {
                    Value::Null => "null",
                    Value::Bool(_) => "a boolean",
                    Value::Number(_) => "a number",
                    Value::String(_) => "a string",
                    Value::Array(_) => "an array",
                    Value::Object(_) => "an object",
                };
                return Err(ParamErrors::single(path, Problem::NotAnObject { found }));
            }
        };
        let mut errors = ParamErrors::new();
        for (position, key) in object.keys().enumerate() {
            // Sent in the schema's order, each key is the field at its
            // own position; only a key out of order is searched for.
            let known = fields
                .get(position)
                .is_some_and(|field| field.name() == key.as_str())
                || fields.iter().any(|field| field.name() == key.as_str());
            if !known {
                let valid = fields.iter().map(|field| field.name().to_owned()).collect();
                errors.push(field_path(path, key), Problem::UnknownField { valid });
            }
        }
        Ok(Self {
            object,
            path,
            errors,
            ahead: object.iter(),
        })
    }

    /// Reads one field; `None` when it had a problem (recorded).
    ///
    /// An absent field and an explicit `null` mean the same: strict
    /// providers send `null` for fields the model leaves out.
    pub fn field<T: ParamType>(
        &mut self,
        name: &str,
        default: Option<Value>,
        bounds: Bounds,
    ) -> Option<T> {
        self.field_or(name, || default, bounds)
    }

    /// [`field`](Self::field) with the default built only when the field
    /// is absent: most fields are sent, and a default is a whole `Value`.
    pub(super) fn field_or<T: ParamType>(
        &mut self,
        name: &str,
        default: impl FnOnce() -> Option<Value>,
        bounds: Bounds,
    ) -> Option<T> {
        let Bounds { min, max, clamp } = bounds;
        let path = field_path(self.path, name);
        // Borrowed on the hot path; owned only for a default.
        let value: std::borrow::Cow<'_, Value> = match self.find_in_order(name) {
            Some(Value::Null) | None => match default() {
                Some(default) => std::borrow::Cow::Owned(default),
                None if T::OPTIONAL => std::borrow::Cow::Owned(Value::Null),
                None => {
                    let expected = schema::describe(&T::schema());
                    self.errors.push(path, Problem::Missing { expected });
                    return None;
                }
            },
            Some(value) if clamp => match clamped(value, min, max) {
                Some(bound) => std::borrow::Cow::Owned(bound),
                None => std::borrow::Cow::Borrowed(value),
            },
            Some(value) => std::borrow::Cow::Borrowed(value),
        };
        let parsed = match T::parse(&value, &path) {
            Ok(parsed) => parsed,
            Err(errors) => {
                // A number outside its type's range (500 for a `u8`) is
                // reported with the bounds the author declared, which are
                // the ones the model saw in the schema.
                // A clamped field's declared sides never fail, so the
                // bound crossed is the type's own.
                let declared = if clamp {
                    None
                } else {
                    declared_bounds(min, max)
                };
                match (errors.errors(), declared) {
                    (
                        [
                            super::ParamError {
                                problem: Problem::OutOfRange { .. },
                                ..
                            },
                        ],
                        Some(bound),
                    ) => {
                        self.errors.push(
                            path,
                            Problem::OutOfRange {
                                bound,
                                found: found(&value),
                            },
                        );
                    }
                    _ => self.errors.extend(errors),
                }
                return None;
            }
        };
        // Checked on the number sent (or defaulted), which is the number
        // the bounds in the schema speak of: the same for an integer, and
        // exact for a float that its own type would round.
        if let Some(bound) = broken_bounds(&value, min, max) {
            self.errors.push(
                path,
                Problem::OutOfRange {
                    bound,
                    found: found(&value),
                },
            );
            return None;
        }
        Some(parsed)
    }

    /// `object[name]`, trying the entry after the last one read first.
    fn find_in_order(&mut self, name: &str) -> Option<&'a Value> {
        let mut ahead = self.ahead.clone();
        match ahead.next() {
            Some((key, value)) if key == name => {
                self.ahead = ahead;
                Some(value)
            }
            _ => find_field(self.object, name),
        }
    }

    /// Whether `field`, which belongs to some actions only, may be read:
    /// `false` (with the problem recorded) when it was sent with another
    /// action. An absent or `null` field belongs anywhere, and an `action`
    /// that is not one the struct's `action` field accepts is left to that
    /// field's own check, as its one problem.
    pub(super) fn belongs(&mut self, field: &FieldSpec, table: &[FieldSpec]) -> bool {
        if find_field(self.object, field.name).is_none_or(Value::is_null) {
            return true;
        }
        let Some(sent @ Value::String(action)) = find_field(self.object, ACTION_FIELD) else {
            return true;
        };
        if field.actions.contains(&action.as_str()) {
            return true;
        }
        let action_accepted = table
            .iter()
            .find(|spec| spec.name == ACTION_FIELD)
            .is_some_and(|spec| (spec.kind.accepts)(sent));
        if !action_accepted {
            return true;
        }
        self.errors.push(
            field_path(self.path, field.name),
            Problem::OtherAction {
                belongs_to: field
                    .actions
                    .iter()
                    .map(|action| (*action).to_owned())
                    .collect(),
                action: action.clone(),
            },
        );
        false
    }

    /// `Err` with every problem found, if any.
    pub fn finish(&mut self) -> Result<(), ParamErrors> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(std::mem::take(&mut self.errors))
        }
    }

    /// Whether no problem was recorded.
    pub fn is_clean(&self) -> bool {
        self.errors.is_empty()
    }

    /// The problems recorded so far (used when a field came back `None`).
    pub fn into_errors(self) -> ParamErrors {
        if self.errors.is_empty() {
            ParamErrors::invalid_definition()
        } else {
            self.errors
        }
    }
}

/// A name in the list of fields an object may have.
pub(super) trait Named {
    fn name(&self) -> &str;
}

impl Named for &str {
    fn name(&self) -> &str {
        self
    }
}

impl Named for FieldSpec {
    fn name(&self) -> &str {
        self.name
    }
}

/// The bound a number sent outside a clamped field's range becomes;
/// `None` when it is inside (or not a number, which parsing reports).
fn clamped(value: &Value, min: Option<f64>, max: Option<f64>) -> Option<Value> {
    let number = value.as_f64()?;
    match (min, max) {
        (Some(min), _) if number < min => Some(schema::number(min)),
        (_, Some(max)) if number > max => Some(schema::number(max)),
        _ => None,
    }
}

fn declared_bounds(min: Option<f64>, max: Option<f64>) -> Option<String> {
    match (min, max) {
        (Some(min), Some(max)) => Some(format!("between {min} and {max}")),
        (Some(min), None) => Some(format!("at least {min}")),
        (None, Some(max)) => Some(format!("at most {max}")),
        (None, None) => None,
    }
}

/// Enforces `#[param(min, max)]` on a number (anything else, such as the
/// `null` of an absent `Option`, passes): the declared bounds, in words,
/// when the number is outside them.
fn broken_bounds(value: &Value, min: Option<f64>, max: Option<f64>) -> Option<String> {
    if min.is_none() && max.is_none() {
        return None;
    }
    let number = value.as_f64()?;
    let outside = min.is_some_and(|min| number < min) || max.is_some_and(|max| number > max);
    outside.then(|| declared_bounds(min, max)).flatten()
}

/// Checks a string against a closed set, for `#[derive(ParamEnum)]`.
#[doc(hidden)]
pub fn parse_enum_value<'v>(
    value: &'v Value,
    path: &str,
    values: &[&str],
) -> Result<&'v str, ParamErrors> {
    let valid = || values.iter().map(|value| (*value).to_owned()).collect();
    match value {
        Value::String(text) if values.contains(&text.as_str()) => Ok(text),
        Value::String(text) => Err(ParamErrors::single(
            path,
            Problem::NotOneOf {
                valid: valid(),
                found: format!("`{text}`"),
            },
        )),
        other => Err(ParamErrors::single(
            path,
            Problem::NotOneOf {
                valid: valid(),
                found: found(other),
            },
        )),
    }
}
