//! The BERT encoder behind [`super::MiniLm`]: weights read through candle, the forward pass
//! on plain buffers ([`super::ops`]).
//!
//! It computes what candle-transformers' `BertModel` computes (the tests compare the two),
//! shaped for short queries, where a forward pass is a few dozen token rows: the query, key
//! and value projections run as one product, the type embedding is added as a row (every
//! input is a single segment), and no op allocates or copies more than its own output.

use candle_core::Result;
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{Config, HiddenAct};

use super::ops::{AttentionShape, Dense, Norm, activate, gelu_erf, gelu_tanh};

fn vector(vb: &VarBuilder<'_>, size: usize, name: &str) -> Result<Vec<f32>> {
    vb.get(size, name)?.to_vec1()
}

fn matrix(vb: &VarBuilder<'_>, shape: (usize, usize), name: &str) -> Result<Vec<f32>> {
    vb.get(shape, name)?.flatten_all()?.to_vec1()
}

fn dense(vb: &VarBuilder<'_>, inputs: usize, outputs: usize) -> Result<Dense> {
    Dense::new(
        &matrix(vb, (outputs, inputs), "weight")?,
        vector(vb, outputs, "bias")?,
        inputs,
    )
}

fn norm(vb: &VarBuilder<'_>, size: usize, eps: f64) -> Result<Norm> {
    Ok(Norm {
        weight: vector(vb, size, "weight")?,
        bias: vector(vb, size, "bias")?,
        eps: eps as f32,
    })
}

struct Layer {
    /// Query, key and value, stacked.
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    intermediate: Dense,
    output: Dense,
    output_norm: Norm,
}

impl Layer {
    fn load(vb: &VarBuilder<'_>, config: &Config) -> Result<Layer> {
        let (hidden, inner, eps) = (
            config.hidden_size,
            config.intermediate_size,
            config.layer_norm_eps,
        );
        let attention = vb.pp("attention");
        let projection = |name: &str| dense(&attention.pp("self").pp(name), hidden, hidden);
        Ok(Layer {
            qkv: Dense::stacked(&[
                projection("query")?,
                projection("key")?,
                projection("value")?,
            ])?,
            attention_out: dense(&attention.pp("output").pp("dense"), hidden, hidden)?,
            attention_norm: norm(&attention.pp("output").pp("LayerNorm"), hidden, eps)?,
            intermediate: dense(&vb.pp("intermediate").pp("dense"), hidden, inner)?,
            output: dense(&vb.pp("output").pp("dense"), inner, hidden)?,
            output_norm: norm(&vb.pp("output").pp("LayerNorm"), hidden, eps)?,
        })
    }
}

/// A BERT encoder without pooler, as sentence-transformers uses it.
pub(super) struct Bert {
    word_embeddings: Vec<f32>,
    position_embeddings: Vec<f32>,
    /// Row 0 of the type embeddings: every input here is a single segment.
    type_embedding: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    heads: usize,
    head_size: usize,
    activation: HiddenAct,
}

impl Bert {
    /// Loads the weights; like candle's `BertModel`, accepts them at the root or under the
    /// model type's prefix (`bert.`).
    pub(super) fn load(vb: VarBuilder<'_>, config: &Config) -> Result<Bert> {
        let vb = match &config.model_type {
            Some(prefix) if !vb.contains_tensor("embeddings.word_embeddings.weight") => {
                vb.pp(prefix)
            }
            _ => vb,
        };
        let hidden = config.hidden_size;
        if config.num_attention_heads == 0 || !hidden.is_multiple_of(config.num_attention_heads) {
            candle_core::bail!(
                "hidden size {hidden} is not a multiple of {} attention heads",
                config.num_attention_heads
            );
        }
        let embeddings = vb.pp("embeddings");
        let types = matrix(
            &embeddings,
            (config.type_vocab_size, hidden),
            "token_type_embeddings.weight",
        )?;
        let encoder = vb.pp("encoder").pp("layer");
        Ok(Bert {
            word_embeddings: matrix(
                &embeddings,
                (config.vocab_size, hidden),
                "word_embeddings.weight",
            )?,
            position_embeddings: matrix(
                &embeddings,
                (config.max_position_embeddings, hidden),
                "position_embeddings.weight",
            )?,
            type_embedding: match types.get(..hidden) {
                Some(first) => first.to_vec(),
                None => candle_core::bail!("the model has no token type embedding"),
            },
            embedding_norm: norm(&embeddings.pp("LayerNorm"), hidden, config.layer_norm_eps)?,
            layers: (0..config.num_hidden_layers)
                .map(|index| Layer::load(&encoder.pp(index), config))
                .collect::<Result<Vec<_>>>()?,
            heads: config.num_attention_heads,
            head_size: hidden / config.num_attention_heads,
            activation: config.hidden_act,
        })
    }

    /// Hidden size, feed-forward size and number of layers.
    pub(super) fn sizes(&self) -> (usize, usize, usize) {
        let inner = self
            .layers
            .first()
            .map_or(0, |layer| layer.intermediate.outputs());
        (self.heads * self.head_size, inner, self.layers.len())
    }

    /// FLOP/s of every layer's projections on `rows` rows of made-up activations, the
    /// way [`Bert::forward`] calls them, repeated for at least `at_least`.
    pub(super) fn matmul_throughput(
        &self,
        rows: usize,
        at_least: std::time::Duration,
    ) -> Result<f64> {
        let (hidden, inner, _) = self.sizes();
        let input: Vec<f32> = (0..rows * inner)
            .map(|i| ((i % 17) as f32 - 8.0) / 64.0)
            .collect();
        let mut qkv = vec![0.0; rows * 3 * hidden];
        let mut out = vec![0.0; rows * hidden];
        let mut wide = vec![0.0; rows * inner];
        let per_layer = 2.0 * (rows * hidden) as f64 * (4.0 * hidden as f64 + 2.0 * inner as f64);
        let started = std::time::Instant::now();
        let mut flops = 0.0;
        while flops == 0.0 || started.elapsed() < at_least {
            for layer in &self.layers {
                layer
                    .qkv
                    .accumulate(&input[..rows * hidden], rows, &mut qkv)?;
                layer
                    .attention_out
                    .accumulate(&input[..rows * hidden], rows, &mut out)?;
                layer
                    .intermediate
                    .accumulate(&input[..rows * hidden], rows, &mut wide)?;
                layer.output.accumulate(&input, rows, &mut out)?;
                flops += per_layer;
            }
        }
        Ok(flops / started.elapsed().as_secs_f64())
    }

    /// Hidden states, `(rows, width, hidden)` row-major, for `ids`: `rows * width` token
    /// ids laid out row by row; `mask` holds 1 for a real token and 0 for padding, in the
    /// same layout.
    pub(super) fn forward(
        &self,
        ids: &[u32],
        mask: &[u32],
        rows: usize,
        width: usize,
    ) -> Result<Vec<f32>> {
        let hidden = self.heads * self.head_size;
        let tokens = rows * width;
        if ids.len() != tokens || mask.len() != tokens {
            candle_core::bail!(
                "{} ids and {} mask values for {rows} x {width}",
                ids.len(),
                mask.len()
            );
        }
        if width * hidden > self.position_embeddings.len() {
            candle_core::bail!(
                "{width} tokens is longer than the model's {} positions",
                self.position_embeddings.len() / hidden.max(1)
            );
        }
        let mut x = Vec::with_capacity(tokens * hidden);
        for (token, &id) in ids.iter().enumerate() {
            let start = id as usize * hidden;
            let Some(word) = self.word_embeddings.get(start..start + hidden) else {
                candle_core::bail!("token id {id} is outside the vocabulary");
            };
            let position = &self.position_embeddings[(token % width) * hidden..][..hidden];
            // Same order of additions as BertModel: word + type, then + position.
            x.extend(
                word.iter()
                    .zip(&self.type_embedding)
                    .zip(position)
                    .map(|((w, t), p)| (w + t) + p),
            );
        }
        self.embedding_norm.apply(&mut x);

        let shape = AttentionShape {
            rows,
            width,
            heads: self.heads,
            head_size: self.head_size,
        };
        let mut qkv = Vec::new();
        let mut inner = Vec::new();
        for layer in &self.layers {
            qkv.clear();
            qkv.resize(tokens * layer.qkv.outputs(), 0.0);
            layer.qkv.accumulate(&x, tokens, &mut qkv)?;
            let context = shape.attend(&qkv, mask);
            // The residual goes in as the output's starting value.
            let mut attended = x;
            layer
                .attention_out
                .accumulate(&context, tokens, &mut attended)?;
            layer.attention_norm.apply(&mut attended);
            inner.clear();
            inner.resize(tokens * layer.intermediate.outputs(), 0.0);
            layer
                .intermediate
                .accumulate(&attended, tokens, &mut inner)?;
            match self.activation {
                HiddenAct::Gelu => activate(&mut inner, gelu_erf),
                HiddenAct::GeluApproximate => activate(&mut inner, gelu_tanh),
                HiddenAct::Relu => activate(&mut inner, |v| v.max(0.0)),
            }
            x = attended;
            layer.output.accumulate(&inner, tokens, &mut x)?;
            layer.output_norm.apply(&mut x);
        }
        Ok(x)
    }
}
