//! Building an index folder offline and opening it at run time.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::descriptor::{self, Descriptor, Source, normalise_name};
use crate::embed::Embedder;
use crate::error::IndexError;
use crate::keyword::{self, NAMES_DIR, NameIndex};
use crate::manifest::{self, EmbedderInfo, FORMAT_VERSION, MANIFEST_FILE, Manifest, corrupt};
use crate::vector::{self, MAX_SLOTS, PROSE_FILE, ProseIndex};

/// File holding what a hit returns (names, summaries, sources) for each ordinal.
pub(crate) const ENTRIES_FILE: &str = "descriptors.json";

/// Texts embedded per call during a build; also the granularity of progress reports.
const BUILD_BATCH: usize = 256;

/// What a discoverable descriptor keeps at run time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct StoredEntry {
    pub(crate) name: String,
    pub(crate) qualified: String,
    pub(crate) summary: String,
    pub(crate) source: Source,
    pub(crate) toolset: String,
    pub(crate) vectors: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) parameters: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) body: String,
}

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

/// An opened, verified discovery index. Cheap to query from many threads.
pub struct Index {
    pub(crate) manifest: Manifest,
    pub(crate) entries: Vec<StoredEntry>,
    pub(crate) names: NameIndex,
    pub(crate) prose: ProseIndex,
    pub(crate) embedder: Arc<dyn Embedder>,
    /// Normalised bare name → ordinals; more than one means the bare name is ambiguous.
    pub(crate) by_bare: HashMap<String, Vec<usize>>,
    /// Normalised qualified name → ordinal.
    pub(crate) by_qualified: HashMap<String, usize>,
    /// Most vectors any one descriptor has; bounds how many neighbours a search must fetch.
    pub(crate) max_vectors: usize,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("descriptors", &self.entries.len())
            .field("vectors", &self.manifest.vector_count)
            .finish()
    }
}

/// The texts embedded for one descriptor: the summary text first, then each distinct example.
fn texts_of(descriptor: &Descriptor) -> Vec<String> {
    let mut texts = vec![descriptor::summary_text(descriptor)];
    let mut seen = BTreeSet::new();
    for example in &descriptor.examples {
        let example = example.trim();
        if !example.is_empty() && seen.insert(example) && texts.len() < MAX_SLOTS {
            texts.push(example.to_owned());
        }
    }
    texts
}

/// Validates all descriptors and returns the discoverable ones in canonical order.
fn discoverable(descriptors: &[Descriptor]) -> Result<Vec<&Descriptor>, IndexError> {
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
            for (slot, text) in texts.iter().enumerate() {
                let vector = &embedded[slot_of_text[text.as_str()]];
                keyed.push((vector::key(ordinal, slot), vector.clone()));
            }
            entries.push(StoredEntry {
                name: descriptor.name.clone(),
                qualified: descriptor.qualified_name(),
                summary: descriptor.summary.clone(),
                source: descriptor.source.clone(),
                toolset: descriptor.toolset.clone(),
                vectors: texts.len(),
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
            files: manifest::hash_tree(out_dir)?,
            self_sha256: String::new(),
        };
        manifest.write(out_dir)?;
        progress(writing(3));
        Ok(manifest)
    }

    /// Opens the index at `dir`, verifying every artifact's checksum and that it was built
    /// with `embedder` and by this version of the code.
    ///
    /// The index keeps the embedder to embed queries, hence the `Arc`.
    pub fn open(dir: &Path, embedder: Arc<dyn Embedder>) -> Result<Index, IndexError> {
        let manifest = Manifest::read(dir)?;
        manifest.check_compatible(embedder.as_ref())?;
        let contents = manifest.verify_files(dir)?;
        let artifact = |file: &str| -> Result<&Vec<u8>, IndexError> {
            contents
                .get(file)
                .ok_or_else(|| corrupt(&dir.join(file), "the manifest does not list it"))
        };
        let entries_path = dir.join(ENTRIES_FILE);
        let entries: Vec<StoredEntry> = serde_json::from_slice(artifact(ENTRIES_FILE)?)
            .map_err(|e| corrupt(&entries_path, e))?;
        if entries.len() != manifest.descriptor_count {
            return Err(corrupt(
                &entries_path,
                "descriptor count differs from the manifest",
            ));
        }
        let prose = ProseIndex::from_bytes(
            dir,
            artifact(PROSE_FILE)?,
            embedder.dimensions(),
            manifest.vector_count,
        )?;
        if !contents
            .keys()
            .any(|k| k.starts_with(&format!("{NAMES_DIR}/")))
        {
            return Err(corrupt(
                &dir.join(NAMES_DIR),
                "the manifest lists no keyword index files",
            ));
        }
        let names = NameIndex::open(dir)?;

        let mut by_bare: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_qualified = HashMap::new();
        for (ordinal, entry) in entries.iter().enumerate() {
            by_bare
                .entry(normalise_name(&entry.name))
                .or_default()
                .push(ordinal);
            by_qualified.insert(entry.qualified.clone(), ordinal);
        }
        let max_vectors = entries.iter().map(|e| e.vectors).max().unwrap_or(1);
        Ok(Index {
            manifest,
            entries,
            names,
            prose,
            embedder,
            by_bare,
            by_qualified,
            max_vectors,
        })
    }

    /// Like [`Index::open`], and also fails with `index-stale` unless the index was built
    /// from exactly `descriptors`.
    pub fn open_checked(
        dir: &Path,
        embedder: Arc<dyn Embedder>,
        descriptors: &[Descriptor],
    ) -> Result<Index, IndexError> {
        check_fingerprint(&Manifest::read(dir)?, descriptors)?;
        Index::open(dir, embedder)
    }

    /// Compares the manifest at `dir` with what a build from `descriptors` with `embedder`
    /// would record, without loading the artifacts. This is `cargo xtask index --check`.
    pub fn check(
        dir: &Path,
        descriptors: &[Descriptor],
        embedder: &dyn Embedder,
    ) -> Result<Manifest, IndexError> {
        let manifest = Manifest::read(dir)?;
        manifest.check_compatible(embedder)?;
        check_fingerprint(&manifest, descriptors)?;
        Ok(manifest)
    }

    /// Fails with `index-stale` unless the index's local abilities are exactly those of
    /// `linked` (other sources are ignored): what a program checks at start-up against
    /// [`Descriptor::from_registry`], which knows nothing of skills or external tools.
    pub fn check_local(&self, linked: &[Descriptor]) -> Result<(), IndexError> {
        let current = descriptor::local_fingerprint(linked);
        if self.manifest.local_fingerprint == current {
            return Ok(());
        }
        Err(IndexError::Stale {
            reason: format!(
                "the linked abilities changed since the build (fingerprint {} in the manifest, {} now)",
                self.manifest
                    .local_fingerprint
                    .get(..12)
                    .unwrap_or_default(),
                current.get(..12).unwrap_or_default()
            ),
        })
    }

    /// The parameters schema stored for the descriptor called `qualified`, if its source
    /// supplied one (external tools and catalogs do; linked abilities are read live).
    pub fn parameters_of(&self, qualified: &str) -> Option<&serde_json::Value> {
        let ordinal = *self.by_qualified.get(qualified)?;
        self.entries[ordinal].parameters.as_ref()
    }

    /// The playbook text stored for the skill called `name`.
    pub fn playbook_of(&self, name: &str) -> Option<&str> {
        let ordinal = *self.by_qualified.get(name)?;
        let entry = &self.entries[ordinal];
        (entry.source == Source::Skill).then_some(entry.body.as_str())
    }

    /// The verified manifest of this index.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Number of discoverable descriptors in the index.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the index holds no descriptor at all.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn check_fingerprint(manifest: &Manifest, descriptors: &[Descriptor]) -> Result<(), IndexError> {
    discoverable(descriptors)?;
    let current = descriptor::fingerprint(descriptors);
    if manifest.descriptors_fingerprint != current {
        return Err(IndexError::Stale {
            reason: format!(
                "the descriptors changed since the build (fingerprint {} in the manifest, {} now)",
                &manifest
                    .descriptors_fingerprint
                    .get(..12)
                    .unwrap_or_default(),
                current.get(..12).unwrap_or_default()
            ),
        });
    }
    Ok(())
}

/// Default index folder under a workspace root: `.chalie/index`.
pub fn default_index_dir(workspace_root: &Path) -> PathBuf {
    workspace_root.join(".chalie").join("index")
}
