//! A rebuild of a 10,000-ability x 8-example index after one ability changed, the way
//! `cargo xtask index` rebuilds: open the embedding cache, build (embedding only the changed
//! texts, editing the previous vector graph in place), save the cache.
//!
//! With the model fetched (or found at `CHALIE_MODEL_DIR`) it embeds with MiniLM, otherwise with the hashed test embedder
//! (it says which). The index and cache live under `target/chalie-bench/`, so the cold
//! build that fills them (minutes with MiniLM) happens once, not on every run; every
//! iteration then edits a different ability with text no build has seen. The catalog size
//! is `CHALIE_BENCH_ABILITIES` (default 10,000), for developing at a small scale.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chalie_index::{Descriptor, Embedder, EmbeddingCache, HashingEmbedder, Index, MiniLm};
use criterion::{Criterion, criterion_main};

#[path = "support/catalog.rs"]
mod synthetic;

fn embedder() -> (Arc<dyn Embedder>, &'static str) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::var_os("CHALIE_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| MiniLm::default_dir(&root));
    match MiniLm::load(&dir) {
        Ok(model) => (Arc::new(model), "minilm"),
        Err(error) => {
            eprintln!("{error}; benching with the hashed test embedder instead");
            (Arc::new(HashingEmbedder::new(384)), "hashing")
        }
    }
}

/// Open the cache, build, save: one `cargo xtask index` minus loading the model.
fn rebuild(descriptors: &[Descriptor], embedder: &dyn Embedder, dir: &Path, cache: &Path) {
    let mut cache = EmbeddingCache::open(cache, embedder);
    if let Some(reason) = cache.discarded() {
        eprintln!("warning: embedding cache discarded: {reason}");
    }
    Index::build_cached(descriptors, embedder, dir, &mut cache, &mut |_| {}).expect("build");
    cache.save().expect("save the cache");
}

fn incremental(c: &mut Criterion) {
    let count: usize = std::env::var("CHALIE_BENCH_ABILITIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let (embedder, kind) = embedder();
    let scratch = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../target/chalie-bench")
        .join(format!("incremental-{kind}-{count}x8"));
    let (dir, cache) = (scratch.join("index"), scratch.join("cache"));
    let cache = EmbeddingCache::path_in(&cache, embedder.as_ref());
    let mut descriptors = synthetic::catalog(count, 8);

    let started = Instant::now();
    rebuild(&descriptors, embedder.as_ref(), &dir, &cache);
    eprintln!(
        "setup (a cold build unless an earlier run left the index and cache): {:.2?}",
        started.elapsed()
    );

    let mut group = c.benchmark_group("incremental");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(1));
    // Every iteration rewrites all texts of one ability (its summary and 8 examples), each
    // time with a revision number no earlier run used, so nothing comes from the cache.
    let revision = Cell::new(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |t| t.as_micros()),
    );
    group.bench_function(
        format!("rebuild_after_editing_one_ability/{count}x8"),
        |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    let next = revision.get() + 1;
                    revision.set(next);
                    let edited = &mut descriptors[(next as usize * 7919) % count];
                    edited.summary = format!("{} (revision {next})", edited.summary);
                    for example in &mut edited.examples {
                        *example = format!("{example} r{next}");
                    }
                    let started = Instant::now();
                    rebuild(&descriptors, embedder.as_ref(), &dir, &cache);
                    total += started.elapsed();
                }
                total
            })
        },
    );
    group.finish();
}

// criterion_group! generates an undocumented function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::incremental);
}
criterion_main!(group::benches);
