//! The text envelope the model reads, rendered in one place.
//!
//! ```text
//! [weather(status=success)]
//! {"location":"Valletta, MT","condition":"Clear","temperature_c":24.1}
//! [end:weather]
//! ```
//!
//! The first and last lines are the only unescaped tags: any body line
//! shaped like a tag (`[end:weather]`, `[weather(status=success)]`) gets one
//! more leading backslash, so a web page or file can never close the
//! envelope early or open a fake one; [`Envelope::parse`] removes exactly
//! that backslash again.

mod error;
mod escape;
mod header;
mod one_line;

use std::borrow::Cow;

use crate::result::Scalar;
use crate::{ToolResult, result::Body, result::Retry};

pub use error::ErrorContent;
use escape::Guard;
pub(crate) use escape::push_json;
pub use escape::{escape_body, unescape_body};

/// Renders `result` of the call to `tool` (with its `action`, if any) as the
/// envelope text the model reads.
///
/// `tool` may come from a model (an unknown name); anything outside
/// `[A-Za-z0-9_]` in it is replaced by `_` so the tags stay unforgeable.
/// Every other text (the action, metadata, the body, the error's message,
/// hint and valid values) is neutralised by one rule, so that only the
/// first and the last line are tags for a reader that breaks lines at any
/// of `\n`, `\r`, VT, FF, NEL, U+2028 or U+2029, and [`Envelope::parse`]
/// gives each back exactly.
pub fn render_envelope(tool: &str, action: Option<&str>, result: &ToolResult) -> String {
    let tool = tag_safe(tool);
    // One string, written once: this runs on every call.
    let mut out = String::with_capacity(128);
    out.push('[');
    out.push_str(&tool);
    let error = result.as_error();
    header::open_with_status(&mut out, error.is_none());
    if let Some(error) = error {
        header::push_attribute(&mut out, false, "code", error.code().as_str());
    }
    if let Some(action) = action {
        header::push_attribute(&mut out, false, "action", action);
    }
    // Metadata never overrides what the framework wrote.
    let reserved = |key: &str| {
        key == "status"
            || (key == "code" && error.is_some())
            || (key == "action" && action.is_some())
    };
    for (key, value) in result.metadata() {
        if !reserved(key) {
            header::push_attribute(&mut out, false, key, &scalar_text(value));
        }
    }
    out.push_str(")]\n");
    match error {
        None => push_body(&mut out, result.body()),
        Some(error) => error::push_content(&mut out, error),
    }
    out.push_str("\n[end:");
    out.push_str(&tool);
    out.push(']');
    out
}

/// Appends a success's body, escaped, to `out`. A JSON body is serialised
/// straight into the envelope rather than into a string of its own.
fn push_body(out: &mut String, body: Option<&Body>) {
    let start = out.len();
    match body {
        Some(Body::Text(text)) => {
            out.push_str(&escape::escape_lines(text, Guard::Tags));
            return;
        }
        Some(Body::Json(value)) => {
            push_json(out, value);
            // Compact JSON is one line (`push_json` escapes every line
            // separator) whose first character is its value's, an ASCII
            // one: no indent, so only a leading `[` could open a tag. Only
            // then does it go through the rule, which spares every other
            // body a scan, and an array is rewritten only when it must be.
            if !out[start..].starts_with('[') {
                return;
            }
        }
        Some(body) => out.push_str(&body.render()),
        None => {}
    }
    if let Cow::Owned(escaped) = escape::escape_lines(&out[start..], Guard::Tags) {
        out.truncate(start);
        out.push_str(&escaped);
    }
}

/// `tool` with anything outside `[A-Za-z0-9_]` replaced, borrowed when
/// it is already safe (every registered name is).
fn tag_safe(tool: &str) -> Cow<'_, str> {
    let is_safe = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if !tool.is_empty() && tool.len() <= 128 && tool.chars().all(is_safe) {
        return Cow::Borrowed(tool);
    }
    let safe: String = tool
        .chars()
        .take(128)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        Cow::Borrowed("_")
    } else {
        Cow::Owned(safe)
    }
}

fn scalar_text(value: &Scalar) -> String {
    value.to_string()
}

/// A parsed envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The tool named in the tags.
    pub tool: String,
    /// The header attributes in order, `status` first.
    pub attributes: Vec<(String, String)>,
    /// The text between the tags, unescaped: the ability's body for a
    /// success; for an error its message, then its `hint:`, `valid values:`
    /// and `retry:` lines as the model reads them.
    pub content: String,
    /// For an error, its parts as the ability gave them.
    pub error: Option<ErrorContent>,
}

/// Why a text is not an envelope.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EnvelopeError {
    /// The first line is not `[tool(key=value, ...)]`.
    #[error("the first line is not an envelope header `[tool(status=...)]`")]
    BadHeader,
    /// The last line is not `[end:tool]` for the same tool.
    #[error("the last line is not `[end:{0}]`")]
    BadFooter(String),
    /// An error's `hint:`, `valid values:` or `retry:` line does not read.
    #[error("an error's `hint:`, `valid values:` or `retry:` line is not as rendered")]
    BadErrorLines,
}

impl Envelope {
    /// Parses envelope text produced by [`render_envelope`].
    pub fn parse(text: &str) -> Result<Self, EnvelopeError> {
        let (first, rest) = text.split_once('\n').ok_or(EnvelopeError::BadHeader)?;
        let (tool, attributes) = header::parse(first).ok_or(EnvelopeError::BadHeader)?;
        // Rendering writes "header\ncontent\n[end:tool]", so the rest is the
        // content followed by the footer, even when the content is empty.
        let footer = format!("\n[end:{tool}]");
        let Some(content) = rest.strip_suffix(&footer) else {
            return Err(EnvelopeError::BadFooter(tool));
        };
        let is_error = attributes
            .first()
            .is_some_and(|(key, value)| key == "status" && value == "error");
        let (content, error) = if is_error {
            let (error, lines) =
                error::parse_content(content).ok_or(EnvelopeError::BadErrorLines)?;
            (format!("{}{lines}", error.message), Some(error))
        } else {
            (unescape_body(content), None)
        };
        Ok(Self {
            tool,
            attributes,
            content,
            error,
        })
    }

    /// The value of header attribute `key`.
    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(existing, _)| existing == key)
            .map(|(_, value)| value.as_str())
    }

    /// Whether the status is `success`.
    pub fn is_success(&self) -> bool {
        self.attribute("status") == Some("success")
    }

    /// The error code, for an error.
    pub fn code(&self) -> Option<&str> {
        self.error.as_ref().and_then(|_| self.attribute("code"))
    }

    /// The body parsed as JSON, for a success with a JSON body.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&self.content).ok()
    }

    /// The message of an error.
    pub fn message(&self) -> Option<&str> {
        self.error.as_ref().map(|error| error.message.as_str())
    }

    /// The hint of an error, when it gave one.
    pub fn hint(&self) -> Option<&str> {
        self.error
            .as_ref()
            .map(|error| error.hint.as_str())
            .filter(|hint| !hint.is_empty())
    }

    /// The valid values of an error; empty when it listed none.
    pub fn valid_values(&self) -> &[String] {
        self.error
            .as_ref()
            .map_or(&[], |error| error.valid_values.as_slice())
    }

    /// The retry advice of an error.
    pub fn retry(&self) -> Option<Retry> {
        self.error.as_ref().and_then(|error| error.retry)
    }
}
