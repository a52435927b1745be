//! The naming rules every provider accepts, checked at compile time. The
//! rules live in `chalie-rules`, shared with the runtime crates; this
//! module words them for the compiler.

use chalie_rules::NameProblem;
pub(crate) use chalie_rules::{
    EXAMPLES_MAX, EXAMPLES_MIN, MAX_NAME_LEN, is_kebab_case, suggest_kebab_case, to_snake_case,
};

/// Why `name` is not a valid ability, action or toolset name, or `None`
/// when it is, worded for a compile error. A fix is offered only when
/// [`chalie_rules::suggest_name`] finds a valid one.
pub(crate) fn snake_case_problem(kind: &str, name: &str) -> Option<String> {
    let problem = chalie_rules::name_problem(name)?;
    let fix = match chalie_rules::suggest_name(name) {
        Some(suggestion) => format!("; use `{suggestion}`"),
        None => String::new(),
    };
    Some(match problem {
        NameProblem::Dot => format!(
            "{kind} name `{name}` contains `.`, which OpenAI and Anthropic tool APIs reject and chalie reserves for `tool.action` permissions{fix}"
        ),
        NameProblem::Hyphen => format!(
            "{kind} name `{name}` contains `-`, which chalie reserves for error codes and published manifest names{fix}"
        ),
        NameProblem::TooLong(len) => format!(
            "{kind} name `{name}` is {len} characters long; tool APIs accept at most {MAX_NAME_LEN}{fix}"
        ),
        NameProblem::Empty => {
            format!("{kind} name is empty; write a snake_case name, e.g. `get_weather`")
        }
        NameProblem::LeadingDigit => format!(
            "{kind} name `{name}` starts with a digit; names start with a lowercase letter{fix}"
        ),
        NameProblem::NotSnakeCase => {
            format!("{kind} name `{name}` is not snake_case (`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`){fix}")
        }
    })
}

/// The entry of `known` closest to the unknown key `written`, when it is
/// close enough to be a typo: `descripton` → `description`.
pub(crate) fn closest<'k>(written: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|candidate| (strsim::damerau_levenshtein(written, candidate), *candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Whether `version` is a semantic version: `MAJOR.MINOR.PATCH`, numbers
/// without leading zeros, optional `-pre.release` and `+build` parts.
pub(crate) fn is_semver(version: &str) -> bool {
    let (version, build) = match version.split_once('+') {
        Some((version, build)) => (version, Some(build)),
        None => (version, None),
    };
    let (core, pre) = match version.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (version, None),
    };
    let number = |part: &str| {
        !part.is_empty()
            && part.chars().all(|c| c.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'))
    };
    let identifiers = |text: &str| {
        text.split('.').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
    };
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|part| number(part))
        && pre.is_none_or(identifiers)
        && build.is_none_or(identifiers)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_shared_case_table() {
        for (name, valid) in chalie_rules::NAME_CASES {
            assert_eq!(
                snake_case_problem("ability", name).is_none(),
                *valid,
                "{name}"
            );
        }
        assert!(snake_case_problem("ability", &"a".repeat(65)).is_some());
        assert_eq!(snake_case_problem("ability", &"a".repeat(64)), None);
    }

    #[test]
    fn semver() {
        assert!(is_semver("1.2.3"));
        assert!(is_semver("1.0.0-beta.1+build.5"));
        assert!(!is_semver("1.2"));
        assert!(!is_semver("01.2.3"));
        assert!(!is_semver("v1.2.3"));
    }

    #[test]
    fn close_keys() {
        assert_eq!(
            closest("descripton", &["name", "description"]),
            Some("description")
        );
        assert_eq!(
            closest("defualt", &["default", "min", "max"]),
            Some("default")
        );
        assert_eq!(closest("required", &["default", "min", "max"]), None);
        assert_eq!(closest("mn", &["default", "min", "max"]), Some("min"));
    }

    /// The fix a message offers, as written between the backticks.
    fn offered_fix(message: &str) -> Option<&str> {
        let (_, rest) = message.split_once("; use `")?;
        rest.split_once('`').map(|(fix, _)| fix)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// The macros reject exactly what the runtime rule rejects, and
        /// every fix they print passes that rule.
        #[test]
        fn the_macros_agree_with_the_runtime_rule(
            name in prop_oneof!["[a-zA-Z0-9_.\\- ]{0,70}", any::<String>()]
        ) {
            let problem = snake_case_problem("ability", &name);
            prop_assert_eq!(problem.is_none(), chalie_rules::is_valid_name(&name));
            if let Some(fix) = problem.as_deref().and_then(offered_fix) {
                prop_assert!(chalie_rules::is_valid_name(fix), "{name:?}: {fix:?}");
            }
        }
    }
}
