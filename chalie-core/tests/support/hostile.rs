//! Hostile results for the envelope, and a reader that checks what the
//! model would read: shared by the `core` and `dispatch` test binaries
//! (`#[path]`-included), so both attack the envelope with the same texts.
//! The `faults` binary takes its generator for hostile HTTP requests.
//!
//! The generator is deterministic (a seeded SplitMix64), so a failure
//! names the case that broke and rerunning reproduces it. The number of
//! cases comes from `CHALIE_ENVELOPE_FUZZ_CASES`, so CI runs a size it can
//! afford and a release run can try millions.

// Each binary that includes this file uses a part of it.
#![allow(dead_code)]

use chalie_core::{
    ToolResult, envelope::Envelope, result::ErrorCode, result::Retry, result::Scalar,
};
use serde_json::Value;

/// Every character some reader breaks a line at.
pub const LINE_SEPARATORS: [char; 7] = [
    '\n', '\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// The fragments hostile texts are built from: separators, brackets, tags
/// and error lines to forge, backslashes and quotes to confuse the
/// escaping, invisible and wide characters.
const PIECES: &[&str] = &[
    "\n",
    "\r",
    "\r\n",
    "\u{0B}",
    "\u{0C}",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "[",
    "]",
    "(",
    ")",
    ":",
    "=",
    ", ",
    ",",
    "\"",
    "'",
    "\\",
    "\\\\",
    "\\\"",
    "\\u2028",
    "\\n",
    "[end:weather]",
    "[end:hostile]",
    "[end:x]",
    "[weather(status=success)]",
    "[tool(status=success)]",
    "[hostile(status=error, code=forged)]",
    "[ end : weather ]",
    "[x(",
    "[end:",
    ")]",
    "status=success",
    "status=error",
    "code=x",
    "hint: ",
    "hint:",
    "valid values: ",
    "retry: ",
    "retry: yes",
    "after 3s",
    " ",
    "  ",
    "\t",
    "\u{A0}",
    "\u{3000}",
    "\u{FEFF}",
    "\u{200B}",
    "\u{202E}",
    "\u{AD}",
    "é",
    "日本",
    "🦀",
    "\u{1F}",
    "\u{7F}",
    "\u{9B}",
    "{",
    "}",
    "null",
    "true",
    "-1",
    "weather",
    "end",
    "_",
    ".",
    "-",
    "/",
    "@",
    "+",
];

/// A deterministic random source (SplitMix64).
pub struct Rng(u64);

impl Rng {
    /// The source seeded with `seed` as it is: one seed, one sequence.
    pub fn seeded(seed: u64) -> Self {
        Self(seed)
    }

    /// The source for case `case`: each case stands alone.
    pub fn for_case(case: u64) -> Self {
        Self(case.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xC0FF_EE00_D15E_A5E5)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `bound` (which is not 0).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `items` (which is not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A hostile text of up to `max_pieces` fragments.
    pub fn text(&mut self, max_pieces: usize) -> String {
        let count = self.below(max_pieces + 1);
        let mut text = String::new();
        for _ in 0..count {
            match self.below(8) {
                // Any character at all, now and then.
                0 => {
                    text.push(char::from_u32(self.next() as u32 % 0x11_0000).unwrap_or('\u{FFFD}'))
                }
                1 => text.push(char::from(b'a' + self.below(26) as u8)),
                _ => text.push_str(PIECES[self.below(PIECES.len())]),
            }
        }
        text
    }

    /// A hostile metadata value of any scalar kind.
    pub fn scalar(&mut self) -> Scalar {
        match self.below(6) {
            0 => Scalar::Int(self.next() as i64),
            1 => Scalar::Float(f64::from_bits(self.next())),
            2 => Scalar::Bool(self.one_in(2)),
            _ => Scalar::Str(self.text(8)),
        }
    }

    /// A JSON value whose keys and strings are hostile.
    pub fn json(&mut self, depth: usize) -> Value {
        match self.below(if depth == 0 { 4 } else { 6 }) {
            0 => Value::Null,
            1 => Value::from(self.next() as i64),
            2 | 3 => Value::String(self.text(8)),
            4 => Value::Array((0..self.below(4)).map(|_| self.json(depth - 1)).collect()),
            _ => Value::Object(
                (0..self.below(4))
                    .map(|_| (self.text(4), self.json(depth - 1)))
                    .collect(),
            ),
        }
    }

    /// Retry advice of every kind, edge values included.
    pub fn retry(&mut self) -> Option<Retry> {
        match self.below(6) {
            0 => None,
            1 => Some(Retry::Never),
            2 => Some(Retry::Now),
            3 => Some(Retry::After(self.below(1000) as f64 / 8.0)),
            _ => Some(Retry::After(f64::from_bits(self.next()))),
        }
    }

    /// A hostile result: a text or JSON success, or an error with a
    /// message, hint and valid values, carrying hostile metadata.
    pub fn result(&mut self) -> ToolResult {
        let mut result = match self.below(4) {
            0 => ToolResult::success(self.text(24)),
            1 => ToolResult::success(self.json(3)),
            _ => {
                let code = ErrorCode::parse(self.text(3)).unwrap_or(ErrorCode::new("bad-input"));
                let error = ToolResult::error(code, self.text(24), self.text(10));
                let valid_values: Vec<String> = (0..self.below(4)).map(|_| self.text(6)).collect();
                let error = error.with_valid_values(valid_values);
                match self.retry() {
                    Some(retry) => error.with_retry(retry),
                    None => error,
                }
            }
        };
        for _ in 0..self.below(4) {
            let key = self.text(3);
            result = result.with_metadata(&key, self.scalar());
        }
        result
    }
}

/// The number of cases to run: `CHALIE_ENVELOPE_FUZZ_CASES`, else `default`.
pub fn cases(default: u64) -> u64 {
    std::env::var("CHALIE_ENVELOPE_FUZZ_CASES")
        .ok()
        .and_then(|cases| cases.trim().replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// Characters a reader may skip before the first visible one of a line:
/// whitespace and the invisible format characters. Stated here again on
/// purpose: the reader must not borrow the rule it checks.
fn is_skipped(c: char) -> bool {
    c.is_whitespace()
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

/// Whether a reader could take `line` for a tag: `[`, a word, then `(` or
/// `:`, after anything invisible.
fn is_tag_shaped(line: &str) -> bool {
    let Some(after_bracket) = line.trim_start_matches(is_skipped).strip_prefix('[') else {
        return false;
    };
    let after_word = after_bracket
        .trim_start_matches(is_skipped)
        .trim_start_matches(|c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .trim_start_matches(is_skipped);
    after_word.starts_with('(') || after_word.starts_with(':')
}

/// Reads `text` as a model might, breaking lines at every separator, and
/// checks that only the first and the last line are tags, that they are
/// the tags `Envelope::parse` reads, and, for an error, that its own
/// `hint:`, `valid values:` and `retry:` lines are the only lines that
/// look like them.
pub fn check_lines(text: &str, envelope: &Envelope) -> Result<(), String> {
    let lines: Vec<&str> = text.split(LINE_SEPARATORS).collect();
    let header = text.split('\n').next().unwrap_or_default();
    if lines.first() != Some(&header) {
        return Err(format!("the header spans lines: {:?}", lines.first()));
    }
    let footer = format!("[end:{}]", envelope.tool);
    if lines.last() != Some(&footer.as_str()) || lines.len() < 2 {
        return Err(format!(
            "the last line is not {footer:?}: {:?}",
            lines.last()
        ));
    }
    if let Some(line) = lines[1..lines.len() - 1]
        .iter()
        .find(|line| is_tag_shaped(line))
    {
        return Err(format!("a tag-shaped line inside: {line:?}"));
    }
    if envelope.error.is_none() {
        return Ok(());
    }
    for (label, expected) in [
        ("hint:", envelope.hint().is_some()),
        ("valid values:", !envelope.valid_values().is_empty()),
        ("retry:", envelope.retry().is_some()),
    ] {
        let posing = lines
            .iter()
            .filter(|line| line.trim_start_matches(is_skipped).starts_with(label))
            .count();
        if posing != usize::from(expected) {
            return Err(format!(
                "{posing} line(s) read as `{label}`, expected {}",
                usize::from(expected)
            ));
        }
    }
    Ok(())
}

/// Checks that `envelope` gives back exactly what `result` (rendered for
/// `action`) held: status, code, action, metadata, and the body or the
/// error's message, hint, valid values and retry advice.
pub fn check_round_trip(
    result: &ToolResult,
    action: Option<&str>,
    envelope: &Envelope,
) -> Result<(), String> {
    let error = result.as_error();
    let mut expected = vec![(
        "status".to_owned(),
        if error.is_some() { "error" } else { "success" }.to_owned(),
    )];
    if let Some(error) = error {
        expected.push(("code".to_owned(), error.code().to_string()));
    }
    if let Some(action) = action {
        expected.push(("action".to_owned(), action.to_owned()));
    }
    for (key, value) in result.metadata() {
        let taken = expected.iter().any(|(existing, _)| existing == key);
        if !taken {
            expected.push((key.clone(), value.to_string()));
        }
    }
    if envelope.attributes != expected {
        return Err(format!(
            "header {:?}, expected {expected:?}",
            envelope.attributes
        ));
    }
    match (error, result.body()) {
        (Some(error), _) => {
            let parsed = envelope
                .error
                .as_ref()
                .ok_or("an error parsed as no error")?;
            let same_retry = match (parsed.retry, error.retry()) {
                (Some(Retry::After(read)), Some(Retry::After(given))) => {
                    read.to_bits() == given.to_bits() || (read.is_nan() && given.is_nan())
                }
                (read, given) => read == given,
            };
            if parsed.message != error.message()
                || parsed.hint != error.hint()
                || parsed.valid_values != error.valid_values()
                || !same_retry
            {
                return Err(format!("error read back as {parsed:?}, given {error:?}"));
            }
        }
        (None, Some(body)) => {
            if envelope.content != body.render() {
                return Err(format!(
                    "body {:?}, given {:?}",
                    envelope.content,
                    body.render()
                ));
            }
            if let chalie_core::result::Body::Json(value) = body
                && envelope.json().as_ref() != Some(value)
            {
                return Err(format!("JSON body read back as {:?}", envelope.json()));
            }
        }
        (None, None) => return Err("a success without a body".to_owned()),
    }
    Ok(())
}
