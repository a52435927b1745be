//! `ToolResult`: the one value every ability returns.

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// What an ability returns: a success or an error, never wire text.
///
/// A frozen value with exactly two constructors, [`ToolResult::success`]
/// and [`ToolResult::error`]; the `with_*` methods only add optional parts.
/// The dispatcher renders it into the envelope the model reads
/// ([`render_envelope`](crate::envelope::render_envelope)); errors are data for the
/// model, never a crashed turn.
#[derive(Debug, Clone, PartialEq)]
#[must_use = "an ability returns its ToolResult"]
pub struct ToolResult {
    outcome: Outcome,
    metadata: Vec<(String, Scalar)>,
}

#[derive(Debug, Clone, PartialEq)]
// Both rare parts are boxed: a result moves through several layers of the
// dispatcher on every call, and the common success stays small to move.
enum Outcome {
    Success {
        body: Body,
        media: Option<Box<Media>>,
        card: Option<Box<Value>>,
    },
    Error(Box<ToolError>),
}

impl ToolResult {
    /// A success whose body is shown to the model: a string verbatim, or a
    /// JSON value rendered compactly.
    ///
    /// ```
    /// use chalie_core::ToolResult;
    /// let text = ToolResult::success("3 events today");
    /// let json = ToolResult::success(serde_json::json!({ "count": 3 }));
    /// # let _ = (text, json);
    /// ```
    pub fn success(body: impl Into<Body>) -> Self {
        Self {
            outcome: Outcome::Success {
                body: body.into(),
                media: None,
                card: None,
            },
            metadata: Vec::new(),
        }
    }

    /// An error the model can act on: a kebab-case `code` to match on, a
    /// `message` saying what went wrong and a one-line `hint` saying how to
    /// recover.
    ///
    /// A literal code inside an `#[ability]` function is checked at compile
    /// time; a code built at run time that is not kebab-case is normalised
    /// (see [`ErrorCode`]).
    pub fn error(
        code: impl Into<ErrorCode>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            outcome: Outcome::Error(Box::new(ToolError {
                code: code.into(),
                message: message.into(),
                hint: hint.into(),
                valid_values: Vec::new(),
                retry: None,
            })),
            metadata: Vec::new(),
        }
    }

    /// Adds a rich-media payload for a UI; the model never sees it. Only a
    /// success carries media; on an error this does nothing.
    pub fn with_media(mut self, media: Media) -> Self {
        if let Outcome::Success { media: slot, .. } = &mut self.outcome {
            *slot = Some(Box::new(media));
        }
        self
    }

    /// Adds what a UI's card for this call shows (a title, a count, the
    /// items it touched); the model never sees it. Session events carry it
    /// on `tool.completed` and a session's history keeps it, so a client
    /// rebuilds the card after a reload. Only a success carries a card; on
    /// an error this does nothing.
    ///
    /// The card is made safe to show here, once: every string (keys too)
    /// loses its control characters (newlines and tabs stay) and the
    /// bidirectional overrides that can disguise text; a card still longer
    /// than [`CARD_MAX_BYTES`] as compact JSON is replaced by
    /// `{"omitted": "card-too-large", "bytes": N, "limit": CARD_MAX_BYTES}`,
    /// so the event stays small and the UI can say why nothing is shown.
    ///
    /// ```
    /// use chalie_core::ToolResult;
    /// use serde_json::json;
    ///
    /// let result = ToolResult::success("3 tasks")
    ///     .with_card(json!({ "title": "Open tasks\u{7}", "count": 3 }));
    /// assert_eq!(result.card(), Some(&json!({ "title": "Open tasks", "count": 3 })));
    /// ```
    pub fn with_card(mut self, card: impl Into<Value>) -> Self {
        if let Outcome::Success { card: slot, .. } = &mut self.outcome {
            *slot = Some(Box::new(bounded_card(card.into())));
        }
        self
    }

    /// Adds one flat scalar to the envelope header, e.g. `count=3`. Keys are
    /// snake_case words; other characters are replaced by `_`. A key given
    /// twice keeps the last value.
    pub fn with_metadata(mut self, key: &str, value: impl Into<Scalar>) -> Self {
        let key = metadata_key(key);
        self.metadata.retain(|(existing, _)| *existing != key);
        self.metadata.push((key, value.into()));
        self
    }

    /// Adds the values that would make the call valid. Only an error carries
    /// them; on a success this does nothing.
    pub fn with_valid_values<S: Into<String>>(
        mut self,
        values: impl IntoIterator<Item = S>,
    ) -> Self {
        if let Outcome::Error(error) = &mut self.outcome {
            error.valid_values = values.into_iter().map(Into::into).collect();
        }
        self
    }

    /// Says whether retrying can help, and when. Only an error carries it.
    pub fn with_retry(mut self, retry: Retry) -> Self {
        if let Outcome::Error(error) = &mut self.outcome {
            error.retry = Some(retry);
        }
        self
    }

    /// Whether this is a success.
    pub fn is_success(&self) -> bool {
        matches!(self.outcome, Outcome::Success { .. })
    }

    /// The body of a success.
    pub fn body(&self) -> Option<&Body> {
        match &self.outcome {
            Outcome::Success { body, .. } => Some(body),
            Outcome::Error(_) => None,
        }
    }

    /// The media of a success.
    pub fn media(&self) -> Option<&Media> {
        match &self.outcome {
            Outcome::Success { media, .. } => media.as_deref(),
            Outcome::Error(_) => None,
        }
    }

    /// The card of a success, as [`with_card`](Self::with_card) made it
    /// safe to show.
    pub fn card(&self) -> Option<&Value> {
        match &self.outcome {
            Outcome::Success { card, .. } => card.as_deref(),
            Outcome::Error(_) => None,
        }
    }

    /// The error, if this is one.
    pub fn as_error(&self) -> Option<&ToolError> {
        match &self.outcome {
            Outcome::Error(error) => Some(&**error),
            Outcome::Success { .. } => None,
        }
    }

    /// The header metadata, in insertion order.
    pub fn metadata(&self) -> &[(String, Scalar)] {
        &self.metadata
    }
}

/// The longest card, as compact JSON, that [`ToolResult::with_card`]
/// keeps: a card is a summary for a UI, and it travels in every
/// `tool.completed` event and the session's history.
pub const CARD_MAX_BYTES: usize = 4096;

/// The card as a UI may show it: strings cleaned, size bounded. The one
/// place the card rule lives; events and stores carry its output as is.
fn bounded_card(card: Value) -> Value {
    let card = sanitized(card);
    let bytes = serde_json::to_string(&card).map_or(usize::MAX, |text| text.len());
    if bytes <= CARD_MAX_BYTES {
        return card;
    }
    serde_json::json!({ "omitted": "card-too-large", "bytes": bytes, "limit": CARD_MAX_BYTES })
}

fn sanitized(value: Value) -> Value {
    match value {
        Value::String(text) => Value::String(shown_text(&text)),
        Value::Array(items) => Value::Array(items.into_iter().map(sanitized).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(key, value)| (shown_text(&key), sanitized(value)))
                .collect(),
        ),
        scalar => scalar,
    }
}

/// `text` without what a terminal or a page would act on rather than show:
/// control characters other than newline and tab, and the bidirectional
/// embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069).
fn shown_text(text: &str) -> String {
    text.chars()
        .filter(|c| {
            let control = c.is_control() && !matches!(c, '\n' | '\t');
            let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}');
            !control && !bidi
        })
        .collect()
}

fn metadata_key(key: &str) -> String {
    let cleaned: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".into()
    } else {
        cleaned
    }
}

/// The body of a success.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// Shown to the model verbatim.
    Text(String),
    /// Rendered as compact JSON.
    Json(Value),
    /// A value whose serialisation failed; the dispatcher reports it as a
    /// `non-canonical-result` error instead of showing it.
    Unserializable(String),
}

impl Body {
    /// Serialises any serde value; a failure becomes [`Body::Unserializable`].
    pub fn json(value: &impl Serialize) -> Self {
        match serde_json::to_value(value) {
            Ok(value) => Body::Json(value),
            Err(error) => Body::Unserializable(error.to_string()),
        }
    }

    /// The text the model sees.
    pub fn render(&self) -> Cow<'_, str> {
        match self {
            Body::Text(text) => Cow::Borrowed(text),
            // Compact, and with no line separator even inside its strings:
            // the same text the envelope carries.
            Body::Json(value) => {
                let mut text = String::new();
                crate::envelope::push_json(&mut text, value);
                Cow::Owned(text)
            }
            Body::Unserializable(error) => Cow::Owned(format!("(unserializable result: {error})")),
        }
    }
}

impl From<String> for Body {
    fn from(text: String) -> Self {
        Body::Text(text)
    }
}

impl From<&str> for Body {
    fn from(text: &str) -> Self {
        Body::Text(text.to_owned())
    }
}

impl From<Value> for Body {
    fn from(value: Value) -> Self {
        Body::Json(value)
    }
}

/// A rich-media payload for a UI: a MIME type and its data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Media {
    /// E.g. `image/png`, `application/vnd.chalie.card+json`.
    pub mime_type: String,
    /// The payload; binary data as base64 text.
    pub data: Value,
}

impl Media {
    /// A payload of `mime_type`.
    pub fn new(mime_type: impl Into<String>, data: impl Into<Value>) -> Self {
        Self {
            mime_type: mime_type.into(),
            data: data.into(),
        }
    }
}

/// A flat metadata value: strings, numbers and booleans only.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Str(text) => f.write_str(text),
            Scalar::Int(number) => write!(f, "{number}"),
            Scalar::Float(number) => write!(f, "{number}"),
            Scalar::Bool(flag) => write!(f, "{flag}"),
        }
    }
}

macro_rules! scalar_from {
    ($variant:ident: $($ty:ty),*) => {$(
        impl From<$ty> for Scalar {
            fn from(value: $ty) -> Self {
                Scalar::$variant(value.into())
            }
        }
    )*};
}
scalar_from!(Str: String, &str);
scalar_from!(Int: i8, i16, i32, i64, u8, u16, u32);
scalar_from!(Float: f32, f64);
scalar_from!(Bool: bool);

impl From<usize> for Scalar {
    fn from(value: usize) -> Self {
        i64::try_from(value).map_or(Scalar::Float(value as f64), Scalar::Int)
    }
}

impl From<u64> for Scalar {
    fn from(value: u64) -> Self {
        i64::try_from(value).map_or(Scalar::Float(value as f64), Scalar::Int)
    }
}

/// A failed call, as the model reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    code: ErrorCode,
    message: String,
    hint: String,
    valid_values: Vec<String>,
    retry: Option<Retry>,
}

impl ToolError {
    /// The kebab-case code.
    pub fn code(&self) -> &ErrorCode {
        &self.code
    }
    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// How to recover, in one line.
    pub fn hint(&self) -> &str {
        &self.hint
    }
    /// Values that would make the call valid.
    pub fn valid_values(&self) -> &[String] {
        &self.valid_values
    }
    /// Whether retrying helps, and when.
    pub fn retry(&self) -> Option<Retry> {
        self.retry
    }
}

/// Whether retrying the same call can succeed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Retry {
    /// Retrying the same call will fail the same way; change the call.
    Never,
    /// Retrying may succeed now.
    Now,
    /// Retrying may succeed after this many seconds.
    After(f64),
}

/// A kebab-case error code: `^[a-z][a-z0-9]*(-[a-z0-9]+)*$`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ErrorCode(Cow<'static, str>);

/// A string that is not a kebab-case error code.
#[derive(Debug, Clone, thiserror::Error)]
#[error("error code `{0}` is not kebab-case (`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)")]
pub struct InvalidErrorCode(pub String);

impl ErrorCode {
    /// A code from a literal, normalised to kebab-case if it is not (inside
    /// `#[ability]` a non-kebab literal is a compile error instead).
    pub fn new(code: &'static str) -> Self {
        if is_kebab_case(code) {
            Self(Cow::Borrowed(code))
        } else {
            Self(Cow::Owned(kebabize(code)))
        }
    }

    /// A code built at run time, rejected unless already kebab-case.
    pub fn parse(code: impl Into<String>) -> Result<Self, InvalidErrorCode> {
        let code = code.into();
        if is_kebab_case(&code) {
            Ok(Self(Cow::Owned(code)))
        } else {
            Err(InvalidErrorCode(code))
        }
    }

    /// The code as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The code as text that outlives the result: the literal itself when
    /// the code is one, so recording it copies nothing.
    pub(crate) fn to_shared(&self) -> Cow<'static, str> {
        self.0.clone()
    }
}

impl From<&'static str> for ErrorCode {
    fn from(code: &'static str) -> Self {
        Self::new(code)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `code` matches `^[a-z][a-z0-9]*(-[a-z0-9]+)*$`: the rule
/// `#[ability]` checks on literal codes at compile time.
pub use chalie_rules::is_kebab_case;

/// The code `#[ability]` would have suggested for `code` at compile time;
/// `tool-error` when there is none (no letter to start with).
fn kebabize(code: &str) -> String {
    chalie_rules::suggest_kebab_case(code).unwrap_or_else(|| "tool-error".into())
}

/// `error` and its causes in one line, `outer: cause: root`, leaving out a
/// cause whose text the message already holds: what an operator or a model
/// needs when the outer message alone ("error sending request") does not
/// say why (the connection was refused).
///
/// ```
/// use chalie_core::result::error_chain;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("the embedder is unreachable")]
/// struct Unreachable(#[source] std::io::Error);
///
/// let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
/// assert_eq!(
///     error_chain(&Unreachable(refused)),
///     "the embedder is unreachable: connection refused"
/// );
/// ```
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
