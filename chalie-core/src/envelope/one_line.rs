//! Compact JSON written straight into the envelope's `String`, with the
//! line separators JSON leaves raw (NEL, U+2028, U+2029) escaped inside
//! strings, so a JSON body or a quoted value stays one line for every
//! reader.
//!
//! serde_json hands the formatter every piece it writes, string
//! fragments as `&str` and the rest as ASCII: the formatter appends them
//! to the string itself and the serializer's own writer is a sink. The
//! text is then never a byte buffer that must be checked for UTF-8 again
//! before it can be a `String`, which every call would pay for its whole
//! envelope.

use std::io::{self, Write};

use serde_json::ser::{CharEscape, CompactFormatter, Formatter};

/// Appends `value` to `out` as one-line compact JSON.
pub(crate) fn push<T: serde::Serialize + ?Sized>(out: &mut String, value: &T) {
    let mut serializer = serde_json::Serializer::with_formatter(io::sink(), OneLine { out });
    // The sink never fails, nor does appending to a string; only a value
    // serde_json cannot write (a map with non-string keys, which neither a
    // `Value` nor a `str` has) could, and it would leave a partial value.
    let _ = value.serialize(&mut serializer);
}

/// The formatter that appends to `out` and ignores the serializer's writer.
struct OneLine<'a> {
    out: &'a mut String,
}

impl OneLine<'_> {
    /// Writes what serde_json's compact formatter writes (a float or an
    /// escape, ASCII and short) through a stack buffer, so it reads
    /// exactly as serde_json writes it.
    fn compact(&mut self, write: impl FnOnce(&mut &mut [u8]) -> io::Result<()>) -> io::Result<()> {
        // An f64 is at most 24 characters, an escape 6.
        let mut buffer = [0u8; 32];
        let mut rest = &mut buffer[..];
        write(&mut rest)?;
        let written = 32 - rest.len();
        let text = std::str::from_utf8(&buffer[..written]).map_err(io::Error::other)?;
        self.out.push_str(text);
        Ok(())
    }
}

/// Integers go through `itoa`, as serde_json writes them, straight into
/// the string.
macro_rules! integers {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        fn $method<W: ?Sized + Write>(&mut self, _: &mut W, value: $ty) -> io::Result<()> {
            self.out.push_str(itoa::Buffer::new().format(value));
            Ok(())
        }
    )*};
}

/// Floats through serde_json's own formatter, so they read exactly as
/// serde_json writes them.
macro_rules! floats {
    ($($method:ident: $ty:ty),* $(,)?) => {$(
        fn $method<W: ?Sized + Write>(&mut self, _: &mut W, value: $ty) -> io::Result<()> {
            self.compact(|buffer| CompactFormatter.$method(buffer, value))
        }
    )*};
}

impl Formatter for OneLine<'_> {
    integers!(
        write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64, write_i128: i128,
        write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64, write_u128: u128,
    );
    floats!(write_f32: f32, write_f64: f64);

    fn write_null<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push_str("null");
        Ok(())
    }

    fn write_bool<W: ?Sized + Write>(&mut self, _: &mut W, value: bool) -> io::Result<()> {
        self.out.push_str(if value { "true" } else { "false" });
        Ok(())
    }

    fn write_number_str<W: ?Sized + Write>(&mut self, _: &mut W, value: &str) -> io::Result<()> {
        self.out.push_str(value);
        Ok(())
    }

    fn begin_string<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push('"');
        Ok(())
    }

    fn end_string<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push('"');
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // The three characters are encoded C2 85, E2 80 A8 and E2 80 A9: a
        // fragment with neither lead byte is written whole.
        if !fragment.bytes().any(|byte| byte == 0xC2 || byte == 0xE2) {
            self.out.push_str(fragment);
            return Ok(());
        }
        let mut start = 0;
        for (index, c) in fragment.char_indices() {
            let escape = match c {
                '\u{85}' => "\\u0085",
                '\u{2028}' => "\\u2028",
                '\u{2029}' => "\\u2029",
                _ => continue,
            };
            self.out.push_str(&fragment[start..index]);
            self.out.push_str(escape);
            start = index + c.len_utf8();
        }
        self.out.push_str(&fragment[start..]);
        Ok(())
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        _: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        self.compact(|buffer| CompactFormatter.write_char_escape(buffer, escape))
    }

    fn begin_array<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push('[');
        Ok(())
    }

    fn end_array<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push(']');
        Ok(())
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        if !first {
            self.out.push(',');
        }
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push('{');
        Ok(())
    }

    fn end_object<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push('}');
        Ok(())
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        if !first {
            self.out.push(',');
        }
        Ok(())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.out.push(':');
        Ok(())
    }

    fn write_raw_fragment<W: ?Sized + Write>(
        &mut self,
        _: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        self.out.push_str(fragment);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of value reads exactly as serde_json writes it, but for
    /// the three line separators, escaped.
    #[test]
    fn writes_what_serde_json_writes_with_line_separators_escaped() {
        let value = serde_json::json!({
            "n": null, "t": true, "f": false, "i": -17, "u": u64::MAX, "m": i64::MIN,
            "x": 1.5e300, "y": 0.1, "e": [], "o": {},
            "s": "a\"b\\c\n\t\u{1}\u{7f}é",
            "a": [1, "two", [3.0], {"k": "v"}],
        });
        let mut out = String::from("head:");
        push(&mut out, &value);
        assert_eq!(out, format!("head:{value}"));

        let mut out = String::new();
        push(&mut out, "a\u{85}b\u{2028}c\u{2029}d");
        assert_eq!(out, r#""a\u0085b\u2028c\u2029d""#);
    }
}
