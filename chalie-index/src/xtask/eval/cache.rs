//! The eval's embedding cache: each text embedded once per run, and with `--cache` once
//! across runs.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use std::sync::Arc;

use crate::{EmbedError, Embedder};

/// Memoises embeddings: every text is embedded once, then looked up by each of the runs
/// (cascade, cascade without gold tools, raw ranking). With `--cache DIR` the vectors stay
/// on disk between runs, in a file named after the model's weight hash.
pub(super) struct CachingEmbedder {
    inner: Arc<dyn Embedder>,
    cache: Mutex<HashMap<String, Vec<f32>>>,
    file: Option<PathBuf>,
}

fn poisoned<T>(_: T) -> EmbedError {
    EmbedError::Inference("cache poisoned".into())
}

impl CachingEmbedder {
    pub(super) fn new(
        inner: Arc<dyn Embedder>,
        dir: Option<PathBuf>,
    ) -> Result<Self, super::super::BoxError> {
        let file = dir.map(|d| {
            d.join(format!(
                "{}.vectors",
                inner.weight_hash().get(..16).unwrap_or("embedder")
            ))
        });
        let mut cache = HashMap::new();
        if let Some(bytes) = file.as_ref().and_then(|f| std::fs::read(f).ok()) {
            // Records: u32 text length, the text, then `dimensions` f32, all little-endian.
            let dims = inner.dimensions();
            let mut rest = bytes.as_slice();
            let mut take = |n: usize| -> Result<&[u8], &str> {
                if rest.len() < n {
                    return Err("truncated embedding cache; delete it");
                }
                let (head, tail) = rest.split_at(n);
                rest = tail;
                Ok(head)
            };
            while let Ok(length) = take(4) {
                let length = u32::from_le_bytes(length.try_into()?) as usize;
                let text = String::from_utf8(take(length)?.to_vec())?;
                let vector = take(dims * 4)?
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                cache.insert(text, vector);
            }
        }
        let cache = Mutex::new(cache);
        Ok(CachingEmbedder { inner, cache, file })
    }

    pub(super) fn save(&self) -> Result<(), super::super::BoxError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut bytes = Vec::new();
        for (text, vector) in self.cache.lock().map_err(poisoned)?.iter() {
            bytes.extend((text.len() as u32).to_le_bytes());
            bytes.extend(text.as_bytes());
            vector.iter().for_each(|x| bytes.extend(x.to_le_bytes()));
        }
        std::fs::create_dir_all(file.parent().unwrap_or(Path::new(".")))?;
        Ok(std::fs::write(file, bytes)?)
    }

    pub(super) fn warm(&self, texts: &[&str]) -> Result<(), EmbedError> {
        let progress = super::Progress::new("embedding", texts.len());
        for chunk in texts.chunks(512) {
            self.embed_batch(chunk)?;
            progress.advance(chunk.len());
        }
        Ok(())
    }
}

impl Embedder for CachingEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }
    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }
    fn weight_hash(&self) -> &str {
        self.inner.weight_hash()
    }
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let missing: Vec<&str> = {
            let cache = self.cache.lock().map_err(poisoned)?;
            let set: HashSet<&str> = texts
                .iter()
                .copied()
                .filter(|t| !cache.contains_key(*t))
                .collect();
            set.into_iter().collect()
        };
        let vectors = if missing.is_empty() {
            Vec::new()
        } else {
            self.inner.embed_batch(&missing)?
        };
        let mut cache = self.cache.lock().map_err(poisoned)?;
        for (text, vector) in missing.iter().zip(vectors) {
            cache.insert((*text).to_owned(), vector);
        }
        Ok(texts
            .iter()
            .map(|t| cache.get(*t).cloned().unwrap_or_default())
            .collect())
    }
}
