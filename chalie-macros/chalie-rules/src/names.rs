//! Ability, action and toolset names (snake_case) and error codes
//! (kebab-case).

use crate::MAX_NAME_LEN;

/// Why a name breaks the rule, most specific first; see [`name_problem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    /// It contains `.`: tool APIs reject it, and chalie reserves it for the
    /// `tool.action` permission.
    Dot,
    /// It contains `-`: chalie reserves hyphens for error codes and
    /// published manifest names.
    Hyphen,
    /// It is longer than [`MAX_NAME_LEN`] bytes (the length is given).
    TooLong(usize),
    /// It is empty.
    Empty,
    /// It starts with a digit.
    LeadingDigit,
    /// It is otherwise not `^[a-z][a-z0-9]*(_[a-z0-9]+)*$`.
    NotSnakeCase,
}

/// Why `name` is not a valid ability, action or toolset name, or `None`
/// when it is: `^[a-z][a-z0-9]*(_[a-z0-9]+)*$`, at most [`MAX_NAME_LEN`].
pub fn name_problem(name: &str) -> Option<NameProblem> {
    if name.contains('.') {
        Some(NameProblem::Dot)
    } else if name.contains('-') {
        Some(NameProblem::Hyphen)
    } else if name.len() > MAX_NAME_LEN {
        Some(NameProblem::TooLong(name.len()))
    } else if name.is_empty() {
        Some(NameProblem::Empty)
    } else if name.starts_with(|c: char| c.is_ascii_digit()) {
        Some(NameProblem::LeadingDigit)
    } else if !is_snake_case(name) {
        Some(NameProblem::NotSnakeCase)
    } else {
        None
    }
}

/// Whether `name` is a valid ability, action or toolset name.
pub fn is_valid_name(name: &str) -> bool {
    name_problem(name).is_none()
}

/// Whether `name` matches `^[a-z][a-z0-9]*(_[a-z0-9]+)*$`, of any length.
pub fn is_snake_case(name: &str) -> bool {
    is_separated(name, '_')
}

/// Whether `code` is a kebab-case error code: `^[a-z][a-z0-9]*(-[a-z0-9]+)*$`.
pub fn is_kebab_case(code: &str) -> bool {
    is_separated(code, '-')
}

fn is_separated(text: &str, separator: char) -> bool {
    text.starts_with(|c: char| c.is_ascii_lowercase())
        && text.split(separator).all(|segment| {
            !segment.is_empty()
                && segment
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// `name` in snake_case by case and separator changes alone:
/// `GetWeather` → `get_weather`, `files.read` → `files_read`. The result
/// may still break the rule (`3d` stays `3d`); [`suggest_name`] gives a
/// valid one.
pub fn to_snake_case(name: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if previous_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            previous_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        } else {
            if !out.ends_with('_') {
                out.push('_');
            }
            previous_lower = false;
        }
    }
    out.trim_matches('_').to_owned()
}

/// A valid name close to `name`, or `None` when there is none to offer.
///
/// Case and separators are fixed first; segments that start with a digit
/// move behind the first that starts with a letter (`3d_print` →
/// `print_3d`); a name longer than [`MAX_NAME_LEN`] is cut at a segment
/// boundary. A name with letters outside ASCII gets no suggestion: there
/// is no spelling of `météo` to be sure of. Every suggestion passes
/// [`is_valid_name`] and differs from `name`.
pub fn suggest_name(name: &str) -> Option<String> {
    if name.chars().any(|c| !c.is_ascii() && c.is_alphabetic()) {
        return None;
    }
    let snake = to_snake_case(name);
    let segments: Vec<&str> = snake
        .split('_')
        .filter(|segment| !segment.is_empty())
        .collect();
    let lead = segments
        .iter()
        .position(|segment| segment.starts_with(|c: char| c.is_ascii_lowercase()))?;
    let mut suggestion = String::new();
    for segment in segments[lead..].iter().chain(&segments[..lead]) {
        let separator = usize::from(!suggestion.is_empty());
        if suggestion.len() + separator + segment.len() > MAX_NAME_LEN {
            break;
        }
        if separator == 1 {
            suggestion.push('_');
        }
        suggestion.push_str(segment);
    }
    (is_valid_name(&suggestion) && suggestion != name).then_some(suggestion)
}

/// A valid kebab-case error code close to `code`, or `None`; the same
/// steps as [`suggest_name`], joined with `-`.
pub fn suggest_kebab_case(code: &str) -> Option<String> {
    let suggestion = suggest_name(code)?.replace('_', "-");
    (is_kebab_case(&suggestion) && suggestion != code).then_some(suggestion)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::NAME_CASES;

    #[test]
    fn the_case_table() {
        for (name, valid) in NAME_CASES {
            assert_eq!(is_valid_name(name), *valid, "{name}");
        }
        assert!(is_valid_name(&"a".repeat(64)));
        assert_eq!(
            name_problem(&"a".repeat(65)),
            Some(NameProblem::TooLong(65))
        );
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest_name("files.read").as_deref(), Some("files_read"));
        assert_eq!(suggest_name("GetWeather").as_deref(), Some("get_weather"));
        assert_eq!(suggest_name("3d_print").as_deref(), Some("print_3d"));
        assert_eq!(suggest_name("3d"), None);
        assert_eq!(suggest_name("météo"), None);
        assert_eq!(suggest_name("___"), None);
        assert_eq!(suggest_name("weather"), None);
        assert_eq!(suggest_kebab_case("NoQuery").as_deref(), Some("no-query"));
        assert_eq!(suggest_kebab_case("404"), None);
        let long = format!("{}_{}", "A".repeat(40), "B".repeat(40));
        assert_eq!(suggest_name(&long), Some("a".repeat(40)));
    }

    #[test]
    fn kebab_case() {
        assert!(is_kebab_case("no-query-or-location"));
        assert!(!is_kebab_case("no_query"));
        assert!(!is_kebab_case("NoQuery"));
        assert!(!is_kebab_case("x-"));
        assert!(!is_kebab_case("1-x"));
    }

    /// Names made of the characters people type, and of everything else.
    fn names() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9_.\\- ]{0,70}",
            "[a-z][a-z0-9]{0,8}(_[a-z0-9]{1,8}){0,8}",
            any::<String>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        /// Every suggestion passes the rule it is offered for.
        #[test]
        fn every_suggestion_is_valid(name in names()) {
            if let Some(suggestion) = suggest_name(&name) {
                prop_assert!(is_valid_name(&suggestion), "{name:?} -> {suggestion:?}");
                prop_assert_ne!(&suggestion, &name);
            }
            if let Some(suggestion) = suggest_kebab_case(&name) {
                prop_assert!(is_kebab_case(&suggestion), "{name:?} -> {suggestion:?}");
            }
        }

        /// A name the rule rejects for case or separators alone gets a fix.
        #[test]
        fn a_fixable_name_gets_a_fix(name in "[a-z][a-z0-9]{0,6}([_.\\-][a-zA-Z][a-z0-9]{0,6}){0,5}") {
            if !is_valid_name(&name) {
                prop_assert!(suggest_name(&name).is_some(), "{name:?}");
            }
        }

        /// The problem is `None` exactly when the pattern and length hold.
        #[test]
        fn the_problem_matches_the_pattern(name in names()) {
            let pattern = is_snake_case(&name) && name.len() <= crate::MAX_NAME_LEN;
            prop_assert_eq!(name_problem(&name).is_none(), pattern);
        }
    }
}
