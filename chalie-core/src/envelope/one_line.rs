//! Compact JSON written straight into the envelope's `String`, with the
//! line separators JSON leaves raw (NEL, U+2028, U+2029) escaped inside
//! strings, so a JSON body or a quoted value stays one line for every
//! reader.
//!
//! The text is exactly what serde_json's compact serializer writes, but
//! for those three escapes (the tests compare the two on generated
//! values). It is written here, one pass over each string, rather than
//! through a serde_json `Formatter`: a body is rendered on every call, and
//! the formatter's path handed each string over in pieces to be scanned
//! again for the separators, through several layers whose inlining moved
//! with unrelated changes.

use std::fmt::Write as _;

use serde_json::{Number, Value};

/// Appends `value` to `out` as one-line compact JSON.
pub(crate) fn push_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(number) => push_number(out, number),
        Value::String(text) => push_string(out, text),
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                push_value(out, item);
            }
            out.push(']');
        }
        Value::Object(object) => {
            out.push('{');
            for (index, (key, item)) in object.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                push_string(out, key);
                out.push(':');
                push_value(out, item);
            }
            out.push('}');
        }
    }
}

/// Integers through `itoa`, as serde_json writes them; any other number
/// through its `Display`, which is what serde_json writes for it (`ryu`
/// for a float, the text itself under `arbitrary_precision`).
fn push_number(out: &mut String, number: &Number) {
    if let Some(unsigned) = number.as_u64() {
        out.push_str(itoa::Buffer::new().format(unsigned));
    } else if let Some(signed) = number.as_i64() {
        out.push_str(itoa::Buffer::new().format(signed));
    } else {
        // Writing to a `String` cannot fail.
        let _ = write!(out, "{number}");
    }
}

/// What a byte of a string needs, looked up once per byte.
const PLAIN: u8 = 0;
/// A control character without a short escape: `\u00XX`.
const CONTROL: u8 = 1;
/// The lead byte of a character that may be a line separator.
const LEAD: u8 = 2;

/// Per byte: `PLAIN`, `CONTROL`, `LEAD`, or the letter of its short
/// escape (`"` and `\` escape as themselves).
const ESCAPE: [u8; 256] = {
    let mut table = [PLAIN; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = CONTROL;
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[0xC2] = LEAD;
    table[0xE2] = LEAD;
    table
};

/// Appends `text` as a JSON string: serde_json's escapes, and NEL, U+2028
/// and U+2029 as `\uXXXX`.
pub(crate) fn push_string(out: &mut String, text: &str) {
    out.push('"');
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        // Most bytes need nothing: one lookup each.
        if ESCAPE[usize::from(byte)] == PLAIN {
            index += 1;
            continue;
        }
        match push_escape(out, text, start, index) {
            Some(after) => {
                index = after;
                start = after;
            }
            None => index += 1,
        }
    }
    out.push_str(&text[start..]);
    out.push('"');
}

/// Appends `text[start..index]` and the escape of the character at
/// `index`, returning where the text goes on; `None` (nothing appended)
/// when that character is written as it is (a lead byte of another
/// character).
#[cold]
fn push_escape(out: &mut String, text: &str, start: usize, index: usize) -> Option<usize> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    let byte = *bytes.get(index)?;
    let mut short = [b'\\', b'u', b'0', b'0', 0, 0];
    let (escape, width): (&[u8], usize) = match ESCAPE[usize::from(byte)] {
        PLAIN => return None,
        CONTROL => {
            short[4] = HEX[usize::from(byte >> 4)];
            short[5] = HEX[usize::from(byte & 0xF)];
            (&short, 1)
        }
        LEAD => match (byte, bytes.get(index + 1), bytes.get(index + 2)) {
            (0xC2, Some(0x85), _) => (b"\\u0085", 2),
            (0xE2, Some(0x80), Some(0xA8)) => (b"\\u2028", 3),
            (0xE2, Some(0x80), Some(0xA9)) => (b"\\u2029", 3),
            _ => return None,
        },
        letter => {
            short[1] = letter;
            (&short[..2], 1)
        }
    };
    // `index` is at an ASCII byte or a lead byte: a character boundary.
    out.push_str(text.get(start..index)?);
    out.extend(escape.iter().map(|&escaped| char::from(escaped)));
    Some(index + width)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What serde_json writes, with the three line separators escaped.
    fn expected(value: &Value) -> String {
        value
            .to_string()
            .replace('\u{85}', "\\u0085")
            .replace('\u{2028}', "\\u2028")
            .replace('\u{2029}', "\\u2029")
    }

    /// Every kind of value reads exactly as serde_json writes it, but for
    /// the three line separators, escaped.
    #[test]
    fn writes_what_serde_json_writes_with_line_separators_escaped() {
        let value = serde_json::json!({
            "n": null, "t": true, "f": false, "i": -17, "u": u64::MAX, "m": i64::MIN,
            "x": 1.5e300, "y": 0.1, "z": -0.0, "e": [], "o": {},
            "s": "a\"b\\c\n\t\u{1}\u{7f}\u{1f}\u{8}\u{c}\ré",
            "a": [1, "two", [3.0], {"k": "v"}],
        });
        let mut out = String::from("head:");
        push_value(&mut out, &value);
        assert_eq!(out, format!("head:{value}"));

        let mut out = String::new();
        push_string(&mut out, "a\u{85}b\u{2028}c\u{2029}d\u{c2}\u{e2}\u{2027}");
        assert_eq!(out, "\"a\\u0085b\\u2028c\\u2029d\u{c2}\u{e2}\u{2027}\"");
        let line: Value = serde_json::from_str(&out).expect("valid JSON");
        assert_eq!(line, "a\u{85}b\u{2028}c\u{2029}d\u{c2}\u{e2}\u{2027}");
    }

    /// Any JSON value: strings from the whole of Unicode with the
    /// characters that need escapes made common.
    fn any_value() -> impl Strategy<Value = Value> {
        let text = proptest::collection::vec(
            prop_oneof![
                any::<char>(),
                prop::sample::select(vec![
                    '"', '\\', '\n', '\r', '\t', '\u{0}', '\u{1f}', '\u{7f}', '\u{85}', '\u{2028}',
                    '\u{2029}', '\u{a0}', '\u{2000}', 'é',
                ]),
            ],
            0..12,
        )
        .prop_map(|chars| chars.into_iter().collect::<String>());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text.clone().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((text.clone(), inner), 0..4)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// The text is serde_json's, but for the escaped separators, and
        /// it reads back as the same value.
        #[test]
        fn any_value_is_serde_jsons_text_on_one_line(value in any_value()) {
            let mut out = String::new();
            push_value(&mut out, &value);
            prop_assert_eq!(&out, &expected(&value));
            let separators = ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'];
            prop_assert!(!out.contains(separators), "a line separator in {}", out);
            let back: Value = serde_json::from_str(&out).expect("valid JSON");
            prop_assert_eq!(back, value);
        }
    }
}
