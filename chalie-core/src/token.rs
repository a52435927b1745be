//! Unguessable identifiers for what a remote caller hands back: a session
//! id, an MCP approval's `requestState`. One way to make them, so every
//! such id is as hard to guess as the others.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// 128 bits as 32 lowercase hex digits, from two freshly seeded hashers
/// (the process's random keys) over a counter: unique in the process, and
/// not guessable from another token it made.
pub(crate) fn fresh_token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let count = NEXT.fetch_add(1, Ordering::Relaxed);
    let half = |salt: u64| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(count);
        hasher.write_u64(salt);
        hasher.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

#[cfg(test)]
mod tests {
    use super::fresh_token;

    #[test]
    fn a_token_is_128_bits_and_never_repeats() {
        let first = fresh_token();
        let second = fresh_token();
        assert_eq!(first.len(), 32);
        assert!(first.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(first, second);
    }
}
