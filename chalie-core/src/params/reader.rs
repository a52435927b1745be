//! Reading a JSON object field by field, collecting every problem.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::error::{ParamErrors, Problem};
use super::schema::{self, Bounds};
use super::types::found;
use super::{FieldSpec, ParamType};

/// The field every ability with actions takes, naming the action.
const ACTION_FIELD: &str = "action";

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
    /// How many entries `ahead` has passed, when the object's keys are
    /// exactly its fields in their table's order (checked once by
    /// [`open`](Self::open), which compares each key anyway); `None`
    /// otherwise. The list reader then takes the field at that position
    /// without comparing its name again.
    aligned: Option<usize>,
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
        let mut aligned = object.len() == fields.len();
        for (position, key) in object.keys().enumerate() {
            // Sent in the schema's order, each key is the field at its
            // own position; only a key out of order is searched for.
            let in_place = fields
                .get(position)
                .is_some_and(|field| field.name() == key.as_str());
            aligned &= in_place;
            let known = in_place || fields.iter().any(|field| field.name() == key.as_str());
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
            aligned: aligned.then_some(0),
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
        self.field_or(None, name, || default, &bounds)
    }

    /// [`field`](Self::field) with the default built only when the field
    /// is absent: most fields are sent, and a default is a whole `Value`.
    ///
    /// `position` is the field's place in the table [`open`](Self::open)
    /// was given, when the caller reads the table's fields in order.
    pub(super) fn field_or<T: ParamType>(
        &mut self,
        position: Option<usize>,
        name: &str,
        default: impl FnOnce() -> Option<Value>,
        bounds: &Bounds,
    ) -> Option<T> {
        let sent = match (position, self.aligned) {
            (Some(position), Some(passed)) if position == passed => {
                self.aligned = Some(passed + 1);
                self.ahead.next().map(|(_, value)| value)
            }
            // Out of order, or read by name: from here on by name too.
            _ => {
                self.aligned = None;
                self.find_in_order(name)
            }
        };
        match sent {
            // The common case, kept short: sent, and nothing to clamp.
            Some(value) if !value.is_null() && !bounds.clamp => {
                self.parse_sent(value, name, bounds)
            }
            _ => self.absent_or_clamped(sent, name, default, bounds),
        }
    }

    /// A field sent as `null` or not at all (its default, if any), or one
    /// whose number is clamped into its bounds first.
    #[cold]
    fn absent_or_clamped<T: ParamType>(
        &mut self,
        sent: Option<&Value>,
        name: &str,
        default: impl FnOnce() -> Option<Value>,
        bounds: &Bounds,
    ) -> Option<T> {
        let value = match sent {
            Some(Value::Null) | None => match default() {
                Some(default) => default,
                None if T::OPTIONAL => Value::Null,
                None => {
                    let expected = schema::describe(&T::schema());
                    self.errors
                        .push(field_path(self.path, name), Problem::Missing { expected });
                    return None;
                }
            },
            Some(value) => match clamped(value, bounds.min, bounds.max) {
                Some(bound) => bound,
                None => value.clone(),
            },
        };
        self.parse_sent(&value, name, bounds)
    }

    /// Parses `value` as the field `name`'s type, within its bounds.
    // Inlined into the one caller that matters, the sent field's.
    #[inline(always)]
    fn parse_sent<T: ParamType>(
        &mut self,
        value: &Value,
        name: &str,
        bounds: &Bounds,
    ) -> Option<T> {
        let path = field_path(self.path, name);
        match T::parse(value, &path) {
            // Checked on the number sent (or defaulted), which is the
            // number the bounds in the schema speak of: the same for an
            // integer, and exact for a float that its own type would round.
            Ok(parsed) if bounds.min.is_none() && bounds.max.is_none() => Some(parsed),
            Ok(parsed) => match broken_bounds(value, bounds.min, bounds.max) {
                None => Some(parsed),
                Some(bound) => {
                    let found = found(value);
                    self.errors.push(path, Problem::OutOfRange { bound, found });
                    None
                }
            },
            Err(errors) => {
                self.unparsed(path, value, errors, bounds);
                None
            }
        }
    }

    /// Records why a field's value did not parse. A number outside its
    /// type's range (500 for a `u8`) is reported with the bounds the author
    /// declared, which are the ones the model saw in the schema; a clamped
    /// field's declared sides never fail, so the bound crossed is the
    /// type's own.
    #[cold]
    fn unparsed(
        &mut self,
        path: Cow<'_, str>,
        value: &Value,
        errors: ParamErrors,
        bounds: &Bounds,
    ) {
        let declared = match bounds.clamp {
            true => None,
            false => declared_bounds(bounds.min, bounds.max),
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
                let found = found(value);
                self.errors.push(path, Problem::OutOfRange { bound, found });
            }
            _ => self.errors.extend(errors),
        }
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
