//! Neutralising tag-shaped lines in bodies, reversibly.
//!
//! A line is tag-shaped when, after horizontal whitespace and any number of
//! backslashes, it starts with `[`, optional spaces, a word of
//! `[A-Za-z0-9_.-]`, optional spaces, then `(` or `:`. Escaping adds one
//! backslash after the leading whitespace of every such line; unescaping
//! removes one from every such line that has at least one. Every line
//! separator a reader might honour (`\n`, `\r`, vertical tab, form feed,
//! NEL, U+2028, U+2029) starts a line.

fn is_line_separator(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

fn is_horizontal_space(c: char) -> bool {
    c.is_whitespace() && !is_line_separator(c)
}

/// Byte length of the leading horizontal whitespace of `line`.
fn indent_len(line: &str) -> usize {
    line.char_indices()
        .find(|&(_, c)| !is_horizontal_space(c))
        .map_or(line.len(), |(index, _)| index)
}

/// Whether `rest` (after the indent and backslashes) opens like a tag.
fn opens_like_tag(rest: &str) -> bool {
    let Some(after_bracket) = rest.strip_prefix('[') else {
        return false;
    };
    let after_space = after_bracket.trim_start_matches(is_horizontal_space);
    let after_word = after_space
        .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    let after_space = after_word.trim_start_matches(is_horizontal_space);
    after_space.starts_with('(') || after_space.starts_with(':')
}

/// The lines of `text` with their separators kept, split at every separator.
fn lines_with_separators(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .char_indices()
            .find(|&(_, c)| is_line_separator(c))
            .map_or(rest.len(), |(index, c)| index + c.len_utf8());
        let (line, tail) = rest.split_at(end);
        rest = tail;
        Some(line)
    })
}

/// Transforms each line's prefix by `edit`, given (indent, backslash count,
/// whether the rest opens like a tag).
fn map_lines(text: &str, mut edit: impl FnMut(&str, usize, &str, &mut String)) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for line in lines_with_separators(text) {
        let indent = indent_len(line);
        let after_indent = &line[indent..];
        let backslashes = after_indent.len() - after_indent.trim_start_matches('\\').len();
        let rest = &after_indent[backslashes..];
        if opens_like_tag(rest) {
            edit(&line[..indent], backslashes, rest, &mut out);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// [`escape_body`], borrowing when nothing needs escaping (no `[` at all,
/// the common case for JSON objects and prose).
pub(crate) fn escape_body_cow(body: &str) -> std::borrow::Cow<'_, str> {
    if body.contains('[') {
        std::borrow::Cow::Owned(escape_body(body))
    } else {
        std::borrow::Cow::Borrowed(body)
    }
}

/// Adds one backslash to every tag-shaped line of `body`.
pub fn escape_body(body: &str) -> String {
    map_lines(body, |indent, backslashes, rest, out| {
        out.push_str(indent);
        out.push_str(&"\\".repeat(backslashes + 1));
        out.push_str(rest);
    })
}

/// Removes the backslash [`escape_body`] added.
pub fn unescape_body(text: &str) -> String {
    map_lines(text, |indent, backslashes, rest, out| {
        out.push_str(indent);
        out.push_str(&"\\".repeat(backslashes.saturating_sub(1)));
        out.push_str(rest);
    })
}

/// Escapes an error message: tag-shaped lines as in a body, and the whole
/// message folded so that its lines cannot pose as the `hint:` line.
pub(crate) fn escape_error_message(message: &str) -> String {
    let escaped = escape_body(message.trim_end());
    escaped
        .split('\n')
        .map(|line| {
            if line.starts_with("hint:")
                || line.starts_with("valid values:")
                || line.starts_with("retry:")
            {
                format!("  {line}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}
