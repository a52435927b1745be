//! Latency of `find`, `open` and `build` on synthetic catalogs of 1,000 and 10,000 abilities.
//!
//! The hashed test embedder isolates the engine's own cost (everything but the model); the
//! MiniLM group adds real query embedding and runs only when the model was fetched.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chalie_index::{Descriptor, Embedder, FindOptions, HashingEmbedder, Index, MiniLm};
use criterion::{Criterion, criterion_main};

#[path = "support/catalog.rs"]
mod synthetic;
use synthetic::catalog;

fn entries() -> Vec<String> {
    [
        "find the weather for my travel city",
        "send the weekly report to the team",
        "delete old photo backups",
    ]
    .map(String::from)
    .to_vec()
}

fn built(dir: &Path, descriptors: &[Descriptor], embedder: &Arc<dyn Embedder>) -> Index {
    Index::build(descriptors, embedder.as_ref(), dir, &mut |_| {}).expect("build");
    Index::open(dir, embedder.clone()).expect("open")
}

/// A catalog's built index, made on first use: a filtered run (`-- minilm`) then skips the
/// catalogs it does not bench, and the 10,000 x 8 build alone takes a minute.
struct Lazy {
    count: usize,
    embedder: Arc<dyn Embedder>,
    built: std::cell::OnceCell<(tempfile::TempDir, Index)>,
}

impl Lazy {
    fn get(&self) -> &(tempfile::TempDir, Index) {
        self.built.get_or_init(|| {
            let dir = tempfile::tempdir().expect("tempdir");
            let started = std::time::Instant::now();
            let index = built(dir.path(), &catalog(self.count, 8), &self.embedder);
            // One timed build instead of criterion samples: ten 10,000 x 8 builds would
            // keep both cores busy for minutes.
            eprintln!(
                "build_hashing_embedder/{}x8: {:.2?}",
                self.count,
                started.elapsed()
            );
            (dir, index)
        })
    }
}

fn engine(c: &mut Criterion) {
    let embedder: Arc<dyn Embedder> = Arc::new(HashingEmbedder::new(384));
    let mut group = c.benchmark_group("engine");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    for count in [1_000, 10_000] {
        let lazy = Lazy {
            count,
            embedder: embedder.clone(),
            built: std::cell::OnceCell::new(),
        };
        let options = FindOptions::default();
        group.bench_function(format!("find_3_entries/{count}x8"), |b| {
            let index = &lazy.get().1;
            b.iter(|| black_box(index.find(&entries(), &options).expect("find")))
        });
        group.bench_function(format!("open/{count}x8"), |b| {
            let dir = lazy.get().0.path();
            b.iter(|| black_box(Index::open(dir, embedder.clone()).expect("open")))
        });
    }
    group.finish();
}

fn with_model(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let Ok(model) = MiniLm::load(&MiniLm::default_dir(&root)) else {
        eprintln!("model not fetched; skipping the MiniLM benches (run `cargo xtask fetch-model`)");
        return;
    };
    let embedder: Arc<dyn Embedder> = Arc::new(model);
    let mut group = c.benchmark_group("minilm");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    // Summaries only: embedding 8,000 examples would make the bench itself take minutes.
    let dir = tempfile::tempdir().expect("tempdir");
    let index = built(dir.path(), &catalog(1_000, 0), &embedder);
    let options = FindOptions::default();
    group.bench_function("find_3_entries/1000", |b| {
        b.iter(|| black_box(index.find(&entries(), &options).expect("find")))
    });
    let texts: Vec<String> = catalog(64, 0).into_iter().map(|d| d.summary).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    group.bench_function("embed_64_summaries", |b| {
        b.iter(|| black_box(embedder.embed_batch(&texts).expect("embed")))
    });
    // What a build embeds most of: short example phrases, one build batch at a time.
    let examples: Vec<String> = catalog(32, 8)
        .into_iter()
        .flat_map(|d| d.examples)
        .collect();
    let examples: Vec<&str> = examples.iter().map(String::as_str).collect();
    group.bench_function("embed_256_examples", |b| {
        b.iter(|| black_box(embedder.embed_batch(&examples).expect("embed")))
    });
    group.finish();
}

// criterion_group! generates an undocumented function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::engine, super::with_model);
}
criterion_main!(group::benches);
