//! Building an index folder offline: validate, embed (each distinct text once), write the
//! artifacts, then seal them in the manifest.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use crate::cache::EmbeddingCache;
use crate::descriptor::{self, Descriptor, discoverable};
use crate::embed::Embedder;
use crate::error::IndexError;
use crate::index::{ENTRIES_FILE, Index, StoredEntry};
use crate::keyword::{self, NAMES_DIR};
use crate::manifest::{self, EmbedderInfo, FORMAT_VERSION, MANIFEST_FILE, Manifest};
use crate::vector::{self, CENTROID_SLOT, KEYS_FILE, PROSE_FILE};

/// Texts embedded per call during a build; also the granularity of progress reports.
const BUILD_BATCH: usize = 256;

/// Phase of a build, for progress reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildStage {
    /// Embedding summaries and examples; `done`/`total` count texts.
    Embedding,
    /// Writing and checksumming the artifacts; `done`/`total` count files written.
    Writing,
}

/// What an incremental build ([`Index::build_cached`]) reused and redid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildReport {
    /// The manifest written.
    pub manifest: Manifest,
    /// Distinct texts embedded by this build.
    pub embedded: usize,
    /// Distinct texts whose vector came from the cache.
    pub reused: usize,
    /// How the vector graph was made.
    pub graph: GraphBuild,
}

/// How a build made the vector graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphBuild {
    /// Every vector inserted into a new graph; `reason` says why the previous one could
    /// not be edited (none there, another embedder or version, too much changed, ...).
    Rebuilt {
        /// Why the previous graph was not reused.
        reason: String,
    },
    /// The previous graph, verified, with the changed vectors removed and re-added.
    Edited {
        /// Vectors removed (gone or changed).
        removed: usize,
        /// Vectors inserted (new or changed).
        added: usize,
        /// Unchanged vectors whose key moved because a descriptor's ordinal shifted.
        renamed: usize,
    },
}

/// One progress report of [`Index::build`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildProgress {
    /// Current phase.
    pub stage: BuildStage,
    /// Units finished in this phase.
    pub done: usize,
    /// Units in this phase.
    pub total: usize,
}

/// The texts embedded for one descriptor: the summary text first, then each distinct example.
fn texts_of(descriptor: &Descriptor) -> Vec<String> {
    let mut texts = vec![descriptor::summary_text(descriptor)];
    let mut seen = BTreeSet::new();
    for example in &descriptor.examples {
        let example = example.trim();
        if !example.is_empty() && seen.insert(example) && texts.len() < CENTROID_SLOT {
            texts.push(example.to_owned());
        }
    }
    texts
}

/// The normalised mean of unit vectors.
fn centroid(vectors: &[&Vec<f32>]) -> Vec<f32> {
    let mut sum = vec![0.0f32; vectors.first().map_or(0, |v| v.len())];
    for vector in vectors {
        sum.iter_mut().zip(vector.iter()).for_each(|(s, v)| *s += v);
    }
    crate::embed::l2_normalise(&mut sum);
    sum
}

fn remove_artifacts(dir: &Path) -> Result<(), IndexError> {
    // The manifest goes first, so an interrupted build reads as missing, never as valid.
    for file in [MANIFEST_FILE, ENTRIES_FILE, PROSE_FILE, KEYS_FILE] {
        let path = dir.join(file);
        if path.exists() {
            std::fs::remove_file(&path).map_err(|e| IndexError::Write {
                path,
                reason: e.to_string(),
            })?;
        }
    }
    let names = dir.join(NAMES_DIR);
    if names.exists() {
        std::fs::remove_dir_all(&names).map_err(|e| IndexError::Write {
            path: names,
            reason: e.to_string(),
        })?;
    }
    Ok(())
}

impl Index {
    /// Builds the index for `descriptors` into `out_dir`, replacing any index there: every
    /// text embedded, every vector inserted into a new graph.
    ///
    /// Non-discoverable descriptors are validated and fingerprinted but written nowhere.
    /// `progress` is called after every embedding batch and every artifact written.
    pub fn build(
        descriptors: &[Descriptor],
        embedder: &dyn Embedder,
        out_dir: &Path,
        progress: &mut dyn FnMut(BuildProgress),
    ) -> Result<Manifest, IndexError> {
        Ok(build_uncached(descriptors, embedder, out_dir, progress)?.manifest)
    }

    /// Like [`Index::build`], reusing what an earlier build did: texts found in `cache`
    /// are not embedded again (the new ones are added to it, and texts no longer used
    /// dropped; the caller saves it), and when `out_dir` holds a valid index built with
    /// the same embedder and code, its vector graph is edited in place (changed vectors
    /// removed and re-added) instead of rebuilt. A previous index that fails its checksums
    /// is not edited but replaced.
    pub fn build_cached(
        descriptors: &[Descriptor],
        embedder: &dyn Embedder,
        out_dir: &Path,
        cache: &mut EmbeddingCache,
        progress: &mut dyn FnMut(BuildProgress),
    ) -> Result<BuildReport, IndexError> {
        build_into(descriptors, embedder, out_dir, Some(cache), progress)
    }
}

/// [`Index::build`] with its report.
pub(crate) fn build_uncached(
    descriptors: &[Descriptor],
    embedder: &dyn Embedder,
    out_dir: &Path,
    progress: &mut dyn FnMut(BuildProgress),
) -> Result<BuildReport, IndexError> {
    build_into(descriptors, embedder, out_dir, None, progress)
}

/// Above this share of changed vectors a new graph is built: many removals leave many
/// tombstones, and re-inserting most vectors costs what a new graph does.
const MAX_EDITED_SHARE: f64 = 0.25;

/// The previous index at `dir`, if it can be edited: its vector file and, per key, the
/// (qualified name, slot) it belongs to and the hash of its vector.
struct Previous {
    prose: crate::manifest::Artifact,
    vectors: HashMap<(String, usize), (u64, u64)>,
}

fn previous(dir: &Path, embedder: &dyn Embedder) -> Result<Previous, String> {
    let manifest = manifest::Manifest::read(dir).map_err(|error| match error {
        IndexError::Missing { .. } => "no index was there before".to_owned(),
        other => other.to_string(),
    })?;
    manifest
        .check_compatible(embedder)
        .map_err(|e| e.to_string())?;
    let mut contents = manifest
        .verify_files(dir, manifest::Verify::Fast)
        .map_err(|e| e.to_string())?;
    let (Some(entries), Some(keys), Some(prose)) = (
        contents.remove(ENTRIES_FILE),
        contents.remove(KEYS_FILE),
        contents.remove(PROSE_FILE),
    ) else {
        return Err("the previous index lacks a file an edit needs".to_owned());
    };
    let entries: Vec<StoredEntry> = serde_json::from_slice(&entries).map_err(|e| e.to_string())?;
    let keys = vector::read_keys(&keys).ok_or("the previous key table is malformed")?;
    if keys.len() != manifest.vector_count || manifest.vector_count == 0 {
        return Err("the previous index holds no vectors to edit".to_owned());
    }
    let mut vectors = HashMap::with_capacity(keys.len());
    for (key, hash) in keys {
        let entry = entries
            .get(vector::ordinal_of(key))
            .ok_or("the previous key table names a missing descriptor")?;
        vectors.insert((entry.qualified.clone(), vector::slot_of(key)), (key, hash));
    }
    Ok(Previous { prose, vectors })
}

/// The edit turning `previous` into `keyed`, or why a new graph is better.
fn edit<'a>(
    previous: &Previous,
    keyed: &'a [(u64, Vec<f32>)],
    entries: &[StoredEntry],
) -> Result<vector::GraphEdit<'a>, String> {
    let mut edit = vector::GraphEdit {
        removed: Vec::new(),
        renamed: Vec::new(),
        added: Vec::new(),
    };
    let mut matched = HashSet::new();
    for pair in keyed {
        let (key, vector) = pair;
        let identity = (
            entries[vector::ordinal_of(*key)].qualified.clone(),
            vector::slot_of(*key),
        );
        match previous.vectors.get(&identity) {
            Some(&(old, hash)) if hash == vector::vector_hash(vector) => {
                matched.insert(old);
                if old != *key {
                    edit.renamed.push((old, *key));
                }
            }
            _ => edit.added.push(pair),
        }
    }
    edit.removed = previous
        .vectors
        .values()
        .map(|&(old, _)| old)
        .filter(|old| !matched.contains(old))
        .collect();
    let changed = edit.removed.len() + edit.added.len();
    if changed as f64 > MAX_EDITED_SHARE * keyed.len() as f64 {
        return Err(format!(
            "{changed} of {} vectors changed, more than an edit is worth",
            keyed.len()
        ));
    }
    Ok(edit)
}

fn build_into(
    descriptors: &[Descriptor],
    embedder: &dyn Embedder,
    out_dir: &Path,
    mut cache: Option<&mut EmbeddingCache>,
    progress: &mut dyn FnMut(BuildProgress),
) -> Result<BuildReport, IndexError> {
    let kept = discoverable(descriptors)?;
    let texts_per_descriptor: Vec<Vec<String>> = kept.iter().map(|d| texts_of(d)).collect();

    // Identical texts (shared examples, repeated summaries) are embedded once.
    let mut unique: Vec<&str> = Vec::new();
    let mut slot_of_text: HashMap<&str, usize> = HashMap::new();
    for text in texts_per_descriptor.iter().flatten() {
        slot_of_text.entry(text.as_str()).or_insert_with(|| {
            unique.push(text.as_str());
            unique.len() - 1
        });
    }
    let mut embedded: Vec<Option<Vec<f32>>> = unique
        .iter()
        .map(|text| cache.as_ref().and_then(|c| c.get(text)).cloned())
        .collect();
    let missing: Vec<usize> = (0..unique.len())
        .filter(|&slot| embedded[slot].is_none())
        .collect();
    progress(BuildProgress {
        stage: BuildStage::Embedding,
        done: 0,
        total: missing.len(),
    });
    let mut done = 0;
    for batch in missing.chunks(BUILD_BATCH) {
        let texts: Vec<&str> = batch.iter().map(|&slot| unique[slot]).collect();
        let vectors = embedder.embed_batch(&texts)?;
        if vectors.len() != batch.len() || vectors.iter().any(|v| v.len() != embedder.dimensions())
        {
            return Err(IndexError::Embed(crate::EmbedError::Inference(
                "the embedder returned vectors of the wrong count or length".to_owned(),
            )));
        }
        for (&slot, vector) in batch.iter().zip(vectors) {
            if let Some(cache) = cache.as_mut() {
                cache.insert(unique[slot].to_owned(), vector.clone());
            }
            embedded[slot] = Some(vector);
        }
        done += batch.len();
        progress(BuildProgress {
            stage: BuildStage::Embedding,
            done,
            total: missing.len(),
        });
    }
    let embedded: Vec<Vec<f32>> = embedded
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect();
    if let Some(cache) = cache.as_mut() {
        cache.retain(&unique.iter().copied().collect());
    }

    let mut keyed = Vec::new();
    let mut entries = Vec::with_capacity(kept.len());
    for (ordinal, (descriptor, texts)) in kept.iter().zip(&texts_per_descriptor).enumerate() {
        let first_key = keyed.len();
        let vectors: Vec<&Vec<f32>> = texts
            .iter()
            .map(|text| &embedded[slot_of_text[text.as_str()]])
            .collect();
        for (slot, vector) in vectors.iter().enumerate() {
            keyed.push((vector::key(ordinal, slot), (*vector).clone()));
        }
        // A summary and one example are their own centroid's two halves; from two
        // examples on, the centroid says what they have in common.
        if texts.len() >= 3 {
            keyed.push((vector::key(ordinal, CENTROID_SLOT), centroid(&vectors)));
        }
        entries.push(StoredEntry {
            name: descriptor.name.clone(),
            qualified: descriptor.qualified_name(),
            summary: descriptor.summary.clone(),
            source: descriptor.source.clone(),
            toolset: descriptor.toolset.clone(),
            vectors: keyed.len() - first_key,
            reach: crate::keep::reach(&vectors),
            parameters: descriptor.parameters.clone(),
            body: descriptor.body.clone(),
        });
    }

    // Read (and verified) before the old artifacts are removed; the mapping outlives
    // the removal.
    let plan = match cache {
        None => Err("the cache is off".to_owned()),
        Some(_) => previous(out_dir, embedder)
            .and_then(|previous| edit(&previous, &keyed, &entries).map(|edit| (previous, edit))),
    };

    std::fs::create_dir_all(out_dir).map_err(|e| IndexError::Write {
        path: out_dir.to_owned(),
        reason: e.to_string(),
    })?;
    remove_artifacts(out_dir)?;
    let writing = |done| BuildProgress {
        stage: BuildStage::Writing,
        done,
        total: 3,
    };
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    keyword::write(out_dir, &names)?;
    progress(writing(1));
    let graph = match &plan {
        Ok((previous, edit)) => {
            vector::update(out_dir, embedder.dimensions(), &previous.prose, edit)?;
            GraphBuild::Edited {
                removed: edit.removed.len(),
                added: edit.added.len(),
                renamed: edit.renamed.len(),
            }
        }
        Err(reason) => {
            vector::write(out_dir, embedder.dimensions(), &keyed)?;
            GraphBuild::Rebuilt {
                reason: reason.clone(),
            }
        }
    };
    drop(plan);
    vector::write_keys(out_dir, &keyed)?;
    progress(writing(2));
    let entries_path = out_dir.join(ENTRIES_FILE);
    let entries_json = serde_json::to_vec(&entries).map_err(|e| IndexError::Write {
        path: entries_path.clone(),
        reason: e.to_string(),
    })?;
    std::fs::write(&entries_path, entries_json).map_err(|e| IndexError::Write {
        path: entries_path,
        reason: e.to_string(),
    })?;

    let (chalie_index_version, tantivy_version, usearch_version) = manifest::running_versions();
    let (files, fast_files) = manifest::hash_tree(out_dir)?;
    let mut manifest = Manifest {
        format: FORMAT_VERSION,
        chalie_index_version,
        tantivy_version,
        usearch_version,
        embedder: EmbedderInfo::of(embedder),
        descriptors_fingerprint: descriptor::fingerprint(descriptors),
        local_fingerprint: descriptor::local_fingerprint(descriptors),
        descriptor_count: entries.len(),
        vector_count: keyed.len(),
        files,
        fast_files,
        self_sha256: String::new(),
    };
    manifest.write(out_dir)?;
    progress(writing(3));
    Ok(BuildReport {
        manifest,
        embedded: missing.len(),
        reused: unique.len() - missing.len(),
        graph,
    })
}
