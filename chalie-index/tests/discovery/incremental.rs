//! Incremental builds: the embedding cache, its integrity, and the vector graph edited in
//! place, built the way `cargo xtask index` builds (open the cache, build, save).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chalie_index::{
    BuildReport, Descriptor, EmbedError, Embedder, EmbeddingCache, FindOptions, GraphBuild,
    HashingEmbedder, Index,
};

use crate::support::{entries, local};

/// The test embedder, counting every text it is asked to embed.
#[derive(Default)]
struct Counting {
    inner: HashingEmbedder,
    texts: AtomicUsize,
}

impl Embedder for Counting {
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
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        self.inner.embed_batch(texts)
    }
}

impl Counting {
    fn take(&self) -> usize {
        self.texts.swap(0, Ordering::SeqCst)
    }
}

fn catalog() -> Vec<Descriptor> {
    let mut catalog = vec![
        local("web_search", "Search the web for pages about a topic"),
        local("weather", "Current weather and forecast for a city"),
        local("read_file", "Read a file from disk"),
        local("send_email", "Send an email message to a contact"),
    ];
    for (descriptor, examples) in catalog.iter_mut().zip([
        [
            "look up rust release notes",
            "search online for pasta recipes",
        ],
        [
            "will it rain in Lyon tomorrow",
            "forecast for Oslo this weekend",
        ],
        ["open the config file", "show me what notes.txt says"],
        [
            "mail the report to Ana",
            "write to my landlord about the heating",
        ],
    ]) {
        descriptor.examples = examples.map(String::from).to_vec();
    }
    catalog
}

/// One build as the xtask runs it: open the cache, build into `dir`, save the cache.
fn build(dir: &Path, cache_file: &Path, embedder: &Counting, descriptors: &[Descriptor]) -> Built {
    let mut cache = EmbeddingCache::open(cache_file, embedder);
    let discarded = cache.discarded().map(str::to_owned);
    let report =
        Index::build_cached(descriptors, embedder, dir, &mut cache, &mut |_| {}).expect("build");
    cache.save().expect("save the cache");
    Built {
        report,
        discarded,
        embedded: embedder.take(),
    }
}

struct Built {
    report: BuildReport,
    discarded: Option<String>,
    /// Texts the embedder was actually asked to embed.
    embedded: usize,
}

fn top(dir: &Path, query: &str) -> String {
    let index = Index::open(dir, Arc::new(HashingEmbedder::default())).expect("open");
    let outcome = index
        .find(&entries(&[query]), &FindOptions::default())
        .expect("find");
    outcome
        .injected
        .first()
        .map(|hit| hit.name.clone())
        .unwrap_or_default()
}

#[test]
fn a_rebuild_embeds_only_what_changed_and_edits_the_graph() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (dir, cache) = (
        scratch.path().join("index"),
        scratch.path().join("cache.bin"),
    );
    let embedder = Counting::default();

    let cold = build(&dir, &cache, &embedder, &catalog());
    assert_eq!(cold.embedded, 12, "4 summaries and 8 examples");
    assert_eq!((cold.report.embedded, cold.report.reused), (12, 0));
    assert!(matches!(cold.report.graph, GraphBuild::Rebuilt { .. }));

    let again = build(&dir, &cache, &embedder, &catalog());
    assert_eq!(again.embedded, 0, "nothing changed, nothing embedded");
    assert_eq!(
        again.report.graph,
        GraphBuild::Edited {
            removed: 0,
            added: 0,
            renamed: 0
        }
    );

    let mut edited = catalog();
    edited[1].examples[0] = "is it snowing in Denver right now".into();
    let after = build(&dir, &cache, &embedder, &edited);
    assert_eq!(after.embedded, 1, "only the edited example");
    // The example and the centroid it moves are replaced; nothing else is touched.
    assert_eq!(
        after.report.graph,
        GraphBuild::Edited {
            removed: 2,
            added: 2,
            renamed: 0
        }
    );
    Index::check(&dir, &edited, &HashingEmbedder::default()).expect("the edited index checks");
    assert_eq!(top(&dir, "snowing in Denver"), "weather");
    assert_eq!(top(&dir, "mail the report to Ana"), "send_email");
}

#[test]
fn a_new_ability_moves_the_others_keys_without_reembedding_them() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (dir, cache) = (
        scratch.path().join("index"),
        scratch.path().join("cache.bin"),
    );
    let embedder = Counting::default();
    build(&dir, &cache, &embedder, &catalog());

    // "calendar" sorts between the others, so every later ordinal shifts by one.
    let mut grown = catalog();
    grown.push(local("calendar", "Add an event to the calendar"));
    let after = build(&dir, &cache, &embedder, &grown);
    assert_eq!(after.embedded, 1);
    let GraphBuild::Edited {
        removed,
        added,
        renamed,
    } = after.report.graph
    else {
        panic!("expected an edit, got {:?}", after.report.graph);
    };
    assert_eq!((removed, added), (0, 1));
    assert!(renamed > 0, "the shifted abilities' keys move");
    Index::check(&dir, &grown, &HashingEmbedder::default()).expect("the grown index checks");
    for (query, expected) in [
        ("add an event to the calendar", "calendar"),
        ("forecast for Oslo this weekend", "weather"),
        ("open the config file", "read_file"),
        ("mail the report to Ana", "send_email"),
    ] {
        assert_eq!(top(&dir, query), expected, "{query}");
    }
}

#[test]
fn an_edited_index_finds_what_a_cold_build_finds() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (dir, cache) = (
        scratch.path().join("index"),
        scratch.path().join("cache.bin"),
    );
    let cold_dir = scratch.path().join("cold");
    let embedder = Counting::default();
    build(&dir, &cache, &embedder, &catalog());
    let mut edited = catalog();
    edited[0].summary = "Search the internet for web pages".into();
    edited.remove(2);
    build(&dir, &cache, &embedder, &edited);
    Index::build(&edited, &HashingEmbedder::default(), &cold_dir, &mut |_| {}).expect("cold");
    for query in [
        "search the internet",
        "rain in Lyon",
        "open the config file",
        "write to my landlord",
    ] {
        assert_eq!(top(&dir, query), top(&cold_dir, query), "{query}");
    }
}

#[test]
fn a_damaged_previous_index_is_replaced_not_edited() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (dir, cache) = (
        scratch.path().join("index"),
        scratch.path().join("cache.bin"),
    );
    let embedder = Counting::default();
    build(&dir, &cache, &embedder, &catalog());
    for file in ["prose.usearch", "prose.keys", "descriptors.json"] {
        let path = dir.join(file);
        let mut bytes = std::fs::read(&path).expect("read");
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        std::fs::write(&path, bytes).expect("damage");
        let after = build(&dir, &cache, &embedder, &catalog());
        let GraphBuild::Rebuilt { reason } = &after.report.graph else {
            panic!("{file}: a damaged index was edited");
        };
        assert!(reason.contains("corrupt"), "{file}: {reason}");
        assert_eq!(after.embedded, 0, "{file}: the cache still serves");
        Index::check(&dir, &catalog(), &HashingEmbedder::default()).expect("rebuilt");
    }
}

/// A cache file rewritten with `edit` and resealed with a valid checksum, as a tool that
/// knows the layout but writes it wrong would: only the structure checks catch these.
fn resealed(bytes: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut body = bytes[..bytes.len() - 8].to_vec();
    edit(&mut body);
    let checksum = xxhash_rust::xxh3::xxh3_64(&body);
    body.extend(checksum.to_le_bytes());
    body
}

#[test]
fn a_damaged_cache_is_discarded_loudly_and_rebuilt() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (dir, cache) = (
        scratch.path().join("index"),
        scratch.path().join("cache.bin"),
    );
    let embedder = Counting::default();
    build(&dir, &cache, &embedder, &catalog());
    let good = std::fs::read(&cache).expect("cache file");
    // Header: magic (8), format (4), dims (4), then the model id's length.
    let count_at = {
        let model = embedder.model_id().len();
        let hash = embedder.weight_hash().len();
        8 + 4 + 4 + 4 + model + 4 + hash
    };
    let damages: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("truncated in a record", good[..good.len() / 2].to_vec()),
        ("without its checksum", good[..good.len() - 8].to_vec()),
        ("a flipped byte in the header", {
            let mut bytes = good.clone();
            bytes[10] ^= 0x01;
            bytes
        }),
        ("a flipped byte in a vector", {
            let mut bytes = good.clone();
            let at = bytes.len() - 20;
            bytes[at] ^= 0x10;
            bytes
        }),
        ("a flipped checksum", {
            let mut bytes = good.clone();
            let last = bytes.len() - 1;
            bytes[last] ^= 0x01;
            bytes
        }),
        ("garbage appended", [good.as_slice(), b"extra"].concat()),
        (
            "another file type",
            resealed(&good, |b| b[..8].copy_from_slice(b"NOTACACH")),
        ),
        (
            "a future format",
            resealed(&good, |b| b[8..12].copy_from_slice(&99u32.to_le_bytes())),
        ),
        (
            "more records than it holds",
            resealed(&good, |b| {
                let count = u64::from_le_bytes(b[count_at..count_at + 8].try_into().expect("8"));
                b[count_at..count_at + 8].copy_from_slice(&(count + 1).to_le_bytes());
            }),
        ),
        (
            "fewer records than it holds",
            resealed(&good, |b| {
                b[count_at..count_at + 8].copy_from_slice(&1u64.to_le_bytes())
            }),
        ),
        (
            "a vector that is not a number",
            resealed(&good, |b| {
                let at = b.len() - 4;
                b[at..].copy_from_slice(&f32::NAN.to_le_bytes());
            }),
        ),
    ];
    for (damage, bytes) in damages {
        std::fs::write(&cache, &bytes).expect("damage the cache");
        let after = build(&dir, &cache, &embedder, &catalog());
        let reason = after
            .discarded
            .unwrap_or_else(|| panic!("{damage}: the damaged cache was used"));
        assert!(!reason.is_empty(), "{damage}");
        assert_eq!(after.embedded, 12, "{damage}: every text embedded again");
        // The save replaced the damaged file with a good one.
        let reopened = EmbeddingCache::open(&cache, &embedder);
        assert_eq!(reopened.discarded(), None, "{damage}");
        assert_eq!(reopened.len(), 12, "{damage}");
    }
}

/// An embedder with other weights than [`Counting`]'s.
struct Retrained(HashingEmbedder);

impl Embedder for Retrained {
    fn model_id(&self) -> &str {
        self.0.model_id()
    }
    fn dimensions(&self) -> usize {
        self.0.dimensions()
    }
    fn weight_hash(&self) -> &str {
        "retrained"
    }
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.0.embed_batch(texts)
    }
}

#[test]
fn a_cache_for_other_weights_is_never_used() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let (dir, cache) = (
        scratch.path().join("index"),
        scratch.path().join("cache.bin"),
    );
    build(&dir, &cache, &Counting::default(), &catalog());
    let other = Retrained(HashingEmbedder::default());
    let opened = EmbeddingCache::open(&cache, &other);
    let reason = opened.discarded().expect("other weights");
    assert!(reason.contains("not for the embedder in use"), "{reason}");
    assert!(opened.is_empty());
    // Each model has its own file name in a cache folder.
    assert_ne!(
        EmbeddingCache::path_in(scratch.path(), &other),
        EmbeddingCache::path_in(scratch.path(), &Counting::default())
    );
}
