//! The **pre-validate** step ([the steps](super::Dispatcher#the-steps-of-a-call)):
//! what takes the framework fields off a call and checks its action.

use serde_json::Value;

use crate::params::find_field;
use crate::{
    AbilitySpec, ToolResult, descriptor::ACT_SUMMARY_FIELD, descriptor::ASYNC_FIELD,
    params::ParamErrors, params::Problem,
};

/// The framework fields a call carried.
#[derive(Debug, Default)]
pub(crate) struct Framework {
    /// `act_summary`: a line for the user.
    pub(crate) summary: Option<String>,
    /// `async: true`.
    pub(crate) background: bool,
}

/// Removes `act_summary` and `async` from the arguments. `null` arguments
/// count as `{}`, which models send for tools without parameters.
pub(crate) fn strip_framework_fields(arguments: &mut Value) -> Result<Framework, ParamErrors> {
    if arguments.is_null() {
        *arguments = Value::Object(serde_json::Map::new());
    }
    let Value::Object(object) = arguments else {
        // Not an object: parsing reports it.
        return Ok(Framework::default());
    };
    // Most calls carry neither field: one look at the keys before
    // removing anything, since a removal hashes the key even when it is
    // absent.
    if !object
        .keys()
        .any(|key| key == ACT_SUMMARY_FIELD || key == ASYNC_FIELD)
    {
        return Ok(Framework::default());
    }
    let take = |object: &mut serde_json::Map<String, Value>, field: &str| {
        find_field(object, field)?;
        object.remove(field)
    };
    let mut errors = ParamErrors::new();
    let summary = match take(object, ACT_SUMMARY_FIELD) {
        None | Some(Value::Null) => None,
        Some(Value::String(summary)) => Some(summary),
        Some(other) => {
            errors.push(ACT_SUMMARY_FIELD, wrong_type("a string", &other));
            None
        }
    };
    let background = match take(object, ASYNC_FIELD) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(flag)) => flag,
        Some(other) => {
            errors.push(ASYNC_FIELD, wrong_type("a boolean", &other));
            false
        }
    };
    if errors.is_empty() {
        Ok(Framework {
            summary,
            background,
        })
    } else {
        Err(errors)
    }
}

fn wrong_type(expected: &str, found: &Value) -> Problem {
    let found = match found {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    Problem::WrongType {
        expected: expected.to_owned(),
        found: found.to_owned(),
    }
}

/// The declared action the arguments name, checked with the parameters it
/// requires; `None` for an ability without actions.
pub(crate) fn check_action(
    spec: &AbilitySpec,
    arguments: &Value,
) -> Result<Option<&'static str>, Box<ToolResult>> {
    if spec.actions().is_empty() {
        return Ok(None);
    }
    let named = arguments.get("action");
    let Some(action) = named
        .and_then(Value::as_str)
        .and_then(|name| spec.action(name))
    else {
        // Only a bad call pays for the list of valid actions.
        let valid: Vec<String> = spec
            .actions()
            .iter()
            .map(|action| action.name().to_owned())
            .collect();
        let message = match named {
            None | Some(Value::Null) => {
                format!(
                    "`action` is required; `{}` takes one of {}",
                    spec.name(),
                    listed(&valid)
                )
            }
            Some(Value::String(name)) => {
                format!("`action` must be one of {}, not `{name}`", listed(&valid))
            }
            Some(other) => format!("`action` must be one of {}, not {}", listed(&valid), other),
        };
        return Err(Box::new(
            ToolResult::error(
                "invalid-arguments",
                message,
                "pass one of the valid values as action= and call again",
            )
            .with_valid_values(valid),
        ));
    };
    let mut missing = ParamErrors::new();
    for required in action.required() {
        if arguments.get(*required).is_none_or(Value::is_null) {
            missing.push(
                *required,
                Problem::Missing {
                    expected: format!("action `{}` requires it", action.name()),
                },
            );
        }
    }
    if missing.is_empty() {
        Ok(Some(action.name()))
    } else {
        Err(Box::new(missing.into_tool_result()))
    }
}

fn listed(values: &[String]) -> String {
    values
        .iter()
        .map(|value| format!("`{value}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
