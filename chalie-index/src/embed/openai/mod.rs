//! An [`Embedder`] that calls an OpenAI-compatible `/v1/embeddings` endpoint: OpenAI,
//! vLLM, Ollama, llama.cpp's server, text-embeddings-inference.

mod wire;
mod worker;

use std::time::Duration;

use sha2::{Digest, Sha256};

use super::Embedder;
use crate::descriptor::hex;
use crate::error::{EmbedError, EndpointFailure};
use worker::{Endpoint, Worker};

/// The text embedded when the embedder is built, to learn the vectors' length and the
/// model the endpoint reports.
const PROBE: &str = "chalie embedder probe";

/// Texts per request by default: text-embeddings-inference refuses more than 32 unless
/// started with a larger `--max-client-batch-size`; OpenAI takes up to 2048.
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// Embeddings from an OpenAI-compatible endpoint, for building an index and for queries.
///
/// Built by [`OpenAiEmbedder::builder`], which embeds one probe text: the vectors' length
/// and the model the endpoint reports are known before anything is indexed. Both go into
/// the index manifest with the model id ([`Embedder::weight_hash`] is a hash of the
/// reported model and the length), so opening an index with another model, another
/// length or another server's idea of the model fails with `index-stale`, never with
/// neighbours from a different vector space.
///
/// Texts are sent in batches ([`OpenAiEmbedderBuilder::batch_size`]); each request has a
/// timeout, and a rate limit (429), a server error (5xx), a timeout or a failed connection
/// is retried with doubling backoff (a `Retry-After` in seconds is honoured). A failure
/// that remains is an [`EmbedError::Endpoint`] with its [`EndpointFailure`]. Every vector
/// is checked (count, length, finite) and scaled to unit length.
///
/// Calls block the calling thread until the vectors arrive, as the built-in model's
/// inference does; the HTTP work runs on a thread the embedder owns, so a call from
/// inside an async runtime is safe. The endpoint must not be served by the same
/// single-threaded runtime that calls it.
///
/// ```no_run
/// use std::sync::Arc;
///
/// use chalie_index::{Index, OpenAiEmbedder, default_index_dir};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let embedder = OpenAiEmbedder::builder("http://localhost:11434/v1", "nomic-embed-text")
///     .build()?;
/// let index = Index::open(&default_index_dir(".".as_ref()), Arc::new(embedder))?;
/// # let _ = index;
/// # Ok(())
/// # }
/// ```
pub struct OpenAiEmbedder {
    worker: Worker,
    model: String,
    url: String,
    dimensions: usize,
    reported_model: Option<String>,
    identity: String,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // No API key here: it must not reach a log.
        f.debug_struct("OpenAiEmbedder")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("dimensions", &self.dimensions)
            .field("reported_model", &self.reported_model)
            .finish()
    }
}

/// Settings of an [`OpenAiEmbedder`]; [`OpenAiEmbedderBuilder::build`] connects.
#[derive(Clone)]
pub struct OpenAiEmbedderBuilder {
    endpoint: Endpoint,
}

impl std::fmt::Debug for OpenAiEmbedderBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedderBuilder")
            .field("url", &self.endpoint.url)
            .field("model", &self.endpoint.model)
            .finish_non_exhaustive()
    }
}

impl OpenAiEmbedder {
    /// An embedder for `model` at `base_url`, the API root as OpenAI clients take it
    /// (`https://api.openai.com/v1`, `http://localhost:8000/v1`); `/embeddings` is added.
    pub fn builder(base_url: &str, model: impl Into<String>) -> OpenAiEmbedderBuilder {
        let base = base_url.trim_end_matches('/');
        let url = if base.ends_with("/embeddings") {
            base.to_owned()
        } else {
            format!("{base}/embeddings")
        };
        OpenAiEmbedderBuilder {
            endpoint: Endpoint {
                url,
                model: model.into(),
                api_key: None,
                dimensions: None,
                batch_size: DEFAULT_BATCH_SIZE,
                timeout: Duration::from_secs(30),
                retries: 4,
                backoff: Duration::from_millis(500),
            },
        }
    }

    /// The URL requested.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The model the endpoint said answered the probe, if it said.
    pub fn reported_model(&self) -> Option<&str> {
        self.reported_model.as_deref()
    }
}

impl OpenAiEmbedderBuilder {
    /// Sends `key` as a bearer token.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.endpoint.api_key = Some(key.into());
        self
    }

    /// Asks for vectors of `dimensions` (the `dimensions` parameter, which OpenAI's
    /// `text-embedding-3` models honour); vectors of another length are then an error.
    pub fn dimensions(mut self, dimensions: usize) -> Self {
        self.endpoint.dimensions = Some(dimensions);
        self
    }

    /// Texts per request (at least 1; default [`DEFAULT_BATCH_SIZE`]).
    pub fn batch_size(mut self, texts: usize) -> Self {
        self.endpoint.batch_size = texts.max(1);
        self
    }

    /// Longest wait for one request's response, connection included (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.endpoint.timeout = timeout;
        self
    }

    /// Tries after the first for a retryable failure (default 4).
    pub fn retries(mut self, retries: u32) -> Self {
        self.endpoint.retries = retries;
        self
    }

    /// Wait before the first retry, doubled for each one after (default 500 ms).
    pub fn backoff(mut self, first_wait: Duration) -> Self {
        self.endpoint.backoff = first_wait;
        self
    }

    /// Starts the HTTP client and embeds the probe text, so the vectors' length and the
    /// reported model are known; an endpoint that is down or wrong fails here.
    pub fn build(self) -> Result<OpenAiEmbedder, EmbedError> {
        let requested = self.endpoint.dimensions;
        let (url, model) = (self.endpoint.url.clone(), self.endpoint.model.clone());
        let worker = Worker::start(self.endpoint)?;
        let probe = worker.embed(vec![PROBE.to_owned()], requested)?;
        let dimensions =
            probe
                .vectors
                .first()
                .map(Vec::len)
                .ok_or_else(|| EmbedError::Endpoint {
                    url: url.clone(),
                    failure: EndpointFailure::Malformed("no vector for the probe".to_owned()),
                })?;
        let identity = hex(&Sha256::digest(
            format!(
                "openai-embeddings\n{}\n{dimensions}",
                probe.model.as_deref().unwrap_or("")
            )
            .as_bytes(),
        ));
        Ok(OpenAiEmbedder {
            worker,
            model,
            url,
            dimensions,
            reported_model: probe.model,
            identity,
        })
    }
}

impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> &str {
        &self.model
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// sha256 of the model the endpoint reports and the vectors' length: the weights
    /// themselves are out of reach.
    fn weight_hash(&self) -> &str {
        &self.identity
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let owned = texts.iter().map(|text| (*text).to_owned()).collect();
        let embeddings = self.worker.embed(owned, Some(self.dimensions))?;
        // A server that starts answering as another model mid-way gives vectors of another
        // space even at the same length: refuse them rather than mix them in.
        if let (Some(now), Some(probed)) = (&embeddings.model, &self.reported_model)
            && now != probed
        {
            return Err(EmbedError::Endpoint {
                url: self.url.clone(),
                failure: EndpointFailure::ModelChanged {
                    probed: probed.clone(),
                    now: now.clone(),
                },
            });
        }
        Ok(embeddings.vectors)
    }
}
