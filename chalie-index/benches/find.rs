//! Latency of `find`, `open` and `build` on synthetic catalogs of 1,000 and 10,000 abilities.
//!
//! The hashed test embedder isolates the engine's own cost (everything but the model); the
//! MiniLM group adds real query embedding and runs only when the model was fetched.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chalie_index::{Descriptor, Embedder, FindOptions, HashingEmbedder, Index, MiniLm, Source};
use criterion::{Criterion, criterion_main};

const VERBS: [&str; 12] = [
    "get", "list", "create", "delete", "update", "search", "send", "read", "sync", "convert",
    "check", "plan",
];
const NOUNS: [&str; 16] = [
    "file", "email", "invoice", "weather", "calendar", "ticket", "photo", "repo", "order",
    "flight", "note", "user", "report", "song", "map", "price",
];
const WORDS: [&str; 24] = [
    "city", "today", "project", "team", "budget", "customer", "draft", "archive", "public",
    "private", "weekly", "summary", "latest", "shared", "travel", "account", "backup", "image",
    "audio", "message", "record", "status", "history", "folder",
];

/// Deterministic word picker (an LCG), so every run benches the same catalog.
struct Words(u64);

impl Words {
    fn next(&mut self, list: &[&'static str]) -> &'static str {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        list[((self.0 >> 33) as usize) % list.len()]
    }
    fn phrase(&mut self, length: usize) -> String {
        (0..length)
            .map(|_| self.next(&WORDS))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn catalog(count: usize, examples: usize) -> Vec<Descriptor> {
    let mut words = Words(7);
    (0..count)
        .map(|i| {
            let (verb, noun) = (words.next(&VERBS), words.next(&NOUNS));
            Descriptor {
                name: format!("{verb}_{noun}_{i}"),
                summary: format!("{verb} the {noun} for the {}", words.phrase(8)),
                examples: (0..examples)
                    .map(|_| format!("{verb} my {noun} {}", words.phrase(5)))
                    .collect(),
                tooltip: String::new(),
                source: Source::Local,
                toolset: "bench".into(),
                discoverable: true,
                ..Descriptor::default()
            }
        })
        .collect()
}

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

fn engine(c: &mut Criterion) {
    let embedder: Arc<dyn Embedder> = Arc::new(HashingEmbedder::new(384));
    let mut group = c.benchmark_group("engine");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(300));
    for count in [1_000, 10_000] {
        let dir = tempfile::tempdir().expect("tempdir");
        let descriptors = catalog(count, 8);
        let index = built(dir.path(), &descriptors, &embedder);
        let options = FindOptions::default();
        group.bench_function(format!("find_3_entries/{count}x8"), |b| {
            b.iter(|| black_box(index.find(&entries(), &options).expect("find")))
        });
        group.bench_function(format!("open/{count}x8"), |b| {
            b.iter(|| black_box(Index::open(dir.path(), embedder.clone()).expect("open")))
        });
        if count == 10_000 {
            // One timed build instead of criterion samples: ten 10,000 x 8 builds would
            // keep both cores busy for minutes.
            let out = tempfile::tempdir().expect("tempdir");
            let started = std::time::Instant::now();
            Index::build(&descriptors, embedder.as_ref(), out.path(), &mut |_| {}).expect("build");
            eprintln!("build_hashing_embedder/10000x8: {:.2?}", started.elapsed());
        }
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
    group.finish();
}

// criterion_group! generates an undocumented function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::engine, super::with_model);
}
criterion_main!(group::benches);
