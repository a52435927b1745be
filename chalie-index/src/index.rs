//! Opening an index folder at run time, verified, and checking it against descriptors.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::descriptor::{self, Descriptor, Source, discoverable, normalise_name};
use crate::embed::Embedder;
use crate::error::IndexError;
use crate::keyword::{NAMES_DIR, NameIndex};
use crate::manifest::{Manifest, Verify, corrupt};
use crate::vector::{PROSE_FILE, ProseIndex};

/// File holding what a hit returns (names, summaries, sources) for each ordinal.
pub(crate) const ENTRIES_FILE: &str = "descriptors.json";

/// What a discoverable descriptor keeps at run time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct StoredEntry {
    pub(crate) name: String,
    pub(crate) qualified: String,
    pub(crate) summary: String,
    pub(crate) source: Source,
    pub(crate) toolset: String,
    pub(crate) vectors: usize,
    /// How far the descriptor's own requests land ([`crate::keep::reach`]); `None` without
    /// example phrases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reach: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) parameters: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) body: String,
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
    /// Whether any skill, and any ability, is indexed: a search scoped to one kind needs a
    /// filter only when the other kind is present.
    pub(crate) has_skills: bool,
    pub(crate) has_abilities: bool,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("descriptors", &self.entries.len())
            .field("vectors", &self.manifest.vector_count)
            .finish()
    }
}

impl Index {
    /// Opens the index at `dir`, verifying every artifact's checksum (xxh3-64, see
    /// [`Manifest::fast_files`]) and that it was built with `embedder` and by this version of
    /// the code.
    ///
    /// The index keeps the embedder to embed queries, hence the `Arc`.
    pub fn open(dir: &Path, embedder: Arc<dyn Embedder>) -> Result<Index, IndexError> {
        Index::open_verifying(dir, embedder, Verify::Fast)
    }

    fn open_verifying(
        dir: &Path,
        embedder: Arc<dyn Embedder>,
        verify: Verify,
    ) -> Result<Index, IndexError> {
        let manifest = Manifest::read(dir)?;
        manifest.check_compatible(embedder.as_ref())?;
        let mut contents = manifest.verify_files(dir, verify)?;
        let artifact = |file: &str| -> Result<&[u8], IndexError> {
            contents
                .get(file)
                .map(|bytes| &**bytes)
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
        let prose_bytes = contents
            .remove(PROSE_FILE)
            .ok_or_else(|| corrupt(&dir.join(PROSE_FILE), "the manifest does not list it"))?;
        let prose = ProseIndex::from_artifact(
            dir,
            prose_bytes,
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
        let has_skills = entries.iter().any(|e| e.source == Source::Skill);
        let has_abilities = entries.iter().any(|e| e.source != Source::Skill);
        Ok(Index {
            manifest,
            entries,
            names,
            prose,
            embedder,
            by_bare,
            by_qualified,
            max_vectors,
            has_skills,
            has_abilities,
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
    /// would record, and every artifact with both of its checksums (sha256 included, which
    /// [`Index::open`] leaves out for speed). This is `cargo xtask index --check`.
    pub fn check(
        dir: &Path,
        descriptors: &[Descriptor],
        embedder: &dyn Embedder,
    ) -> Result<Manifest, IndexError> {
        let manifest = Manifest::read(dir)?;
        manifest.check_compatible(embedder)?;
        check_fingerprint(&manifest, descriptors)?;
        manifest.verify_files(dir, Verify::Full)?;
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

    /// Every skill in the index as `(name, summary, playbook)`, in index
    /// order: what a host serves as MCP skills (chalie-core's
    /// `McpServerBuilder::skills`).
    pub fn skills(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.entries
            .iter()
            .filter(|entry| entry.source == Source::Skill)
            .map(|entry| {
                (
                    entry.name.as_str(),
                    entry.summary.as_str(),
                    entry.body.as_str(),
                )
            })
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
