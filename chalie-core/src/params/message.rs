//! Messages built during constant evaluation, for the compile-time checks
//! generated code runs: no allocation, whole characters only.

/// Room for one message: the field, its type, the literal and an enum's
/// values. Longer text is cut at a character boundary, never lost whole.
pub(crate) const CAPACITY: usize = 1024;

/// A message built during constant evaluation.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct ConstMessage {
    bytes: [u8; CAPACITY],
    len: usize,
}

impl ConstMessage {
    pub(crate) const fn new() -> Self {
        Self {
            bytes: [0; CAPACITY],
            len: 0,
        }
    }

    pub(crate) const fn push(mut self, text: &str) -> Self {
        let text = text.as_bytes();
        let mut index = 0;
        // Whole characters only, so the bytes stay valid UTF-8.
        let mut end = text.len();
        if self.len + end > CAPACITY {
            end = CAPACITY - self.len;
            while end > 0 && (text[end] & 0b1100_0000) == 0b1000_0000 {
                end -= 1;
            }
        }
        while index < end {
            self.bytes[self.len] = text[index];
            self.len += 1;
            index += 1;
        }
        self
    }

    /// `values`, each in backticks, separated by commas.
    pub(crate) const fn push_list(mut self, values: &[&str]) -> Self {
        let mut index = 0;
        while index < values.len() {
            if index > 0 {
                self = self.push(", ");
            }
            self = self.push("`").push(values[index]).push("`");
            index += 1;
        }
        self
    }

    pub(crate) const fn push_int(self, value: i128) -> Self {
        let mut digits = [0u8; 40];
        let mut start = digits.len();
        let negative = value < 0;
        let mut rest = value.unsigned_abs();
        loop {
            start -= 1;
            digits[start] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        if negative {
            start -= 1;
            digits[start] = b'-';
        }
        let (_, tail) = digits.split_at(start);
        match core::str::from_utf8(tail) {
            Ok(text) => self.push(text),
            Err(_) => self,
        }
    }

    /// The message text.
    pub const fn as_str(&self) -> &str {
        let (text, _) = self.bytes.split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(text) => text,
            Err(_) => "invalid default",
        }
    }
}

/// Fails the constant evaluation it runs in with `problem`'s message, or
/// does nothing. The macros' compile-time checks call it with the user's
/// tokens as the call's span; `#[track_caller]` reports the failure there,
/// not in this function, and each check is one call in the generated code
/// rather than a `match` and a `panic!` of its own to compile.
#[doc(hidden)]
#[track_caller]
pub const fn fail_on(problem: Option<ConstMessage>) {
    if let Some(problem) = problem {
        panic!("{}", problem.as_str());
    }
}
