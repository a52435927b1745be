//! Turning prose into unit vectors. The index only sees the [`Embedder`] trait, so the
//! default model can be swapped (or faked in tests) without touching the engine.

#[cfg(feature = "engine")]
mod bert;
mod hashing;
#[cfg(feature = "engine")]
mod minilm;
#[cfg(feature = "openai")]
mod openai;
#[cfg(feature = "engine")]
mod ops;

pub use hashing::HashingEmbedder;
#[cfg(feature = "engine")]
pub use minilm::{EncoderWork, MINILM_DIR_NAME, MINILM_FILES, MiniLm};
#[cfg(feature = "openai")]
pub use openai::{DEFAULT_BATCH_SIZE, OpenAiEmbedder, OpenAiEmbedderBuilder};

use crate::error::EmbedError;

/// A sentence embedder. Vectors must be L2-normalised: the index compares them by cosine.
pub trait Embedder: Send + Sync {
    /// Stable identifier of the model, recorded in the manifest.
    fn model_id(&self) -> &str;
    /// Length of every vector.
    fn dimensions(&self) -> usize;
    /// Hex sha256 of the weights (for a model behind an endpoint, of what the endpoint
    /// reports about it), recorded in the manifest so a swapped model is noticed.
    fn weight_hash(&self) -> &str;
    /// Embeds each text; the output has one vector per input, in order.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Scales `vector` to unit length in place; a zero vector stays zero.
pub(crate) fn l2_normalise(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > f32::EPSILON {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}
