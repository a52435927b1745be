//! The naming rules every provider accepts, checked at compile time.

/// Longest tool name OpenAI, Anthropic and Gemini all accept.
pub(crate) const MAX_NAME_LEN: usize = 64;

/// Why `name` is not a valid ability or action name, or `None` when it is.
///
/// The rule is `^[a-z][a-z0-9]*(_[a-z0-9]+)*$`, at most 64 characters. A dot
/// is rejected on its own terms because tool APIs answer it with a 400 and
/// chalie uses it as the separator in the permission `tool.action`; a hyphen
/// because hyphens belong to kebab-case error codes and published names.
pub(crate) fn snake_case_problem(kind: &str, name: &str) -> Option<String> {
    let suggestion = suggest_snake_case(name);
    if name.contains('.') {
        return Some(format!(
            "{kind} name `{name}` contains `.`, which OpenAI and Anthropic tool APIs reject and chalie reserves for `tool.action` permissions; use `{suggestion}`"
        ));
    }
    if name.contains('-') {
        return Some(format!(
            "{kind} name `{name}` contains `-`, which chalie reserves for error codes and published manifest names; use `{suggestion}`"
        ));
    }
    if name.len() > MAX_NAME_LEN {
        return Some(format!(
            "{kind} name `{name}` is {} characters long; tool APIs accept at most {MAX_NAME_LEN}",
            name.len()
        ));
    }
    if !is_snake_case(name) {
        return Some(format!(
            "{kind} name `{name}` is not snake_case (`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`); use `{suggestion}`"
        ));
    }
    None
}

fn is_snake_case(name: &str) -> bool {
    let mut segments = name.split('_');
    let Some(first) = segments.next() else {
        return false;
    };
    let starts_with_letter = first.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    let segment_ok = |segment: &str| {
        !segment.is_empty()
            && segment
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    starts_with_letter && segment_ok(first) && segments.all(segment_ok)
}

/// Whether `code` is kebab-case: `^[a-z][a-z0-9]*(-[a-z0-9]+)*$`.
pub(crate) fn is_kebab_case(code: &str) -> bool {
    is_snake_case(&code.replace('-', "_")) && !code.contains('_')
}

/// A best-effort snake_case spelling of `name`, for messages only.
pub(crate) fn suggest_snake_case(name: &str) -> String {
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
    let trimmed = out.trim_matches('_');
    trimmed.chars().take(MAX_NAME_LEN).collect()
}

/// A best-effort kebab-case spelling of `code`, for messages only.
pub(crate) fn suggest_kebab_case(code: &str) -> String {
    suggest_snake_case(code).replace('_', "-")
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
    use super::*;

    #[test]
    fn snake_case_rule() {
        for good in ["weather", "web_search", "get_v2", "a1_b2"] {
            assert_eq!(snake_case_problem("ability", good), None, "{good}");
        }
        for bad in [
            "Weather",
            "_x",
            "x_",
            "a__b",
            "1abc",
            "",
            "files.read",
            "files-read",
        ] {
            assert!(snake_case_problem("ability", bad).is_some(), "{bad}");
        }
        assert!(snake_case_problem("ability", &"a".repeat(65)).is_some());
        assert_eq!(snake_case_problem("ability", &"a".repeat(64)), None);
    }

    #[test]
    fn kebab_and_semver() {
        assert!(is_kebab_case("no-query-or-location"));
        assert!(!is_kebab_case("no_query"));
        assert!(!is_kebab_case("NoQuery"));
        assert!(!is_kebab_case("x-"));
        assert!(is_semver("1.2.3"));
        assert!(is_semver("1.0.0-beta.1+build.5"));
        assert!(!is_semver("1.2"));
        assert!(!is_semver("01.2.3"));
        assert!(!is_semver("v1.2.3"));
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest_snake_case("files.read"), "files_read");
        assert_eq!(suggest_snake_case("GetWeather"), "get_weather");
        assert_eq!(suggest_kebab_case("NoQuery"), "no-query");
    }
}
