//! Errors a model can act on: which field, what was expected, what is valid.

use std::fmt;

use crate::ToolResult;

/// What is wrong with one value.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Problem {
    /// The arguments are not a JSON object.
    NotAnObject {
        /// The JSON type found instead.
        found: &'static str,
    },
    /// A required field is absent.
    Missing {
        /// What the field takes, e.g. `a string`.
        expected: String,
    },
    /// The value has the wrong JSON type.
    WrongType {
        /// What the field takes.
        expected: String,
        /// What was sent, briefly.
        found: String,
    },
    /// The value is not one of a closed set.
    NotOneOf {
        /// Every accepted value.
        valid: Vec<String>,
        /// What was sent.
        found: String,
    },
    /// A number outside its bounds.
    OutOfRange {
        /// The bound that was crossed, e.g. `at least 1`.
        bound: String,
        /// What was sent.
        found: String,
    },
    /// A field the ability does not take.
    UnknownField {
        /// The fields it does take.
        valid: Vec<String>,
    },
    /// A field that belongs to other actions than the one called.
    OtherAction {
        /// The actions the field belongs to.
        belongs_to: Vec<String>,
        /// The action the call named.
        action: String,
    },
    /// Anything else, said in a sentence.
    Invalid(String),
}

/// One problem at one place in the arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamError {
    /// Where: `location`, `stops[2].city`; empty for the whole object.
    pub path: String,
    /// What is wrong there.
    pub problem: Problem,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = &self.path;
        match &self.problem {
            Problem::NotAnObject { found } if path.is_empty() => {
                write!(f, "the arguments must be a JSON object, not {found}")
            }
            Problem::NotAnObject { found } => write!(f, "`{path}` must be an object, not {found}"),
            Problem::Missing { expected } => write!(f, "`{path}` is required ({expected})"),
            Problem::WrongType { expected, found } => {
                write!(f, "`{path}` must be {expected}, not {found}")
            }
            Problem::NotOneOf { valid, found } => write!(
                f,
                "`{path}` must be one of {}, not {found}",
                backticked(valid)
            ),
            Problem::OutOfRange { bound, found } => {
                write!(f, "`{path}` must be {bound}, not {found}")
            }
            Problem::UnknownField { valid } if valid.is_empty() => {
                write!(f, "unknown field `{path}`; this tool takes no parameters")
            }
            Problem::UnknownField { valid } => {
                write!(
                    f,
                    "unknown field `{path}`; valid fields are {}",
                    backticked(valid)
                )
            }
            Problem::OtherAction { belongs_to, action } => {
                let actions = if belongs_to.len() == 1 {
                    "action"
                } else {
                    "actions"
                };
                write!(
                    f,
                    "`{path}` is only for {actions} {}, not `{action}`",
                    backticked(belongs_to)
                )
            }
            Problem::Invalid(message) if path.is_empty() => f.write_str(message),
            Problem::Invalid(message) => write!(f, "`{path}`: {message}"),
        }
    }
}

fn backticked(values: &[String]) -> String {
    values
        .iter()
        .map(|value| format!("`{value}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every problem found in one set of arguments.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParamErrors {
    errors: Vec<ParamError>,
}

impl ParamErrors {
    /// No problems yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A single problem at `path`.
    pub fn single(path: impl Into<String>, problem: Problem) -> Self {
        Self {
            errors: vec![ParamError {
                path: path.into(),
                problem,
            }],
        }
    }

    /// Adds a problem.
    pub fn push(&mut self, path: impl Into<String>, problem: Problem) {
        self.errors.push(ParamError {
            path: path.into(),
            problem,
        });
    }

    /// Adds every problem of `other`.
    pub fn extend(&mut self, other: ParamErrors) {
        self.errors.extend(other.errors);
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The problems, in the order found.
    pub fn errors(&self) -> &[ParamError] {
        &self.errors
    }

    #[doc(hidden)]
    pub fn invalid_definition() -> Self {
        Self::single(
            "",
            Problem::Invalid("this ability's parameters failed to compile".into()),
        )
    }

    /// The values that would fix the call, when exactly one problem has a
    /// closed set of them.
    pub fn valid_values(&self) -> Vec<String> {
        match self.errors.as_slice() {
            [
                ParamError {
                    problem: Problem::NotOneOf { valid, .. } | Problem::UnknownField { valid },
                    ..
                },
            ] => valid.clone(),
            _ => Vec::new(),
        }
    }

    /// The error result the model reads: code `invalid-arguments`, every
    /// problem on its own line, and how to recover.
    pub fn into_tool_result(self) -> ToolResult {
        let valid = self.valid_values();
        let hint = self.hint();
        ToolResult::error("invalid-arguments", self.to_string(), hint).with_valid_values(valid)
    }

    /// How to recover: the general advice, or, when every problem is a
    /// field sent with the wrong action, which fields to leave out.
    fn hint(&self) -> String {
        let mut misplaced = Vec::new();
        let mut called = None;
        let mut belongs_to: Option<&[String]> = None;
        for error in &self.errors {
            let Problem::OtherAction {
                belongs_to: actions,
                action,
            } = &error.problem
            else {
                return "fix the fields named above and call again with the same tool".into();
            };
            misplaced.push(error.path.clone());
            called = Some(action);
            belongs_to = Some(actions);
        }
        match (called, belongs_to, misplaced.as_slice()) {
            (Some(action), Some([only]), [field]) => format!(
                "leave `{field}` out of action `{action}`, or call action `{only}` if that is what you meant"
            ),
            (Some(action), _, _) => format!(
                "leave {} out of action `{action}` and call again",
                backticked(&misplaced)
            ),
            _ => "fix the fields named above and call again with the same tool".into(),
        }
    }
}

impl fmt::Display for ParamErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.errors.iter().enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ParamErrors {}
