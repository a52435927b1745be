//! An error's content: its message, then its `hint:`, `valid values:` and
//! `retry:` lines, rendered and read back exactly.

use super::escape::{self, Guard};
use super::header::parse_quoted;
use crate::{ToolError, result::Retry};

const HINT: &str = "hint: ";
const VALID_VALUES: &str = "valid values: ";
const RETRY: &str = "retry: ";

/// Appends the lines of `error` to `out`: the message (its lines that pose
/// as a tag or as one of the lines below escaped), then the hint, the valid
/// values and the retry advice, each on one line and only when present.
pub(crate) fn push_content(out: &mut String, error: &ToolError) {
    out.push_str(&escape::escape_lines(
        error.message(),
        Guard::TagsAndErrorLines,
    ));
    if !error.hint().is_empty() {
        out.push('\n');
        out.push_str(HINT);
        // A hint with a quote first or at its edges a space is quoted, so
        // that the line gives it back exactly.
        escape::push_one_line(out, error.hint(), |hint| {
            !hint.starts_with(['"', ' ']) && !hint.ends_with(' ')
        });
    }
    if !error.valid_values().is_empty() {
        out.push('\n');
        out.push_str(VALID_VALUES);
        for (index, value) in error.valid_values().iter().enumerate() {
            if index > 0 {
                out.push_str(", ");
            }
            // Bare unless the value could not be split off the list again.
            escape::push_one_line(out, value, |value| {
                !value.is_empty()
                    && !value.contains(", ")
                    && !value.starts_with([' ', '"'])
                    && !value.ends_with(' ')
            });
        }
    }
    if let Some(retry) = error.retry() {
        out.push('\n');
        out.push_str(RETRY);
        match retry {
            Retry::Never => out.push_str("no; change the call"),
            Retry::Now => out.push_str("yes"),
            Retry::After(seconds) => out.push_str(&format!("after {seconds}s")),
        }
    }
}

/// An error as read back from its envelope: what the ability gave.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorContent {
    /// What went wrong, as the ability wrote it.
    pub message: String,
    /// How to recover; empty when the error gave no hint.
    pub hint: String,
    /// The values that would make the call valid.
    pub valid_values: Vec<String>,
    /// Whether retrying helps, and when.
    pub retry: Option<Retry>,
}

/// Reads an error's content (between the tags, still escaped) back into
/// its parts, with the text of its lines after the message; `None` when a
/// `hint:`, `valid values:` or `retry:` line does not read back (a text
/// [`push_content`] did not write).
pub(crate) fn parse_content(content: &str) -> Option<(ErrorContent, &str)> {
    let mut rest = content;
    let mut take = |label: &str| -> Option<&str> {
        let (before, line) = match rest.rsplit_once('\n') {
            Some(split) => split,
            None => ("", rest),
        };
        let value = line.strip_prefix(label)?;
        rest = before;
        Some(value)
    };
    // From the last line up, in the reverse of the order they are written.
    let retry = match take(RETRY) {
        Some(text) => Some(parse_retry(text)?),
        None => None,
    };
    let valid_values = match take(VALID_VALUES) {
        Some(text) => parse_list(text)?,
        None => Vec::new(),
    };
    let hint = match take(HINT) {
        Some(text) => parse_one(text)?,
        None => String::new(),
    };
    let error = ErrorContent {
        message: escape::unescape_lines(rest, Guard::TagsAndErrorLines),
        hint,
        valid_values,
        retry,
    };
    Some((error, &content[rest.len()..]))
}

fn parse_retry(text: &str) -> Option<Retry> {
    match text {
        "no; change the call" => Some(Retry::Never),
        "yes" => Some(Retry::Now),
        _ => text
            .strip_prefix("after ")?
            .strip_suffix('s')?
            .parse()
            .ok()
            .map(Retry::After),
    }
}

/// A one-line text: a JSON string when it starts with a quote, else bare.
fn parse_one(text: &str) -> Option<String> {
    if text.starts_with('"') {
        match parse_quoted(text)? {
            (value, "") => Some(value),
            _ => None,
        }
    } else {
        Some(text.to_owned())
    }
}

fn parse_list(mut text: &str) -> Option<Vec<String>> {
    let mut values = Vec::new();
    loop {
        let (value, after) = if text.starts_with('"') {
            parse_quoted(text)?
        } else {
            let end = text.find(", ").unwrap_or(text.len());
            (text[..end].to_owned(), &text[end..])
        };
        values.push(value);
        match after.strip_prefix(", ") {
            Some(next) => text = next,
            None if after.is_empty() => return Some(values),
            None => return None,
        }
    }
}
