//! The one error type of the crate; every variant has a stable code for tool results.

use std::path::PathBuf;

/// Why the embedder could not produce vectors.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model folder lacks a file; run `cargo xtask fetch-model`.
    #[error("model file `{}` is missing; run `cargo xtask fetch-model`", path.display())]
    ModelMissing {
        /// The missing file.
        path: PathBuf,
    },
    /// The model files exist but could not be loaded.
    #[error("cannot load the embedding model: {0}")]
    ModelLoad(String),
    /// Tokenising or running the model failed.
    #[error("embedding failed: {0}")]
    Inference(String),
}

/// Everything that can go wrong building, opening or querying an index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// No manifest at the given folder: the index was never built there.
    #[error("no index at `{}`; build it with `cargo xtask index`", dir.display())]
    Missing {
        /// The folder that was opened.
        dir: PathBuf,
    },
    /// An artifact is unreadable or does not match its checksum.
    #[error("index artifact `{}` is corrupt: {reason}; rebuild with `cargo xtask index`", path.display())]
    Corrupt {
        /// The damaged file.
        path: PathBuf,
        /// What was wrong with it.
        reason: String,
    },
    /// The index was built from other descriptors or another embedder than the current ones.
    #[error("index is stale: {reason}; rebuild with `cargo xtask index`")]
    Stale {
        /// What changed since the build.
        reason: String,
    },
    /// A descriptor breaks the naming or content rules.
    #[error("descriptor `{name}` is invalid: {reason}")]
    InvalidDescriptor {
        /// The offending name.
        name: String,
        /// The rule it breaks.
        reason: String,
    },
    /// Two descriptors share a source and a name.
    #[error("descriptor `{name}` appears twice in the same source")]
    DuplicateName {
        /// The duplicated qualified name.
        name: String,
    },
    /// The embedder failed.
    #[error(transparent)]
    Embed(#[from] EmbedError),
    /// Writing the index failed (disk, or a backend error while building).
    #[error("cannot write the index at `{}`: {reason}", path.display())]
    Write {
        /// The file or folder being written.
        path: PathBuf,
        /// The underlying error.
        reason: String,
    },
    /// A search backend failed at query time.
    #[error("index search failed: {0}")]
    Search(String),
}

impl IndexError {
    /// Stable, kebab-case code for tool results and logs.
    pub fn code(&self) -> &'static str {
        match self {
            IndexError::Missing { .. } => "index-missing",
            IndexError::Corrupt { .. } => "index-corrupt",
            IndexError::Stale { .. } => "index-stale",
            IndexError::InvalidDescriptor { .. } => "invalid-descriptor",
            IndexError::DuplicateName { .. } => "duplicate-descriptor",
            IndexError::Embed(_) => "embedder-failed",
            IndexError::Write { .. } => "index-write-failed",
            IndexError::Search(_) => "index-search-failed",
        }
    }
}
