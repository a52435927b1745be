//! all-MiniLM-L6-v2 in pure Rust: candle's BERT plus the `tokenizers` crate, mean-pooled.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer};

use super::{Embedder, l2_normalise};
use crate::descriptor::hex;
use crate::error::EmbedError;

/// Folder name of the default model under a models directory.
pub const MINILM_DIR_NAME: &str = "all-MiniLM-L6-v2";

/// The three files the model needs, as `cargo xtask fetch-model` lays them out.
pub const MINILM_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The default embedder: sentence-transformers/all-MiniLM-L6-v2, 384 dimensions.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    weight_hash: String,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm")
            .field("weight_hash", &self.weight_hash)
            .finish()
    }
}

fn load_error(error: impl std::fmt::Display) -> EmbedError {
    EmbedError::ModelLoad(error.to_string())
}

fn inference_error(error: impl std::fmt::Display) -> EmbedError {
    EmbedError::Inference(error.to_string())
}

impl MiniLm {
    /// The model folder under a workspace root: `.chalie/models/all-MiniLM-L6-v2`.
    pub fn default_dir(workspace_root: &Path) -> PathBuf {
        workspace_root
            .join(".chalie")
            .join("models")
            .join(MINILM_DIR_NAME)
    }

    /// Loads the model from a folder holding [`MINILM_FILES`].
    pub fn load(dir: &Path) -> Result<MiniLm, EmbedError> {
        let path_of = |file: &str| -> Result<PathBuf, EmbedError> {
            let path = dir.join(file);
            if path.is_file() {
                Ok(path)
            } else {
                Err(EmbedError::ModelMissing { path })
            }
        };
        let config_path = path_of("config.json")?;
        let tokenizer_path = path_of("tokenizer.json")?;
        let weights_path = path_of("model.safetensors")?;

        let config_text = std::fs::read_to_string(&config_path).map_err(load_error)?;
        let config: Config = serde_json::from_str(&config_text).map_err(load_error)?;

        let mut tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(load_error)?;
        // The shipped tokenizer pads every input to 128 tokens; pad only to the longest text
        // of a batch instead (the attention mask keeps pads out of the mean either way).
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));

        let weights = std::fs::read(&weights_path).map_err(load_error)?;
        let weight_hash = hex(&Sha256::digest(&weights));
        let device = Device::Cpu;
        let var_builder = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(load_error)?;
        let model = BertModel::load(var_builder, &config).map_err(load_error)?;
        Ok(MiniLm {
            model,
            tokenizer,
            device,
            weight_hash,
        })
    }

    fn embed_chunk(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(inference_error)?;
        let rows = encodings.len();
        let width = encodings
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(0);
        let mut ids = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for encoding in &encodings {
            ids.extend(encoding.get_ids().iter().copied());
            mask.extend(encoding.get_attention_mask().iter().copied());
        }
        let ids = Tensor::from_vec(ids, (rows, width), &self.device).map_err(inference_error)?;
        let mask = Tensor::from_vec(mask, (rows, width), &self.device).map_err(inference_error)?;
        let type_ids = ids.zeros_like().map_err(inference_error)?;
        let hidden = self
            .model
            .forward(&ids, &type_ids, Some(&mask))
            .map_err(inference_error)?;
        // Mean over real tokens only: sum(hidden * mask) / sum(mask).
        let pooled = (|| -> candle_core::Result<Tensor> {
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9, f64::MAX)?;
            summed.broadcast_div(&counts)
        })()
        .map_err(inference_error)?;
        let mut vectors: Vec<Vec<f32>> = pooled.to_vec2().map_err(inference_error)?;
        vectors.iter_mut().for_each(|v| l2_normalise(v));
        Ok(vectors)
    }
}

/// Texts per forward pass: large enough to amortise the call, small enough that padding to
/// the longest text in a chunk stays cheap.
const CHUNK: usize = 32;

impl Embedder for MiniLm {
    fn model_id(&self) -> &str {
        "sentence-transformers/all-MiniLM-L6-v2"
    }

    fn dimensions(&self) -> usize {
        384
    }

    fn weight_hash(&self) -> &str {
        &self.weight_hash
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Sorting by length before chunking keeps similar lengths together, so little
        // compute goes to padding; the original order is restored at the end.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(CHUNK) {
            let chunk_texts: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let vectors = self.embed_chunk(&chunk_texts)?;
            for (&i, vector) in chunk.iter().zip(vectors) {
                out[i] = vector;
            }
        }
        Ok(out)
    }
}
