//! `[tool(key=value, ...)]`: rendering and parsing the header line.

/// Whether `value` can stand bare in a header.
fn is_bare(value: &str) -> bool {
    !value.is_empty()
        && value.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/' | '@' | '+')
        })
}

/// `value` bare when safe, else as a JSON string. In a list (`valid
/// values:`) spaces are allowed bare unless the value has `, `.
pub(crate) fn quote_if_needed(value: &str, in_list: bool) -> String {
    let list_safe = in_list
        && !value.is_empty()
        && !value.contains(", ")
        && !value.starts_with([' ', '"'])
        && !value.ends_with(' ')
        && !value.chars().any(char::is_control);
    if is_bare(value) || list_safe {
        value.to_owned()
    } else {
        serde_json::Value::String(value.to_owned()).to_string()
    }
}

/// Appends `key=value` (quoted when needed), after `, ` unless `first`.
pub(crate) fn push_attribute(out: &mut String, first: bool, key: &str, value: &str) {
    if !first {
        out.push_str(", ");
    }
    out.push_str(key);
    out.push('=');
    if is_bare(value) {
        out.push_str(value);
    } else {
        out.push_str(&quote_if_needed(value, false));
    }
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
            let mut stream = serde_json::Deserializer::from_str(after_key).into_iter::<String>();
            let value = stream.next()?.ok()?;
            let consumed = stream.byte_offset();
            (value, &after_key[consumed..])
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
