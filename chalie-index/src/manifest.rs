//! The manifest written beside the artifacts: what was built, from what, with which
//! versions, and the sha256 of every file. Opening trusts nothing it does not verify here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::descriptor::hex;
use crate::embed::Embedder;
use crate::error::IndexError;

/// File name of the manifest inside an index folder.
pub const MANIFEST_FILE: &str = "manifest.json";

/// Bumped whenever the artifact layout changes.
pub const FORMAT_VERSION: u32 = 4;

/// Identity of the embedder an index was built with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedderInfo {
    /// [`Embedder::model_id`].
    pub model_id: String,
    /// [`Embedder::dimensions`].
    pub dimensions: usize,
    /// [`Embedder::weight_hash`].
    pub weight_hash: String,
}

impl EmbedderInfo {
    /// Reads the identity of `embedder`.
    pub fn of(embedder: &dyn Embedder) -> EmbedderInfo {
        EmbedderInfo {
            model_id: embedder.model_id().to_owned(),
            dimensions: embedder.dimensions(),
            weight_hash: embedder.weight_hash().to_owned(),
        }
    }
}

/// Contents of `manifest.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Artifact layout version, bumped whenever the artifact layout changes.
    pub format: u32,
    /// Version of chalie-index that wrote the index.
    pub chalie_index_version: String,
    /// Version of tantivy that wrote the keyword index.
    pub tantivy_version: String,
    /// Version of usearch that wrote the vector index.
    pub usearch_version: String,
    /// The embedder used for every vector.
    pub embedder: EmbedderInfo,
    /// [`crate::fingerprint`] of all descriptors given to the build.
    pub descriptors_fingerprint: String,
    /// [`crate::local_fingerprint`] of the descriptors: the linked abilities alone.
    #[serde(default)]
    pub local_fingerprint: String,
    /// Number of discoverable descriptors indexed.
    pub descriptor_count: usize,
    /// Number of vectors in the vector index.
    pub vector_count: usize,
    /// sha256 of every artifact file, by path relative to the index folder (`/`-separated).
    /// Verified by [`crate::Index::check`] (`cargo xtask index --check`).
    pub files: BTreeMap<String, String>,
    /// xxh3-64 of every artifact file, by the same paths: verified by every
    /// [`crate::Index::open`]. It detects damage as surely as sha256 does for this purpose
    /// (random corruption, a truncated copy) at a twentieth of the cost, which is most of
    /// the open time of a large index.
    #[serde(default)]
    pub fast_files: BTreeMap<String, String>,
    /// sha256 of this manifest with this field empty, so a damaged manifest is noticed too.
    #[serde(default)]
    pub self_sha256: String,
}

/// Versions of the running code, compared with the manifest's.
pub(crate) fn running_versions() -> (String, String, String) {
    (
        env!("CARGO_PKG_VERSION").to_owned(),
        tantivy::version_string().to_owned(),
        usearch::version().to_owned(),
    )
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

pub(crate) fn xxh3_hex(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// Which checksums [`Manifest::verify_files`] compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verify {
    /// xxh3-64, on every open.
    Fast,
    /// sha256 as well, for the offline check.
    Full,
}

impl Manifest {
    fn self_hash(&self) -> String {
        let mut unsealed = self.clone();
        unsealed.self_sha256.clear();
        sha256_hex(
            serde_json::to_string(&unsealed)
                .unwrap_or_default()
                .as_bytes(),
        )
    }

    /// Writes the manifest, sealed with its own hash.
    pub(crate) fn write(&mut self, dir: &Path) -> Result<(), IndexError> {
        self.self_sha256 = self.self_hash();
        let path = dir.join(MANIFEST_FILE);
        let text = serde_json::to_string_pretty(self).map_err(|e| IndexError::Write {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        std::fs::write(&path, text + "\n").map_err(|e| IndexError::Write {
            path,
            reason: e.to_string(),
        })
    }

    /// Reads and unseals the manifest of the index at `dir`.
    pub fn read(dir: &Path) -> Result<Manifest, IndexError> {
        let path = dir.join(MANIFEST_FILE);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(IndexError::Missing {
                    dir: dir.to_owned(),
                });
            }
            Err(error) => return Err(corrupt(&path, error)),
        };
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|error| corrupt(&path, error))?;
        if manifest.self_sha256 != manifest.self_hash() {
            return Err(corrupt(
                &path,
                "the manifest does not match its own checksum",
            ));
        }
        Ok(manifest)
    }

    /// Fails with `index-stale` when the index was built by other code or another embedder.
    pub(crate) fn check_compatible(&self, embedder: &dyn Embedder) -> Result<(), IndexError> {
        let (ours, tantivy, usearch) = running_versions();
        let stale = |reason: String| Err(IndexError::Stale { reason });
        if self.format != FORMAT_VERSION || self.chalie_index_version != ours {
            return stale(format!(
                "built by chalie-index {} (format {}), this is {ours} (format {FORMAT_VERSION})",
                self.chalie_index_version, self.format
            ));
        }
        if self.tantivy_version != tantivy || self.usearch_version != usearch {
            return stale(format!(
                "built with {} and usearch {}, running {tantivy} and usearch {usearch}",
                self.tantivy_version, self.usearch_version
            ));
        }
        let running = EmbedderInfo::of(embedder);
        if self.embedder != running {
            return stale(format!(
                "built with embedder {} ({} dims, weights {}), running {} ({} dims, weights {})",
                self.embedder.model_id,
                self.embedder.dimensions,
                short(&self.embedder.weight_hash),
                running.model_id,
                running.dimensions,
                short(&running.weight_hash)
            ));
        }
        Ok(())
    }

    /// Maps every artifact and compares it with its recorded checksums (xxh3, and sha256
    /// too for [`Verify::Full`]). Returns each file's mapping, so callers load what was
    /// verified without reading or copying it again.
    pub(crate) fn verify_files(
        &self,
        dir: &Path,
        verify: Verify,
    ) -> Result<BTreeMap<String, Artifact>, IndexError> {
        if self.fast_files.len() != self.files.len() || self.fast_files.keys().ne(self.files.keys())
        {
            return Err(corrupt(
                &dir.join(MANIFEST_FILE),
                "its two checksum lists name different files",
            ));
        }
        let mut contents = BTreeMap::new();
        for (relative, expected) in &self.fast_files {
            let path = dir.join(relative);
            let bytes = Artifact::map(&path)?;
            if &xxh3_hex(&bytes) != expected {
                return Err(corrupt(&path, "its checksum does not match the manifest"));
            }
            if verify == Verify::Full && sha256_hex(&bytes) != self.files[relative] {
                return Err(corrupt(&path, "its sha256 does not match the manifest"));
            }
            contents.insert(relative.clone(), bytes);
        }
        Ok(contents)
    }
}

/// An artifact file mapped read-only into memory.
///
/// Mapping instead of reading saves a copy of every byte at each open, which for the
/// vector file of a large index was most of the open time; the vector index then reads
/// its graph straight from the mapping. A build never rewrites a file in place (it removes
/// the old artifacts first, and an open mapping keeps the removed file's data alive), so
/// only a hostile or careless process truncating a file under a running reader could
/// change what is mapped; tantivy's own files are mapped the same way.
pub(crate) struct Artifact(memmap2::Mmap);

impl Artifact {
    fn map(path: &Path) -> Result<Artifact, IndexError> {
        let file = std::fs::File::open(path).map_err(|error| corrupt(path, error))?;
        // SAFETY: see the type's documentation: the files of an index are written once and
        // replaced, not modified, so the mapped bytes do not change while mapped.
        #[allow(unsafe_code)]
        let mapping = unsafe { memmap2::Mmap::map(&file) }.map_err(|error| corrupt(path, error))?;
        Ok(Artifact(mapping))
    }
}

impl std::ops::Deref for Artifact {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.0
    }
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}

pub(crate) fn corrupt(path: &Path, reason: impl std::fmt::Display) -> IndexError {
    IndexError::Corrupt {
        path: PathBuf::from(path),
        reason: reason.to_string(),
    }
}

/// sha256 and xxh3 of every file, by relative path.
pub(crate) type Checksums = (BTreeMap<String, String>, BTreeMap<String, String>);

/// Hashes every regular file under `dir` except the manifest and tantivy's lock files
/// (which come and go with writers and carry no data).
pub(crate) fn hash_tree(dir: &Path) -> Result<Checksums, IndexError> {
    let mut files = BTreeMap::new();
    let mut fast_files = BTreeMap::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let absolute = dir.join(&relative);
        let entries = std::fs::read_dir(&absolute).map_err(|error| IndexError::Write {
            path: absolute.clone(),
            reason: error.to_string(),
        })?;
        for entry in entries {
            let entry = entry.map_err(|error| IndexError::Write {
                path: absolute.clone(),
                reason: error.to_string(),
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = relative.join(&name);
            if entry.path().is_dir() {
                pending.push(child);
                continue;
            }
            if name == MANIFEST_FILE && relative.as_os_str().is_empty() || name.ends_with(".lock") {
                continue;
            }
            let bytes = std::fs::read(entry.path()).map_err(|error| IndexError::Write {
                path: entry.path(),
                reason: error.to_string(),
            })?;
            let key = child
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            fast_files.insert(key.clone(), xxh3_hex(&bytes));
            files.insert(key, sha256_hex(&bytes));
        }
    }
    Ok((files, fast_files))
}
