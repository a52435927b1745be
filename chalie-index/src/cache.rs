//! The embedding cache: every vector a build computed, keyed by the embedder's weight hash
//! and the exact text, so the next build embeds only the texts that changed.
//!
//! The file is checked like every artifact: a header names the format, the model and its
//! weight hash, and an xxh3-64 of everything before it closes the file. A cache that fails
//! any check is never used: [`EmbeddingCache::open`] starts empty and says why in
//! [`EmbeddingCache::discarded`], which the caller shows to the user; the next
//! [`EmbeddingCache::save`] replaces the damaged file.
//!
//! Layout, little-endian: the magic `CHALIEEC`, the format (u32), the dimensions (u32), the
//! model id and the weight hash (each a u32 length and UTF-8 bytes), the record count (u64);
//! then per record the text (u32 length, bytes) and `dimensions` f32; then the checksum.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::embed::Embedder;
use crate::error::IndexError;

const MAGIC: &[u8; 8] = b"CHALIEEC";

/// Bumped whenever the cache layout changes; an older file is discarded, not misread.
pub const CACHE_FORMAT_VERSION: u32 = 1;

/// Default embedding cache folder under a workspace root: `.chalie/cache`, where
/// `cargo xtask index` keeps it.
pub fn default_cache_dir(workspace_root: &Path) -> PathBuf {
    workspace_root.join(".chalie").join("cache")
}

/// Vectors computed by earlier builds, for one embedder.
pub struct EmbeddingCache {
    path: PathBuf,
    model_id: String,
    weight_hash: String,
    dimensions: usize,
    vectors: HashMap<String, Vec<f32>>,
    /// Whether `vectors` differs from what the file holds.
    changed: bool,
    discarded: Option<String>,
}

impl std::fmt::Debug for EmbeddingCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingCache")
            .field("path", &self.path)
            .field("vectors", &self.vectors.len())
            .field("discarded", &self.discarded)
            .finish()
    }
}

/// Reads the file's parts in order, failing with what is wrong.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8], String> {
        if self.rest.len() < count {
            return Err("it ends in the middle of a record".to_owned());
        }
        let (head, tail) = self.rest.split_at(count);
        self.rest = tail;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let bytes = self.take(4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(bytes))
    }

    fn text(&mut self) -> Result<&'a str, String> {
        let length = self.u32()? as usize;
        std::str::from_utf8(self.take(length)?).map_err(|_| "a text is not UTF-8".to_owned())
    }
}

fn put_text(bytes: &mut Vec<u8>, text: &str) {
    bytes.extend((text.len() as u32).to_le_bytes());
    bytes.extend(text.as_bytes());
}

impl EmbeddingCache {
    /// The cache file for `embedder` in `dir`: one file per weight hash, so switching
    /// models back and forth keeps both caches.
    pub fn path_in(dir: &Path, embedder: &dyn Embedder) -> PathBuf {
        let hash: String = embedder
            .weight_hash()
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(16)
            .collect();
        dir.join(format!("embeddings-{hash}.bin"))
    }

    /// Opens the cache at `path` for `embedder`. A missing file is an empty cache; a file
    /// that is damaged, or written for another model or format, is discarded (and
    /// [`EmbeddingCache::discarded`] says why), never used.
    pub fn open(path: &Path, embedder: &dyn Embedder) -> EmbeddingCache {
        let mut cache = EmbeddingCache {
            path: path.to_owned(),
            model_id: embedder.model_id().to_owned(),
            weight_hash: embedder.weight_hash().to_owned(),
            dimensions: embedder.dimensions(),
            vectors: HashMap::new(),
            changed: false,
            discarded: None,
        };
        match std::fs::read(path) {
            Ok(bytes) => match cache.parse(&bytes) {
                Ok(vectors) => cache.vectors = vectors,
                Err(reason) => {
                    cache.discarded = Some(reason);
                    // Saving replaces the damaged file even if nothing new is embedded.
                    cache.changed = true;
                }
            },
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                cache.discarded = Some(format!("it cannot be read: {error}"));
                cache.changed = true;
            }
        }
        cache
    }

    fn parse(&self, bytes: &[u8]) -> Result<HashMap<String, Vec<f32>>, String> {
        let Some(body_length) = bytes.len().checked_sub(8) else {
            return Err("it is too short to hold a header".to_owned());
        };
        let (body, checksum) = bytes.split_at(body_length);
        let mut stored = [0u8; 8];
        stored.copy_from_slice(checksum);
        if xxhash_rust::xxh3::xxh3_64(body) != u64::from_le_bytes(stored) {
            return Err("its checksum does not match its contents".to_owned());
        }
        let mut reader = Reader { rest: body };
        if reader.take(MAGIC.len())? != MAGIC {
            return Err("it is not an embedding cache".to_owned());
        }
        let format = reader.u32()?;
        if format != CACHE_FORMAT_VERSION {
            return Err(format!(
                "it has format {format}, this is format {CACHE_FORMAT_VERSION}"
            ));
        }
        let dimensions = reader.u32()? as usize;
        let model_id = reader.text()?;
        let weight_hash = reader.text()?;
        if dimensions != self.dimensions
            || model_id != self.model_id
            || weight_hash != self.weight_hash
        {
            return Err(format!(
                "it was written for {model_id} ({dimensions} dims, weights {}), not for the \
                 embedder in use",
                weight_hash.get(..12).unwrap_or(weight_hash)
            ));
        }
        let count = reader.u64()?;
        let record = dimensions * 4;
        let mut vectors = HashMap::new();
        for _ in 0..count {
            let text = reader.text()?;
            let vector: Vec<f32> = reader
                .take(record)?
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            if vector.iter().any(|x| !x.is_finite()) {
                return Err(format!("the vector of {text:?} is not finite"));
            }
            if vectors.insert(text.to_owned(), vector).is_some() {
                return Err(format!("{text:?} appears twice"));
            }
        }
        if !reader.rest.is_empty() {
            return Err("it holds more than its record count says".to_owned());
        }
        Ok(vectors)
    }

    /// Why the file on disk was not used, if it was discarded; the caller should show it.
    pub fn discarded(&self) -> Option<&str> {
        self.discarded.as_deref()
    }

    /// Where the cache is read from and saved to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of cached vectors.
    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    /// Whether the cache holds no vector.
    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// The cached vector of exactly `text`.
    pub fn get(&self, text: &str) -> Option<&Vec<f32>> {
        self.vectors.get(text)
    }

    pub(crate) fn insert(&mut self, text: String, vector: Vec<f32>) {
        self.vectors.insert(text, vector);
        self.changed = true;
    }

    /// Drops every vector whose text is not in `used`, so the cache holds what the last
    /// build needed instead of growing with every edit.
    pub(crate) fn retain(&mut self, used: &HashSet<&str>) {
        let before = self.vectors.len();
        self.vectors.retain(|text, _| used.contains(text.as_str()));
        self.changed |= self.vectors.len() != before;
    }

    /// Writes the cache if it changed since it was opened, through a temporary file renamed
    /// into place, so an interrupted save leaves the old file or the new one, never half.
    pub fn save(&mut self) -> Result<(), IndexError> {
        if !self.changed {
            return Ok(());
        }
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| IndexError::Write {
                path: parent.to_owned(),
                reason: e.to_string(),
            })?;
        }
        let temporary = self.path.with_extension("bin.partial");
        self.write_to(&temporary)
            .and_then(|()| std::fs::rename(&temporary, &self.path))
            .map_err(|e| IndexError::Write {
                path: self.path.clone(),
                reason: e.to_string(),
            })?;
        self.changed = false;
        Ok(())
    }

    /// Streams the file out, checksumming as it goes: a large cache is never held twice.
    fn write_to(&self, path: &Path) -> std::io::Result<()> {
        let file = std::fs::File::create(path)?;
        let mut out = Sealed {
            out: std::io::BufWriter::with_capacity(1 << 20, file),
            hasher: xxhash_rust::xxh3::Xxh3Default::new(),
        };
        let mut header = Vec::new();
        header.extend(MAGIC);
        header.extend(CACHE_FORMAT_VERSION.to_le_bytes());
        header.extend((self.dimensions as u32).to_le_bytes());
        put_text(&mut header, &self.model_id);
        put_text(&mut header, &self.weight_hash);
        header.extend((self.vectors.len() as u64).to_le_bytes());
        out.put(&header)?;
        // Sorted, so the same vectors always make the same file.
        let mut texts: Vec<&String> = self.vectors.keys().collect();
        texts.sort_unstable();
        let mut record = Vec::with_capacity(self.dimensions * 4 + 64);
        for text in texts {
            record.clear();
            put_text(&mut record, text);
            for value in &self.vectors[text] {
                record.extend_from_slice(&value.to_le_bytes());
            }
            out.put(&record)?;
        }
        let checksum = out.hasher.digest();
        let mut file = out.out.into_inner().map_err(|e| e.into_error())?;
        std::io::Write::write_all(&mut file, &checksum.to_le_bytes())?;
        Ok(())
    }
}

/// A writer that checksums what it writes.
struct Sealed {
    out: std::io::BufWriter<std::fs::File>,
    hasher: xxhash_rust::xxh3::Xxh3Default,
}

impl Sealed {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        std::io::Write::write_all(&mut self.out, bytes)
    }
}
