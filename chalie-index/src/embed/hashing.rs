//! A deterministic bag-of-words embedder for tests: no model files, same vector every run.

use super::{Embedder, l2_normalise};
use crate::error::EmbedError;

/// Hashed bag of lower-cased words, for tests only: it knows no synonyms, so texts are
/// close exactly when they share words. Use it where a test must not depend on the model.
#[derive(Clone, Debug)]
pub struct HashingEmbedder {
    dimensions: usize,
}

impl HashingEmbedder {
    /// An embedder producing vectors of `dimensions` (at least 8) components.
    pub fn new(dimensions: usize) -> Self {
        HashingEmbedder {
            dimensions: dimensions.max(8),
        }
    }
}

impl Default for HashingEmbedder {
    fn default() -> Self {
        HashingEmbedder::new(256)
    }
}

/// FNV-1a: tiny, stable across platforms and Rust versions (unlike `DefaultHasher`).
fn fnv1a(word: &str) -> u64 {
    word.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Embedder for HashingEmbedder {
    fn model_id(&self) -> &str {
        "chalie-test/hashed-bag-of-words"
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn weight_hash(&self) -> &str {
        "none"
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|text| {
                let mut vector = vec![0.0; self.dimensions];
                let words = text
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|word| !word.is_empty());
                for word in words {
                    let hash = fnv1a(&word.to_lowercase());
                    let slot = (hash % self.dimensions as u64) as usize;
                    vector[slot] += if hash >> 63 == 0 { 1.0 } else { -1.0 };
                }
                l2_normalise(&mut vector);
                vector
            })
            .collect())
    }
}
