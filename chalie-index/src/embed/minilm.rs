//! all-MiniLM-L6-v2 in pure Rust: the `tokenizers` crate, weights read by candle, our own
//! BERT forward pass ([`super::bert`]), mean-pooled.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::Config;
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer};

use super::bert::Bert;
use super::{Embedder, l2_normalise};
use crate::descriptor::hex;
use crate::error::EmbedError;

/// Folder name of the default model under a models directory.
pub const MINILM_DIR_NAME: &str = "all-MiniLM-L6-v2";

/// The three files the model needs, as `cargo xtask fetch-model` lays them out.
pub const MINILM_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The default embedder: sentence-transformers/all-MiniLM-L6-v2, 384 dimensions.
pub struct MiniLm {
    model: Bert,
    tokenizer: Tokenizer,
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
        let model = Bert::load(var_builder, &config).map_err(load_error)?;
        Ok(MiniLm {
            model,
            tokenizer,
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
        let hidden = self
            .model
            .forward(&ids, &mask, rows, width)
            .map_err(inference_error)?;
        // Mean over real tokens only: sum(hidden * mask) / sum(mask).
        let size = hidden.len().checked_div(rows * width).unwrap_or(0);
        let vectors = (0..rows).map(|row| {
            let mut sum = vec![0.0f32; size];
            let mut count = 0usize;
            for token in 0..width {
                if mask[row * width + token] == 0 {
                    continue;
                }
                count += 1;
                let start = (row * width + token) * size;
                sum.iter_mut()
                    .zip(&hidden[start..start + size])
                    .for_each(|(s, h)| *s += h);
            }
            let count = count.max(1) as f32;
            sum.iter_mut().for_each(|s| *s /= count);
            sum
        });
        Ok(vectors
            .map(|mut vector| {
                l2_normalise(&mut vector);
                vector
            })
            .collect())
    }
}

/// Texts per forward pass: large enough to amortise the call, small enough that padding to
/// the longest text in a chunk stays cheap.
const CHUNK: usize = 32;

/// The order in which [`MiniLm::embed_batch`] runs `texts` through the encoder, `CHUNK` at
/// a time: sorting by length keeps similar lengths together, so little compute goes to
/// padding; the original order is restored afterwards.
fn forward_order(texts: &[&str]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| texts[i].len());
    order
}

/// The arithmetic [`MiniLm::embed_batch`] spends on some texts, counted from their real
/// token counts: what a floor for an index build is computed from.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EncoderWork {
    /// Texts counted.
    pub texts: usize,
    /// Forward passes (chunks of texts padded to their longest).
    pub passes: usize,
    /// Real tokens, special tokens included.
    pub tokens: usize,
    /// Token rows the encoder computes, padding included.
    pub padded_tokens: usize,
    /// Floating-point operations (a multiply-add is two) of the matrix products on real
    /// tokens only: the work no batching can avoid.
    pub useful_flops: f64,
    /// The same, over every row the encoder computes as it batches (padding included).
    pub padded_flops: f64,
}

impl MiniLm {
    /// Counts the encoder's arithmetic for embedding `texts` exactly as
    /// [`embed_batch`](Embedder::embed_batch) batches them: per layer the query, key and
    /// value projection, the attention scores and their product with the values, the
    /// output projection and the two feed-forward products. Layer norms, GELU and the
    /// softmax are not counted (they are a few operations per value, not per product).
    pub fn encoder_work(&self, texts: &[&str]) -> Result<EncoderWork, EmbedError> {
        let (hidden, inner, layers) = self.model.sizes();
        let (hidden, inner, layers) = (hidden as f64, inner as f64, layers as f64);
        // Per token: 2 * hidden * (3 hidden + hidden + 2 inner); per pair of tokens of
        // one text: 2 * hidden for the score and 2 * hidden for the value product.
        let flops = |tokens: f64, attended: f64| {
            layers
                * (2.0 * tokens * hidden * (4.0 * hidden + 2.0 * inner) + 4.0 * attended * hidden)
        };
        let mut work = EncoderWork {
            texts: texts.len(),
            ..EncoderWork::default()
        };
        for chunk in forward_order(texts).chunks(CHUNK) {
            let chunk_texts: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let encodings = self
                .tokenizer
                .encode_batch(chunk_texts, true)
                .map_err(inference_error)?;
            let width = encodings
                .iter()
                .map(|e| e.get_ids().len())
                .max()
                .unwrap_or(0);
            work.passes += 1;
            work.padded_tokens += encodings.len() * width;
            work.padded_flops += flops(
                (encodings.len() * width) as f64,
                (encodings.len() * width * width) as f64,
            );
            for encoding in &encodings {
                let real = encoding
                    .get_attention_mask()
                    .iter()
                    .filter(|&&m| m != 0)
                    .count();
                work.tokens += real;
                work.useful_flops += flops(real as f64, (real * real) as f64);
            }
        }
        Ok(work)
    }

    /// Measures the f32 matrix-multiply throughput, in FLOP/s, of the encoder's own
    /// projections (the same `gemm` call, weights and threads as a forward pass) on
    /// `rows` token rows, running every layer's products for at least `at_least`.
    pub fn matmul_throughput(
        &self,
        rows: usize,
        at_least: std::time::Duration,
    ) -> Result<f64, EmbedError> {
        self.model
            .matmul_throughput(rows, at_least)
            .map_err(inference_error)
    }
}

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
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in forward_order(texts).chunks(CHUNK) {
            let chunk_texts: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let vectors = self.embed_chunk(&chunk_texts)?;
            for (&i, vector) in chunk.iter().zip(vectors) {
                out[i] = vector;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use candle_core::Tensor;
    use candle_transformers::models::bert::BertModel;

    use super::*;

    const TEXTS: [&str; 5] = [
        "find the weather for my travel city",
        "send the weekly report to the team",
        "delete old photo backups",
        "what's the forecast for Paris today, and will it rain tomorrow afternoon?",
        "ok",
    ];

    fn model_dir() -> PathBuf {
        std::env::var_os("CHALIE_MODEL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                MiniLm::default_dir(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
            })
    }

    fn model() -> MiniLm {
        MiniLm::load(&model_dir()).expect("model files; run `cargo xtask fetch-model` first")
    }

    /// The embeddings as candle-transformers' own BERT computes them, one text at a time.
    fn reference(texts: &[&str]) -> Vec<Vec<f32>> {
        let dir = model_dir();
        let config: Config = serde_json::from_str(
            &std::fs::read_to_string(dir.join("config.json")).expect("config"),
        )
        .expect("config json");
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).expect("tokenizer");
        // One text at a time and no padding, so a plain mean over the tokens is the pooling.
        tokenizer.with_padding(None);
        let weights = std::fs::read(dir.join("model.safetensors")).expect("weights");
        let var_builder =
            VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu).expect("vb");
        let bert = BertModel::load(var_builder, &config).expect("bert");
        texts
            .iter()
            .map(|text| {
                let encoding = tokenizer.encode(*text, true).expect("encode");
                let ids = Tensor::new(encoding.get_ids(), &Device::Cpu)
                    .and_then(|t| t.unsqueeze(0))
                    .expect("ids");
                let hidden = bert
                    .forward(&ids, &ids.zeros_like().expect("types"), None)
                    .expect("forward");
                let mut vector: Vec<f32> = hidden
                    .mean(1)
                    .and_then(|t| t.squeeze(0))
                    .and_then(|t| t.to_vec1())
                    .expect("pool");
                l2_normalise(&mut vector);
                vector
            })
            .collect()
    }

    fn assert_close(ours: &[Vec<f32>], expected: &[Vec<f32>]) {
        assert_eq!(ours.len(), expected.len());
        for (row, (a, b)) in ours.iter().zip(expected).enumerate() {
            assert_eq!(a.len(), 384);
            let worst = a
                .iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0f32, f32::max);
            assert!(worst < 1e-5, "text {row}: largest difference {worst}");
        }
    }

    #[test]
    fn matches_candles_bert_model() {
        assert_close(
            &model().embed_batch(&TEXTS).expect("embed"),
            &reference(&TEXTS),
        );
    }

    #[test]
    fn the_encoder_work_is_counted_from_real_tokens_and_padding() {
        let model = model();
        let (h, inner, layers) = (384.0, 1536.0, 6.0);
        let flops = |n: f64, attended: f64| {
            layers * (2.0 * n * h * (4.0 * h + 2.0 * inner) + 4.0 * attended * h)
        };
        // "ok" is [CLS] ok [SEP]: three tokens, alone in its pass.
        let alone = model.encoder_work(&["ok"]).expect("count");
        assert_eq!(
            (alone.texts, alone.passes, alone.tokens, alone.padded_tokens),
            (1, 1, 3, 3)
        );
        assert_eq!(alone.useful_flops, flops(3.0, 9.0));
        assert_eq!(alone.padded_flops, alone.useful_flops);

        let batch = model.encoder_work(&TEXTS).expect("count");
        assert_eq!(batch.passes, 1);
        let longest = TEXTS
            .iter()
            .map(|t| model.encoder_work(&[t]).expect("count").tokens)
            .max()
            .expect("texts");
        assert_eq!(batch.padded_tokens, TEXTS.len() * longest);
        assert!(batch.tokens < batch.padded_tokens);
        assert!(batch.useful_flops < batch.padded_flops);
        let each: f64 = TEXTS
            .iter()
            .map(|t| model.encoder_work(&[t]).expect("count").useful_flops)
            .sum();
        assert!((batch.useful_flops - each).abs() < 1.0);
    }

    #[test]
    fn a_batch_embeds_each_text_as_alone() {
        let model = model();
        let batch = model.embed_batch(&TEXTS).expect("batch");
        let single: Vec<Vec<f32>> = TEXTS
            .iter()
            .map(|text| model.embed_batch(&[text]).expect("single").remove(0))
            .collect();
        assert_close(&batch, &single);
    }
}
