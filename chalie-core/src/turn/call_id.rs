//! The names a turn and its trail entries carry, and the ids the
//! dispatcher numbers for calls that came without one.

use std::sync::Arc;

/// A name a turn or a trail entry carries: the registry's own, shared
/// between clones, moved in, or a call id the dispatcher numbered.
#[derive(Debug, Clone)]
pub(crate) enum Name {
    Static(&'static str),
    Shared(Arc<str>),
    Owned(String),
    Numbered(NumberedId),
}

impl std::ops::Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Name::Static(name) => name,
            Name::Shared(name) => name,
            Name::Owned(name) => name,
            Name::Numbered(id) => id.as_str(),
        }
    }
}

/// `call-` and a number, the id of a call that came without a provider's:
/// kept inline rather than in a `String`, since it is made on every such
/// call and copied to its bound turn and its trail entry; `itoa` writes the
/// digits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NumberedId {
    /// `call-` and at most 20 digits, right-aligned.
    text: [u8; 25],
    start: u8,
}

impl NumberedId {
    pub(crate) fn new(number: u64) -> Self {
        const PREFIX: &[u8] = b"call-";
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(number).as_bytes();
        let mut text = [0u8; 25];
        let start = text.len() - digits.len() - PREFIX.len();
        text[start..start + PREFIX.len()].copy_from_slice(PREFIX);
        text[start + PREFIX.len()..].copy_from_slice(digits);
        Self {
            text,
            start: start as u8,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        // ASCII by construction; the fallback only keeps this free of panics.
        std::str::from_utf8(&self.text[usize::from(self.start)..]).unwrap_or("call")
    }
}

#[cfg(test)]
mod tests {
    use super::NumberedId;

    #[test]
    fn numbered_ids_read_like_the_formatted_ones() {
        for number in (0..10_001).chain([u64::MAX / 7, u64::MAX]) {
            assert_eq!(NumberedId::new(number).as_str(), format!("call-{number}"));
        }
    }
}
