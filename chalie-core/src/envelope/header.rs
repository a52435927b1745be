//! `[tool(key=value, ...)]`: rendering and parsing the header line.

use super::escape;

/// Whether `value` can stand bare in a header.
fn is_bare(value: &str) -> bool {
    !value.is_empty()
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/' | '@' | '+')
        })
}

/// Appends `key=value` (quoted when needed), after `, ` unless `first`.
///
/// `key` is a metadata key, cleaned to `[a-z0-9_]` when the result was
/// built, or one the framework writes.
pub(crate) fn push_attribute(out: &mut String, first: bool, key: &str, value: &str) {
    if !first {
        out.push_str(", ");
    }
    out.push_str(key);
    out.push('=');
    escape::push_one_line(out, value, is_bare);
}

/// Opens the attributes with the first one, `status=success` or
/// `status=error`: the framework's own constants, bare by construction, so
/// written in one piece without the check every other value passes
/// through on every call.
pub(crate) fn open_with_status(out: &mut String, success: bool) {
    out.push_str(if success {
        "(status=success"
    } else {
        "(status=error"
    });
}

/// Parses a header line into the tool name and its attributes.
pub(crate) fn parse(line: &str) -> Option<(String, Vec<(String, String)>)> {
    let inner = line.strip_prefix('[')?.strip_suffix(")]")?;
    let (tool, mut rest) = inner.split_once('(')?;
    if tool.is_empty() || !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let mut attributes = Vec::new();
    while !rest.is_empty() {
        let (key, after_key) = rest.split_once('=')?;
        let (value, after_value) = if after_key.starts_with('"') {
            parse_quoted(after_key)?
        } else {
            let end = after_key.find(", ").unwrap_or(after_key.len());
            (after_key[..end].to_owned(), &after_key[end..])
        };
        attributes.push((key.to_owned(), value));
        rest = match after_value.strip_prefix(", ") {
            Some(next) => next,
            None if after_value.is_empty() => "",
            None => return None,
        };
    }
    Some((tool.to_owned(), attributes))
}

/// The JSON string `text` starts with, decoded, and what follows it.
pub(crate) fn parse_quoted(text: &str) -> Option<(String, &str)> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<String>();
    let value = stream.next()?.ok()?;
    let consumed = stream.byte_offset();
    Some((value, &text[consumed..]))
}
