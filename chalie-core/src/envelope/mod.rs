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

mod escape;
mod header;

use std::borrow::Cow;

use crate::result::Scalar;
use crate::{Body, ToolResult};

pub use escape::{escape_body, unescape_body};

/// Renders `result` of the call to `tool` (with its `action`, if any) as the
/// envelope text the model reads.
///
/// `tool` may come from a model (an unknown name); anything outside
/// `[A-Za-z0-9_]` in it is replaced by `_` so the tags stay unforgeable.
pub fn render_envelope(tool: &str, action: Option<&str>, result: &ToolResult) -> String {
    let tool = tag_safe(tool);
    // One string, written once: this runs on every call.
    let mut out = String::with_capacity(128);
    out.push('[');
    out.push_str(&tool);
    out.push('(');
    let error = result.as_error();
    match error {
        None => header::push_attribute(&mut out, true, "status", "success"),
        Some(error) => {
            header::push_attribute(&mut out, true, "status", "error");
            header::push_attribute(&mut out, false, "code", error.code().as_str());
        }
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
    let mut out = match error {
        None => push_body(out, result.body()),
        Some(error) => {
            out.push_str(&error_content(error));
            out
        }
    };
    out.push_str("\n[end:");
    out.push_str(&tool);
    out.push(']');
    out
}

/// Appends a success's body, escaped, to `out`. A JSON body is serialised
/// straight into the envelope rather than into a string of its own.
fn push_body(mut out: String, body: Option<&Body>) -> String {
    let start = out.len();
    match body {
        Some(Body::Json(value)) => {
            let mut bytes = out.into_bytes();
            // A `Value` always serialises (its keys are strings), and as
            // UTF-8; the fallbacks only keep this free of panics.
            if serde_json::to_writer(&mut bytes, value).is_err() {
                bytes.truncate(start);
                bytes.extend_from_slice(value.to_string().as_bytes());
            }
            out = String::from_utf8(bytes)
                .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
        }
        Some(body) => out.push_str(&body.render()),
        None => {}
    }
    // Escaping is rare (no `[` at all is the common case for JSON objects
    // and prose), so it rewrites the body only when it must.
    if let std::borrow::Cow::Owned(escaped) = escape::escape_body_cow(&out[start..]) {
        out.truncate(start);
        out.push_str(&escaped);
    }
    out
}

/// The lines of an error: message, hint, valid values, retry advice.
fn error_content(error: &crate::ToolError) -> String {
    let mut lines = escape::escape_error_message(error.message());
    if !error.hint().trim().is_empty() {
        lines.push_str("\nhint: ");
        lines.push_str(&one_line(error.hint()));
    }
    if !error.valid_values().is_empty() {
        lines.push_str("\nvalid values: ");
        let values: Vec<String> = error
            .valid_values()
            .iter()
            .map(|value| header::quote_if_needed(value, true))
            .collect();
        lines.push_str(&values.join(", "));
    }
    if let Some(retry) = error.retry() {
        lines.push_str(&match retry {
            crate::Retry::Never => "\nretry: no; change the call".to_owned(),
            crate::Retry::Now => "\nretry: yes".to_owned(),
            crate::Retry::After(seconds) => format!("\nretry: after {seconds}s"),
        });
    }
    lines
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

/// Collapses whitespace runs (including newlines) into single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A parsed envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The tool named in the tags.
    pub tool: String,
    /// The header attributes in order, `status` first.
    pub attributes: Vec<(String, String)>,
    /// The body between the tags, unescaped: the ability's body for a
    /// success; message, hint and valid values lines for an error.
    pub content: String,
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
        Ok(Self {
            tool,
            attributes,
            content: unescape_body(content),
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
        self.attribute("code")
    }

    /// The body parsed as JSON, for a success with a JSON body.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&self.content).ok()
    }

    /// The `hint:` line of an error.
    pub fn hint(&self) -> Option<&str> {
        self.content
            .lines()
            .rev()
            .find_map(|line| line.strip_prefix("hint: "))
    }
}
