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
/// written inline, since it is made on every such call and copied to its
/// bound turn and its trail entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NumberedId {
    /// `call-` and at most 20 digits, right-aligned.
    text: [u8; 25],
    start: u8,
}

impl NumberedId {
    pub(crate) fn new(number: u64) -> Self {
        // Written back to front, two digits a step, without the formatting
        // machinery.
        const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
            2021222324252627282930313233343536373839\
            4041424344454647484950515253545556575859\
            6061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899";
        let mut text = [0u8; 25];
        let mut start = text.len();
        let mut rest = number;
        while rest >= 100 {
            let pair = (rest % 100) as usize * 2;
            rest /= 100;
            start -= 2;
            text[start..start + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if rest >= 10 {
            let pair = rest as usize * 2;
            start -= 2;
            text[start..start + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            start -= 1;
            text[start] = b'0' + rest as u8;
        }
        start -= 5;
        text[start..start + 5].copy_from_slice(b"call-");
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
