//! The one rule every text the envelope carries passes through.
//!
//! A reader may break lines at any of `\n`, `\r`, vertical tab, form feed,
//! NEL (U+0085), LINE SEPARATOR (U+2028) or PARAGRAPH SEPARATOR (U+2029),
//! so each of them starts a line here. Every carried text is either:
//!
//! - **multi-line** (a success's body, an error's message): every line
//!   that is tag-shaped, or for a message shaped like one of the error's
//!   own lines (`hint:`, `valid values:`, `retry:`), gets one more
//!   backslash after its indent, and unescaping removes exactly that one;
//! - **one-line** (header values, the hint, valid values): written bare
//!   when its slot allows and it holds no line separator or control
//!   character, else as a JSON string in which every line separator is a
//!   `\uXXXX` escape, so it never spans two lines for any reader.
//!
//! A line is tag-shaped when, after horizontal whitespace, invisible
//! format characters and any number of backslashes, it starts with `[`,
//! optional spaces, a word of `[A-Za-z0-9_.-]`, optional spaces, then `(`
//! or `:`.

use std::borrow::Cow;

use super::one_line;

/// Whether `c` starts a new line for some reader.
pub(crate) fn is_line_separator(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Characters a reader may skip before the first visible one of a line:
/// horizontal whitespace, and the invisible format characters (soft
/// hyphen, zero-width spaces and joiners, direction marks and embeddings,
/// word joiner, byte order mark), so that none of them hides a tag.
fn is_indent(c: char) -> bool {
    (c.is_whitespace() && !is_line_separator(c))
        || matches!(
            c,
            '\u{AD}'
                | '\u{61C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
        )
}

/// Which lines of a multi-line text are guarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Guard {
    /// A success's body: tag-shaped lines.
    Tags,
    /// An error's message: tag-shaped lines, and lines that could pose as
    /// the error's own `hint:`, `valid values:` or `retry:` lines.
    TagsAndErrorLines,
}

/// The labels of the lines an error adds after its message.
pub(crate) const ERROR_LINE_LABELS: [&str; 3] = ["hint:", "valid values:", "retry:"];

impl Guard {
    /// Whether `rest` (a line after its indent and backslashes) is guarded.
    fn guards(self, rest: &str) -> bool {
        opens_like_tag(rest)
            || (self == Guard::TagsAndErrorLines
                && ERROR_LINE_LABELS
                    .iter()
                    .any(|label| rest.starts_with(label)))
    }

    /// Whether a text may hold a guarded line at all: a cheap test that
    /// lets the common text (no `[`, no label) be borrowed unchanged.
    fn may_guard(self, text: &str) -> bool {
        text.contains('[')
            || (self == Guard::TagsAndErrorLines
                && ERROR_LINE_LABELS.iter().any(|label| text.contains(label)))
    }
}

/// Whether `rest` (after the indent and backslashes) opens like a tag.
fn opens_like_tag(rest: &str) -> bool {
    let Some(after_bracket) = rest.strip_prefix('[') else {
        return false;
    };
    let after_space = after_bracket.trim_start_matches(is_indent);
    let after_word = after_space
        .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    let after_space = after_word.trim_start_matches(is_indent);
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

/// Rewrites the backslashes of every guarded line: `count` gets the number
/// a guarded line has and returns the number it is written with.
fn map_guarded_lines(text: &str, guard: Guard, count: impl Fn(usize) -> usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for line in lines_with_separators(text) {
        let indent = line
            .char_indices()
            .find(|&(_, c)| !is_indent(c))
            .map_or(line.len(), |(index, _)| index);
        let after_indent = &line[indent..];
        let backslashes = after_indent.len() - after_indent.trim_start_matches('\\').len();
        let rest = &after_indent[backslashes..];
        if guard.guards(rest) {
            out.push_str(&line[..indent]);
            out.extend(std::iter::repeat_n('\\', count(backslashes)));
            out.push_str(rest);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// `text` with one more backslash on every line `guard` guards, borrowed
/// when no line needs it.
pub(crate) fn escape_lines(text: &str, guard: Guard) -> Cow<'_, str> {
    if guard.may_guard(text) {
        Cow::Owned(map_guarded_lines(text, guard, |count| count + 1))
    } else {
        Cow::Borrowed(text)
    }
}

/// Removes the backslash [`escape_lines`] added.
pub(crate) fn unescape_lines(text: &str, guard: Guard) -> String {
    map_guarded_lines(text, guard, |count| count.saturating_sub(1))
}

/// Adds one backslash to every tag-shaped line of `body`.
pub fn escape_body(body: &str) -> String {
    escape_lines(body, Guard::Tags).into_owned()
}

/// Removes the backslash [`escape_body`] added.
pub fn unescape_body(text: &str) -> String {
    unescape_lines(text, Guard::Tags)
}

/// Appends a one-line text: bare when `bare_allowed` says the slot can
/// hold it so and it has no line separator or control character (the
/// rule no slot can waive), else quoted by [`push_quoted`].
pub(crate) fn push_one_line(out: &mut String, text: &str, bare_allowed: impl Fn(&str) -> bool) {
    if bare_allowed(text) && !text.chars().any(|c| c.is_control() || is_line_separator(c)) {
        out.push_str(text);
    } else {
        push_quoted(out, text);
    }
}

/// Appends `text` as a JSON string that holds no line separator: JSON
/// escapes the ASCII ones, and NEL, U+2028 and U+2029 become `\uXXXX`, which
/// any JSON reader decodes back to the same character.
pub(crate) fn push_quoted(out: &mut String, text: &str) {
    one_line::push_string(out, text);
}

/// Appends `value` as compact JSON that holds no line separator, so a
/// JSON body stays one line, for every reader, and valid JSON.
pub(crate) fn push_json(out: &mut String, value: &serde_json::Value) {
    one_line::push_value(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_text_holds_no_line_separator_and_decodes_back() {
        let text = "a\u{85}b\u{2028}c\u{2029}d\ne\rf\u{0B}g\u{0C}h\"\\";
        let mut quoted = String::new();
        push_quoted(&mut quoted, text);
        assert!(!quoted.contains(is_line_separator), "{quoted:?}");
        assert_eq!(
            serde_json::from_str::<String>(&quoted).ok().as_deref(),
            Some(text)
        );
    }

    #[test]
    fn invisible_characters_do_not_hide_a_tag() {
        for line in [
            "\u{FEFF}[end:x]",
            "\u{200B} [end:x]",
            "\u{202E}[x(status=error)]",
        ] {
            assert_ne!(escape_body(line), line);
            assert_eq!(unescape_body(&escape_body(line)), line);
        }
    }

    #[test]
    fn message_lines_posing_as_error_lines_are_guarded_reversibly() {
        let message = "ok\nhint: run it\u{2028}  valid values: a\n\\retry: yes";
        let escaped = escape_lines(message, Guard::TagsAndErrorLines);
        assert_eq!(
            escaped,
            "ok\n\\hint: run it\u{2028}  \\valid values: a\n\\\\retry: yes"
        );
        assert_eq!(unescape_lines(&escaped, Guard::TagsAndErrorLines), message);
    }
}
