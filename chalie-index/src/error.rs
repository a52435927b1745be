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
    /// An embeddings endpoint ([`crate::OpenAiEmbedder`]) gave no usable vectors.
    #[error("the embeddings endpoint `{url}` failed: {failure}")]
    Endpoint {
        /// The URL requested (`…/embeddings`).
        url: String,
        /// What went wrong, after any retries.
        failure: EndpointFailure,
    },
}

/// Why an embeddings endpoint gave no usable vectors.
///
/// Rate limits (429) and server errors (5xx), timeouts and refused connections are retried
/// with backoff first; `attempts` counts every try.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointFailure {
    /// The server answered with an error status. A 4xx other than 429 is not retried: the
    /// request itself is wrong (a bad key, an unknown model, a text too long).
    #[error("HTTP {status} after {attempts} attempt(s): {message}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// Tries made, the first included.
        attempts: u32,
        /// The server's error message, or the start of its body.
        message: String,
    },
    /// No response within the timeout of any attempt.
    #[error("no response within {timeout_ms} ms, {attempts} attempt(s)")]
    TimedOut {
        /// The per-request timeout.
        timeout_ms: u64,
        /// Tries made, the first included.
        attempts: u32,
    },
    /// The server could not be reached (refused, reset, DNS, TLS).
    #[error("unreachable after {attempts} attempt(s): {reason}")]
    Unreachable {
        /// Tries made, the first included.
        attempts: u32,
        /// The transport's error, with its causes.
        reason: String,
    },
    /// A success response that is not what the embeddings API returns: not JSON, a vector
    /// missing or twice, a value that is not a finite number, a zero vector.
    #[error("the response is not an embeddings response: {0}")]
    Malformed(String),
    /// The vectors are not of the expected length: the endpoint serves another model than
    /// the one probed, or ignored the requested `dimensions`.
    #[error("vectors of {got} dimensions, expected {expected}")]
    Dimensions {
        /// The length expected.
        expected: usize,
        /// The length received.
        got: usize,
    },
    /// A response named another model than the one that answered the probe: its vectors
    /// belong to another space, even at the same length.
    #[error("answered as model `{now}`, the probe was answered by `{probed}`")]
    ModelChanged {
        /// The model that answered when the embedder was built.
        probed: String,
        /// The model that answered now.
        now: String,
    },
    /// The HTTP client could not be built (no usable TLS configuration) or has stopped.
    #[error("{0}")]
    Client(String),
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
