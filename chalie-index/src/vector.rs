//! The prose index: one vector per summary and per example, in usearch, compared by cosine.
//!
//! Keys pack the descriptor's ordinal and the vector's slot (`ordinal << 16 | slot`), so a
//! hit maps back to its descriptor with no side table.

use std::path::Path;

use usearch::{Index as UsearchIndex, IndexOptions, MetricKind, ScalarKind};

use crate::error::IndexError;
use crate::manifest::{Artifact, corrupt};

/// File name of the vector index inside an index folder.
pub(crate) const PROSE_FILE: &str = "prose.usearch";

/// Vectors one descriptor may have: a summary, up to 65,534 examples and a centroid.
pub(crate) const MAX_SLOTS: usize = 1 << 16;

/// The slot of a descriptor's centroid: the normalised mean of its summary and example
/// vectors, stored for every descriptor with at least two examples.
pub(crate) const CENTROID_SLOT: usize = MAX_SLOTS - 1;

pub(crate) fn key(ordinal: usize, slot: usize) -> u64 {
    ((ordinal as u64) << 16) | slot as u64
}

pub(crate) fn ordinal_of(key: u64) -> usize {
    (key >> 16) as usize
}

pub(crate) fn slot_of(key: u64) -> usize {
    (key & 0xffff) as usize
}

fn options(dimensions: usize) -> IndexOptions {
    IndexOptions {
        dimensions,
        metric: MetricKind::Cos,
        // One byte per dimension: distances take a quarter of the f32 work (usearch's
        // int8 kernels), which is most of a search in a large index, and the file is half
        // the f16 one. Recall on the dev sets is unchanged within a query or two
        // (MetaTool with 8 examples R@5 .821 against .820 at f16; BFCL .810 against .812).
        quantization: ScalarKind::I8,
        connectivity: 0,
        expansion_add: 0,
        expansion_search: 0,
        multi: false,
    }
}

/// Below this many vectors a build inserts them on one thread, in order (see [`write`]).
const PARALLEL_INSERT_FROM: usize = 8_192;

/// Writes `vectors` (key, vector) to `dir/prose.usearch`.
pub(crate) fn write(
    dir: &Path,
    dimensions: usize,
    vectors: &[(u64, Vec<f32>)],
) -> Result<(), IndexError> {
    let path = dir.join(PROSE_FILE);
    let write_error = |error: &dyn std::fmt::Display| IndexError::Write {
        path: path.clone(),
        reason: error.to_string(),
    };
    let index = UsearchIndex::new(&options(dimensions)).map_err(|e| write_error(&e))?;
    // Graph insertion dominates a large build once embedding is done; usearch accepts
    // concurrent adds once capacity and thread slots are reserved. Concurrent adds make
    // the graph depend on thread timing, and with it which of two equally distant
    // (quantised) neighbours a search returns at its cut-off: a small catalog, where
    // one thread costs milliseconds, is inserted in order so that every build of it
    // ranks the same.
    let threads = if vectors.len() < PARALLEL_INSERT_FROM {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8)
    };
    index
        .reserve_capacity_and_threads(vectors.len().max(1), threads)
        .map_err(|e| write_error(&e))?;
    let chunk = vectors.len().div_ceil(threads).max(1);
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = vectors
            .chunks(chunk)
            .map(|part| {
                let index = &index;
                scope.spawn(move || {
                    part.iter().find_map(|(key, vector)| {
                        index.add(*key, vector).err().map(|e| e.to_string())
                    })
                })
            })
            .collect();
        workers
            .into_iter()
            .filter_map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|_| Some("an insert thread panicked".to_owned()))
            })
            .collect()
    });
    if let Some(failure) = failures.first() {
        return Err(write_error(failure));
    }
    let path_text = path
        .to_str()
        .ok_or_else(|| write_error(&"path is not UTF-8"))?;
    index.save(path_text).map_err(|e| write_error(&e))
}

/// File beside the vector index recording, for every key, the xxh3-64 of the exact `f32`
/// vector stored under it: what an incremental build compares to find the vectors that
/// changed, since the index itself keeps only their quantised form.
pub(crate) const KEYS_FILE: &str = "prose.keys";

/// The hash [`KEYS_FILE`] records for `vector`.
pub(crate) fn vector_hash(vector: &[f32]) -> u64 {
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    xxhash_rust::xxh3::xxh3_64(&bytes)
}

/// Writes [`KEYS_FILE`]: (key, vector hash) pairs, u64 little-endian, in key order.
pub(crate) fn write_keys(dir: &Path, vectors: &[(u64, Vec<f32>)]) -> Result<(), IndexError> {
    let mut pairs: Vec<(u64, u64)> = vectors.iter().map(|(k, v)| (*k, vector_hash(v))).collect();
    pairs.sort_unstable();
    let bytes: Vec<u8> = pairs
        .iter()
        .flat_map(|(key, hash)| key.to_le_bytes().into_iter().chain(hash.to_le_bytes()))
        .collect();
    let path = dir.join(KEYS_FILE);
    std::fs::write(&path, bytes).map_err(|e| IndexError::Write {
        path,
        reason: e.to_string(),
    })
}

/// Reads a verified [`KEYS_FILE`] back as key -> vector hash.
pub(crate) fn read_keys(bytes: &[u8]) -> Option<std::collections::HashMap<u64, u64>> {
    if !bytes.len().is_multiple_of(16) {
        return None;
    }
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        u64::from_le_bytes(w)
    };
    Some(
        bytes
            .chunks_exact(16)
            .map(|pair| (word(&pair[..8]), word(&pair[8..])))
            .collect(),
    )
}

/// The changes that turn a previous vector index into the current one.
pub(crate) struct GraphEdit<'a> {
    /// Keys whose vector is gone or changed.
    pub(crate) removed: Vec<u64>,
    /// Unchanged vectors whose key moved (a descriptor's ordinal shifted), as (from, to).
    pub(crate) renamed: Vec<(u64, u64)>,
    /// New or changed vectors.
    pub(crate) added: Vec<&'a (u64, Vec<f32>)>,
}

/// Writes `dir/prose.usearch` as `previous` (the bytes of a verified earlier index) with
/// `edit` applied, instead of inserting every vector again: a graph insert is the
/// costliest step of a build, and an edit touches a handful of vectors.
pub(crate) fn update(
    dir: &Path,
    dimensions: usize,
    previous: &[u8],
    edit: &GraphEdit<'_>,
) -> Result<(), IndexError> {
    let path = dir.join(PROSE_FILE);
    let write_error = |error: &dyn std::fmt::Display| IndexError::Write {
        path: path.clone(),
        reason: error.to_string(),
    };
    let index = UsearchIndex::new(&options(dimensions)).map_err(|e| write_error(&e))?;
    index
        .load_from_buffer(previous)
        .map_err(|e| write_error(&e))?;
    for key in &edit.removed {
        index.remove(*key).map_err(|e| write_error(&e))?;
    }
    // Through keys no ordinal reaches (bit 63), so a move onto a key another move vacates
    // never collides.
    let parked = |key: u64| key | (1 << 63);
    for (from, _) in &edit.renamed {
        index
            .rename(*from, parked(*from))
            .map_err(|e| write_error(&e))?;
    }
    for (from, to) in &edit.renamed {
        index
            .rename(parked(*from), *to)
            .map_err(|e| write_error(&e))?;
    }
    index
        .reserve(index.size() + edit.added.len())
        .map_err(|e| write_error(&e))?;
    for (key, vector) in &edit.added {
        index.add(*key, vector).map_err(|e| write_error(&e))?;
    }
    let path_text = path
        .to_str()
        .ok_or_else(|| write_error(&"path is not UTF-8"))?;
    index.save(path_text).map_err(|e| write_error(&e))
}

/// An opened vector index, viewing the mapped file it was verified from.
pub(crate) struct ProseIndex {
    // Declared before `_mapping`, so it is dropped first: it reads from the mapping.
    index: UsearchIndex,
    _mapping: Option<Artifact>,
}

impl ProseIndex {
    /// Views the index in `bytes`, a mapping the caller has already checksummed: nothing
    /// is copied, so opening costs the checksum, not a load.
    pub(crate) fn from_artifact(
        dir: &Path,
        bytes: Artifact,
        dimensions: usize,
        expected: usize,
    ) -> Result<ProseIndex, IndexError> {
        let path = dir.join(PROSE_FILE);
        let index = UsearchIndex::new(&options(dimensions)).map_err(|e| corrupt(&path, e))?;
        let bytes = if expected > 0 {
            // SAFETY: usearch reads the buffer for as long as the index lives; the mapping
            // is stored beside the index and outlives it (field order), and is never
            // written (see `Artifact`).
            #[allow(unsafe_code)]
            unsafe { index.view_from_buffer(&bytes) }.map_err(|e| corrupt(&path, e))?;
            Some(bytes)
        } else {
            None
        };
        if index.size() != expected || (expected > 0 && index.dimensions() != dimensions) {
            return Err(corrupt(
                &path,
                format!(
                    "holds {} vectors of {} dims, the manifest says {expected} of {dimensions}",
                    index.size(),
                    index.dimensions()
                ),
            ));
        }
        // A wider beam than the default: recall matters more than microseconds here.
        index.change_expansion_search(128);
        Ok(ProseIndex {
            index,
            _mapping: bytes,
        })
    }

    /// Up to `count` nearest vectors accepted by `keep` (all of them for `None`), as
    /// (key, cosine distance).
    ///
    /// Without a filter the plain search runs: usearch's filtered search calls back across
    /// the FFI boundary for every candidate it visits, which costs more than the distances.
    pub(crate) fn search(
        &self,
        query: &[f32],
        count: usize,
        keep: Option<&dyn Fn(u64) -> bool>,
    ) -> Result<Vec<(u64, f32)>, IndexError> {
        if self.index.size() == 0 || count == 0 {
            return Ok(Vec::new());
        }
        let matches = match keep {
            Some(keep) => self.index.filtered_search(query, count, keep),
            None => self.index.search(query, count),
        }
        .map_err(|e| IndexError::Search(e.to_string()))?;
        Ok(matches.keys.into_iter().zip(matches.distances).collect())
    }
}
