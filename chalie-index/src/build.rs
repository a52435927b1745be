//! Building an index folder offline: validate, embed (each distinct text once), write the
//! artifacts, then seal them in the manifest.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use crate::descriptor::{self, Descriptor};
use crate::embed::Embedder;
use crate::error::IndexError;
use crate::index::{ENTRIES_FILE, Index, StoredEntry};
use crate::keyword::{self, NAMES_DIR};
use crate::manifest::{self, EmbedderInfo, FORMAT_VERSION, MANIFEST_FILE, Manifest};
use crate::vector::{self, CENTROID_SLOT, PROSE_FILE};

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

/// Validates all descriptors and returns the discoverable ones in canonical order.
pub(crate) fn discoverable(descriptors: &[Descriptor]) -> Result<Vec<&Descriptor>, IndexError> {
    let mut seen = BTreeSet::new();
    for descriptor in descriptors {
        descriptor::validate(descriptor)?;
        if !seen.insert((&descriptor.source, &descriptor.name)) {
            return Err(IndexError::DuplicateName {
                name: descriptor.qualified_name(),
            });
        }
    }
    let mut kept: Vec<&Descriptor> = descriptors.iter().filter(|d| d.discoverable).collect();
    kept.sort_by(|a, b| (&a.source, &a.name).cmp(&(&b.source, &b.name)));
    Ok(kept)
}

fn remove_artifacts(dir: &Path) -> Result<(), IndexError> {
    // The manifest goes first, so an interrupted build reads as missing, never as valid.
    for file in [MANIFEST_FILE, ENTRIES_FILE, PROSE_FILE] {
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
    /// Builds the index for `descriptors` into `out_dir`, replacing any index there.
    ///
    /// Non-discoverable descriptors are validated and fingerprinted but written nowhere.
    /// `progress` is called after every embedding batch and every artifact written.
    pub fn build(
        descriptors: &[Descriptor],
        embedder: &dyn Embedder,
        out_dir: &Path,
        progress: &mut dyn FnMut(BuildProgress),
    ) -> Result<Manifest, IndexError> {
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
        let mut embedded: Vec<Vec<f32>> = Vec::with_capacity(unique.len());
        progress(BuildProgress {
            stage: BuildStage::Embedding,
            done: 0,
            total: unique.len(),
        });
        for batch in unique.chunks(BUILD_BATCH) {
            let vectors = embedder.embed_batch(batch)?;
            if vectors.len() != batch.len()
                || vectors.iter().any(|v| v.len() != embedder.dimensions())
            {
                return Err(IndexError::Embed(crate::EmbedError::Inference(
                    "the embedder returned vectors of the wrong count or length".to_owned(),
                )));
            }
            embedded.extend(vectors);
            progress(BuildProgress {
                stage: BuildStage::Embedding,
                done: embedded.len(),
                total: unique.len(),
            });
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
                parameters: descriptor.parameters.clone(),
                body: descriptor.body.clone(),
            });
        }

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
        vector::write(out_dir, embedder.dimensions(), &keyed)?;
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
        Ok(manifest)
    }
}
