//! The arithmetic of one BERT forward pass on plain row-major `f32` buffers.
//!
//! Projections go through `gemm`, the matrix kernel candle itself uses, called so that the
//! weights are read in place and the bias and residual are accumulated in the same pass;
//! everything else (layer norm, attention over a few dozen tokens, GELU) is a short loop.
//! For short texts this is what made the query path fast: candle's ops allocated a
//! buffer per op, re-packed every weight matrix per product and copied views between ops.

use candle_core::Result;
use rayon::prelude::*;

/// A linear layer, `x @ W^T + b`, with its weight stored transposed: `(inputs, outputs)`
/// row-major, which is `W` in column-major order, the layout gemm reads without packing.
pub(super) struct Dense {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

impl Dense {
    /// From a weight in the stored `(outputs, inputs)` layout and its bias.
    pub(super) fn new(weight: &[f32], bias: Vec<f32>, inputs: usize) -> Result<Dense> {
        let outputs = bias.len();
        if weight.len() != inputs * outputs {
            candle_core::bail!(
                "a weight of {} values is not {outputs} x {inputs}",
                weight.len()
            );
        }
        let mut transposed = vec![0.0; weight.len()];
        for (output, row) in weight.chunks_exact(inputs.max(1)).enumerate() {
            for (input, value) in row.iter().enumerate() {
                transposed[input * outputs + output] = *value;
            }
        }
        Ok(Dense {
            weight: transposed,
            bias,
            inputs,
            outputs,
        })
    }

    /// Several projections of the same input as one: their outputs side by side, in order.
    pub(super) fn stacked(parts: &[Dense]) -> Result<Dense> {
        let inputs = parts.first().map_or(0, |part| part.inputs);
        if parts.iter().any(|part| part.inputs != inputs) {
            candle_core::bail!("stacked projections must share their input size");
        }
        let outputs: usize = parts.iter().map(|part| part.outputs).sum();
        let mut weight = Vec::with_capacity(inputs * outputs);
        for input in 0..inputs {
            for part in parts {
                let start = input * part.outputs;
                weight.extend_from_slice(&part.weight[start..start + part.outputs]);
            }
        }
        Ok(Dense {
            weight,
            bias: parts
                .iter()
                .flat_map(|part| part.bias.iter().copied())
                .collect(),
            inputs,
            outputs,
        })
    }

    pub(super) fn outputs(&self) -> usize {
        self.outputs
    }

    /// `out += x @ W^T + b` for `rows` rows: `x` is `(rows, inputs)`, `out` `(rows, outputs)`.
    /// Passing the residual in `out` adds it for free.
    pub(super) fn accumulate(&self, x: &[f32], rows: usize, out: &mut [f32]) -> Result<()> {
        if x.len() != rows * self.inputs || out.len() != rows * self.outputs {
            candle_core::bail!(
                "a projection of {} x {} got {} inputs and {} outputs for {rows} rows",
                self.outputs,
                self.inputs,
                x.len(),
                out.len()
            );
        }
        for row in out.chunks_exact_mut(self.outputs.max(1)) {
            row.iter_mut().zip(&self.bias).for_each(|(o, b)| *o += b);
        }
        if rows == 0 || self.outputs == 0 || self.inputs == 0 {
            return Ok(());
        }
        // The product is computed transposed, out^T = W x^T, so the large operand (the
        // weight, column-major) is the left one, which gemm streams without repacking, and
        // out^T in column-major order is exactly `out` in row-major order.
        //
        // SAFETY: the lengths were checked above. With these strides gemm reads lhs (o, i)
        // at `i * outputs + o` < inputs * outputs = weight.len(), rhs (i, r) at
        // `r * inputs + i` < rows * inputs = x.len(), and writes dst (o, r) at
        // `r * outputs + o` < rows * outputs = out.len(); `out` is borrowed mutably, so it
        // overlaps neither input.
        #[allow(unsafe_code)]
        unsafe {
            gemm::gemm(
                self.outputs,
                rows,
                self.inputs,
                out.as_mut_ptr(),
                self.outputs as isize,
                1,
                true,
                self.weight.as_ptr(),
                self.outputs as isize,
                1,
                x.as_ptr(),
                self.inputs as isize,
                1,
                1.0,
                1.0,
                false,
                false,
                false,
                parallelism(),
            );
        }
        Ok(())
    }
}

/// gemm's threads: as many as candle would use (it reads `RAYON_NUM_THREADS` too).
fn parallelism() -> gemm::Parallelism {
    match candle_core::utils::get_num_threads() {
        0 | 1 => gemm::Parallelism::None,
        threads => gemm::Parallelism::Rayon(threads),
    }
}

/// Layer normalisation of every `weight.len()`-wide row of `x`, in place.
pub(super) struct Norm {
    pub(super) weight: Vec<f32>,
    pub(super) bias: Vec<f32>,
    pub(super) eps: f32,
}

impl Norm {
    pub(super) fn apply(&self, x: &mut [f32]) {
        let width = self.weight.len().max(1);
        let normalise = |row: &mut [f32]| {
            let mean = row.iter().sum::<f32>() / width as f32;
            let variance = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
            let inverse = 1.0 / (variance + self.eps).sqrt();
            for ((value, weight), bias) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *value = (*value - mean) * inverse * weight + bias;
            }
        };
        if x.len() >= PARALLEL_FROM {
            x.par_chunks_exact_mut(width).for_each(normalise);
        } else {
            x.chunks_exact_mut(width).for_each(normalise);
        }
    }
}

/// Values from which the steps between the matrix products (layer norm, attention, the
/// activation) are spread over rayon's threads, as gemm spreads the products: in a batch
/// build they are a third of the encoder's time, and on one core they left the other idle.
/// Below it (a query's few dozen tokens) handing work to threads costs more than it saves.
/// Each row is computed exactly as on one thread, so the vectors do not change.
const PARALLEL_FROM: usize = 64 * 384;

/// Applies `activation` to every value of `x`, on rayon's threads for a batch.
/// Generic, not a function pointer, so the activation inlines and the loop vectorises.
pub(super) fn activate(x: &mut [f32], activation: impl Fn(f32) -> f32 + Sync) {
    if x.len() >= PARALLEL_FROM {
        x.par_chunks_mut(4096)
            .for_each(|part| part.iter_mut().for_each(|v| *v = activation(*v)));
    } else {
        x.iter_mut().for_each(|v| *v = activation(*v));
    }
}

/// Sizes of one self-attention step.
#[derive(Clone, Copy)]
pub(super) struct AttentionShape {
    pub(super) rows: usize,
    pub(super) width: usize,
    pub(super) heads: usize,
    pub(super) head_size: usize,
}

impl AttentionShape {
    /// Scaled dot-product attention over `qkv`, `(rows * width, 3 * hidden)` with each
    /// token's query, key and value side by side, masked by `mask` (0 = padding key).
    /// Returns the context, `(rows * width, hidden)`.
    ///
    /// A padding key gets no weight at all, which is what the reference's additive
    /// `f32::MIN` bias amounts to after the softmax.
    pub(super) fn attend(&self, qkv: &[f32], mask: &[u32]) -> Vec<f32> {
        let AttentionShape {
            rows,
            width,
            heads,
            head_size,
        } = *self;
        let hidden = heads * head_size;
        let scale = 1.0 / (head_size as f32).sqrt();
        let mut context = vec![0.0f32; rows * width * hidden];
        let attend_row = |(row, context): (usize, &mut [f32])| {
            let mut weights = vec![0.0f32; width];
            let token = |index: usize, part: usize, head: usize| {
                let start = (row * width + index) * 3 * hidden + part * hidden + head * head_size;
                &qkv[start..start + head_size]
            };
            let real = |index: usize| mask[row * width + index] != 0;
            for head in 0..heads {
                for query in 0..width {
                    let q = token(query, 0, head);
                    let mut largest = f32::NEG_INFINITY;
                    for (key, weight) in weights.iter_mut().enumerate() {
                        *weight = if real(key) {
                            dot(q, token(key, 1, head)) * scale
                        } else {
                            f32::NEG_INFINITY
                        };
                        largest = largest.max(*weight);
                    }
                    let mut total = 0.0;
                    for weight in weights.iter_mut() {
                        *weight = (*weight - largest).exp();
                        total += *weight;
                    }
                    let start = query * hidden + head * head_size;
                    let out = &mut context[start..start + head_size];
                    for (key, weight) in weights.iter().enumerate() {
                        if *weight == 0.0 {
                            continue;
                        }
                        let share = weight / total;
                        out.iter_mut()
                            .zip(token(key, 2, head))
                            .for_each(|(o, v)| *o += share * v);
                    }
                }
            }
        };
        let row_size = (width * hidden).max(1);
        if context.len() >= PARALLEL_FROM {
            context
                .par_chunks_mut(row_size)
                .enumerate()
                .for_each(attend_row);
        } else {
            context
                .chunks_mut(row_size)
                .enumerate()
                .for_each(attend_row);
        }
        context
    }
}

/// A dot product with eight partial sums, so the compiler can keep them in one vector
/// register (a single running sum cannot be reordered, and so is not vectorised).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let mut a_chunks = a.chunks_exact(8);
    let mut b_chunks = b.chunks_exact(8);
    for (x, y) in a_chunks.by_ref().zip(b_chunks.by_ref()) {
        for lane in 0..8 {
            lanes[lane] += x[lane] * y[lane];
        }
    }
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    lanes.iter().sum::<f32>() + tail
}

/// The exact GELU, `x * (1 + erf(x / sqrt 2)) / 2`.
pub(super) fn gelu_erf(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The tanh approximation of GELU, for configurations that ask for it.
pub(super) fn gelu_tanh(x: f32) -> f32 {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * (x + 0.044_715 * x * x * x)).tanh())
}

/// `erf` as a rational function of odd degree 13 over even degree 8 on [-4, 4], where f32
/// `erf` saturates to +-1 outside; within a few ulp of the exact value. Branch-free, so a
/// loop over it vectorises, where a scalar `libm` call per activation took a tenth of a
/// query's time. The coefficients are Eigen's `generic_fast_erf_float`.
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = x2 * -2.726_142_3e-10 + 2.770_681_4e-8;
    p = p * x2 + -2.101_024_1e-6;
    p = p * x2 + -5.692_506_4e-5;
    p = p * x2 + -7.349_906_3e-4;
    p = p * x2 + -2.954_6e-3;
    p = p * x2 + -1.609_603_3e-2;
    let mut q = x2 * -1.456_607_2e-5 + -2.133_740_6e-4;
    q = q * x2 + -1.682_827e-3;
    q = q * x2 + -7.373_329e-3;
    q = q * x2 + -1.426_473_9e-2;
    x * p / q
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Tensor};

    use super::*;

    #[test]
    fn gelu_matches_candles_exact_gelu() {
        // -10..10 in steps of 1/512 covers the saturated tails and the curved middle.
        let xs: Vec<f32> = (-5120..=5120).map(|i| i as f32 / 512.0).collect();
        let ours: Vec<f32> = xs.iter().map(|&x| gelu_erf(x)).collect();
        let reference: Vec<f32> = Tensor::new(xs.as_slice(), &Device::Cpu)
            .and_then(|t| t.gelu_erf())
            .and_then(|t| t.to_vec1())
            .expect("reference");
        // Relative to |x| beyond 1: the tails are x times an erf within an ulp of 1.
        let worst = xs
            .iter()
            .zip(ours.iter().zip(&reference))
            .map(|(x, (a, b))| (a - b).abs() / x.abs().max(1.0))
            .fold(0.0f32, f32::max);
        assert!(worst < 1e-6, "largest difference {worst}");
    }

    #[test]
    fn dense_matches_a_plain_product_with_bias_and_residual() {
        // W is 3 x 2 (outputs x inputs), x is 2 rows of 2.
        let weight = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let dense = Dense::new(&weight, vec![0.5, -0.5, 1.0], 2).expect("dense");
        let x = [1.0, -1.0, 2.0, 0.5];
        let mut out = vec![10.0; 6];
        dense.accumulate(&x, 2, &mut out).expect("product");
        // Row 0: W x = [-1, -1, -1]; row 1: [3, 8, 13]; plus bias, plus the residual 10.
        assert_eq!(out, vec![9.5, 8.5, 10.0, 13.5, 17.5, 24.0]);
    }

    #[test]
    fn dense_refuses_mismatched_buffers() {
        let dense = Dense::new(&[1.0; 6], vec![0.0; 3], 2).expect("dense");
        let mut out = vec![0.0; 5];
        assert!(dense.accumulate(&[1.0; 4], 2, &mut out).is_err());
        assert!(Dense::new(&[1.0; 5], vec![0.0; 3], 2).is_err());
    }

    #[test]
    fn stacked_projections_put_outputs_side_by_side() {
        let first = Dense::new(&[1.0, 0.0], vec![0.0], 2).expect("first");
        let second = Dense::new(&[0.0, 1.0, 1.0, 1.0], vec![0.0, 1.0], 2).expect("second");
        let both = Dense::stacked(&[first, second]).expect("stacked");
        let mut out = vec![0.0; 3];
        both.accumulate(&[2.0, 3.0], 1, &mut out).expect("product");
        assert_eq!(out, vec![2.0, 3.0, 6.0]);
    }
}
