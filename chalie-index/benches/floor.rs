//! The cold build of a 10,000-ability x 8-example index against its arithmetic floor.
//!
//! `cargo bench -p chalie-index --bench floor` (the model must be fetched: `cargo xtask
//! fetch-model`; `CHALIE_BENCH_ABILITIES` sets the catalog size, default 10,000):
//!
//! 1. builds the index cold (no embedding cache, no previous index), recording every text
//!    the build embeds and the time spent embedding;
//! 2. counts the encoder's FLOPs for exactly those texts ([`MiniLm::encoder_work`]): the
//!    useful ones, on real tokens only, and those the batched forward passes compute;
//! 3. measures the f32 matrix-multiply throughput of the encoder's own projections (the
//!    same `gemm` call, weights and threads) before and after the build, at the row
//!    count of an average forward pass and at a large one, so a noisy machine affects
//!    the floor and the build alike;
//! 4. prints the floor (useful FLOPs at the best throughput measured), the build time
//!    and their ratio.
//!
//! It is a one-shot measurement, not a criterion loop: one cold build takes minutes.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chalie_index::{EmbedError, Embedder, Index, MiniLm};

#[path = "support/catalog.rs"]
mod synthetic;

/// MiniLM, remembering every text it embeds and the time it spent.
struct Recording {
    model: MiniLm,
    texts: Mutex<(Vec<String>, Duration)>,
}

impl Embedder for Recording {
    fn model_id(&self) -> &str {
        self.model.model_id()
    }
    fn dimensions(&self) -> usize {
        self.model.dimensions()
    }
    fn weight_hash(&self) -> &str {
        self.model.weight_hash()
    }
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let started = Instant::now();
        let vectors = self.model.embed_batch(texts)?;
        let mut record = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        record.0.extend(texts.iter().map(|t| (*t).to_owned()));
        record.1 += started.elapsed();
        Ok(vectors)
    }
}

fn throughput(model: &MiniLm, rows: usize) -> f64 {
    model
        .matmul_throughput(rows, Duration::from_secs(3))
        .expect("measure the matrix products")
}

fn main() {
    // `cargo bench` passes `--bench`; nothing here takes arguments.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::var_os("CHALIE_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| MiniLm::default_dir(&root));
    let model = match MiniLm::load(&dir) {
        Ok(model) => model,
        Err(error) => {
            eprintln!("{error}; the floor needs the real encoder (`cargo xtask fetch-model`)");
            std::process::exit(2);
        }
    };
    let count: usize = std::env::var("CHALIE_BENCH_ABILITIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let threads = candle_core::utils::get_num_threads();
    let descriptors = synthetic::catalog(count, 8);
    let out = root
        .join("target/chalie-bench")
        .join(format!("floor-{count}x8"));
    let _ = std::fs::remove_dir_all(&out);

    const LARGE: usize = 4096;
    let before = (throughput(&model, 384), throughput(&model, LARGE));
    let recording = Recording {
        model,
        texts: Mutex::new((Vec::new(), Duration::ZERO)),
    };
    let started = Instant::now();
    Index::build(&descriptors, &recording, &out, &mut |_| {}).expect("cold build");
    let build = started.elapsed();
    let Recording { model, texts } = recording;
    let (texts, embedding) = texts.into_inner().unwrap_or_else(|e| e.into_inner());
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let work = model
        .encoder_work(&texts)
        .expect("count the encoder's work");
    let pass_rows = work.padded_tokens / work.passes.max(1);
    let after = (throughput(&model, pass_rows), throughput(&model, LARGE));
    let best = [before.0, before.1, after.0, after.1]
        .into_iter()
        .fold(0.0, f64::max);
    let floor = work.useful_flops / best;
    let seconds = build.as_secs_f64();

    println!("cold build of {count} abilities x 8 examples, {threads} threads");
    println!(
        "texts embedded {}, forward passes {}, tokens {} real / {} computed ({:.1} % padding)",
        work.texts,
        work.passes,
        work.tokens,
        work.padded_tokens,
        100.0 * (1.0 - work.tokens as f64 / work.padded_tokens.max(1) as f64)
    );
    println!(
        "encoder FLOPs: {:.2} T useful, {:.2} T computed",
        work.useful_flops / 1e12,
        work.padded_flops / 1e12
    );
    println!(
        "gemm throughput, GFLOP/s: {:.1} at 384 rows and {:.1} at {LARGE} before; {:.1} at {pass_rows} rows (an average pass) and {:.1} at {LARGE} after",
        before.0 / 1e9,
        before.1 / 1e9,
        after.0 / 1e9,
        after.1 / 1e9
    );
    println!(
        "floor {floor:.1} s (useful FLOPs at {:.1} GFLOP/s); build {seconds:.1} s, of which embedding {:.1} s; build / floor = {:.2}x",
        best / 1e9,
        embedding.as_secs_f64(),
        seconds / floor
    );
    let _ = std::fs::remove_dir_all(&out);
}
