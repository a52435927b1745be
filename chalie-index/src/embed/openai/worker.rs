//! The thread that speaks HTTP for [`super::OpenAiEmbedder`].
//!
//! [`crate::Embedder`] is synchronous and is called from inside async code (`find_tools`
//! runs on the host's runtime), where blocking on a future of that runtime panics or
//! deadlocks. So the embedder owns one thread running a small runtime of its own: a call
//! hands its texts over and waits on a plain channel, which works on any thread, in a
//! runtime or not. Each call is its own task there, so concurrent calls do not queue.

use std::sync::Arc;
use std::time::Duration;

use super::wire::{self, Embeddings};
use crate::error::{EmbedError, EndpointFailure};
use chalie_core::result::error_chain;

/// What a request needs: where, as whom, and how patiently.
#[derive(Clone, Debug)]
pub(super) struct Endpoint {
    pub(super) url: String,
    pub(super) model: String,
    pub(super) api_key: Option<String>,
    pub(super) dimensions: Option<usize>,
    pub(super) batch_size: usize,
    pub(super) timeout: Duration,
    pub(super) retries: u32,
    pub(super) backoff: Duration,
}

/// Longest wait between two attempts, whatever the backoff or `Retry-After` asks.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

struct Job {
    texts: Vec<String>,
    /// Known after the probe; every later vector must have it.
    expected: Option<usize>,
    reply: std::sync::mpsc::SyncSender<Result<Embeddings, EmbedError>>,
}

/// The HTTP thread; dropping it ends the thread and cancels what is in flight.
pub(super) struct Worker {
    jobs: Option<tokio::sync::mpsc::UnboundedSender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
    url: String,
}

impl Worker {
    pub(super) fn start(endpoint: Endpoint) -> Result<Worker, EmbedError> {
        let url = endpoint.url.clone();
        let client_error = |reason: String| EmbedError::Endpoint {
            url: url.clone(),
            failure: EndpointFailure::Client(reason),
        };
        let client = reqwest::Client::builder()
            .timeout(endpoint.timeout)
            .connect_timeout(endpoint.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|error| {
                client_error(format!(
                    "the HTTP client could not be built: {}",
                    error_chain(&error)
                ))
            })?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| client_error(format!("no runtime for the HTTP client: {error}")))?;
        let (jobs, mut queue) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let endpoint = Arc::new(endpoint);
        let thread = std::thread::Builder::new()
            .name("chalie-embeddings".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some(job) = queue.recv().await {
                        let (client, endpoint) = (client.clone(), endpoint.clone());
                        tokio::spawn(async move {
                            let result = embed(&client, &endpoint, job.texts, job.expected).await;
                            // The caller waits for this; if it is gone there is no one to tell.
                            let _ = job.reply.send(result);
                        });
                    }
                });
            })
            .map_err(|error| client_error(format!("no thread for the HTTP client: {error}")))?;
        Ok(Worker {
            jobs: Some(jobs),
            thread: Some(thread),
            url,
        })
    }

    /// Embeds `texts` on the HTTP thread and waits for the vectors.
    pub(super) fn embed(
        &self,
        texts: Vec<String>,
        expected: Option<usize>,
    ) -> Result<Embeddings, EmbedError> {
        let stopped = || EmbedError::Endpoint {
            url: self.url.clone(),
            failure: EndpointFailure::Client("the embedder's HTTP thread has stopped".to_owned()),
        };
        let (reply, answer) = std::sync::mpsc::sync_channel(1);
        let job = Job {
            texts,
            expected,
            reply,
        };
        self.jobs
            .as_ref()
            .ok_or_else(stopped)?
            .send(job)
            .map_err(|_| stopped())?;
        answer.recv().map_err(|_| stopped())?
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the queue ends the thread's loop; its runtime then drops every task.
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Every text in batches of `batch_size`, one request each, in order.
async fn embed(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    texts: Vec<String>,
    mut expected: Option<usize>,
) -> Result<Embeddings, EmbedError> {
    let mut all = Embeddings {
        vectors: Vec::with_capacity(texts.len()),
        model: None,
    };
    for batch in texts.chunks(endpoint.batch_size.max(1)) {
        let embeddings = post(client, endpoint, batch, expected)
            .await
            .map_err(|failure| EmbedError::Endpoint {
                url: endpoint.url.clone(),
                failure,
            })?;
        expected = embeddings.vectors.first().map(Vec::len).or(expected);
        all.vectors.extend(embeddings.vectors);
        all.model = all.model.or(embeddings.model);
    }
    Ok(all)
}

/// One batch, retried on 429, 5xx, timeouts and failed connections.
async fn post(
    client: &reqwest::Client,
    endpoint: &Endpoint,
    batch: &[String],
    expected: Option<usize>,
) -> Result<Embeddings, EndpointFailure> {
    let body = wire::request_body(&endpoint.model, batch, endpoint.dimensions);
    let mut attempts = 0;
    loop {
        attempts += 1;
        let mut request = client
            .post(&endpoint.url)
            .header("content-type", "application/json")
            .body(body.clone());
        if let Some(key) = &endpoint.api_key {
            request = request.bearer_auth(key);
        }
        let failure = match request.send().await {
            Ok(response) if response.status().is_success() => match response.bytes().await {
                Ok(bytes) => return wire::parse_response(&bytes, batch.len(), expected),
                Err(error) => transport(&error, attempts, endpoint.timeout),
            },
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = retry_after(response.headers());
                let message = wire::error_message(&response.bytes().await.unwrap_or_default());
                let failure = EndpointFailure::Status {
                    status,
                    attempts,
                    message,
                };
                if !(status == 429 || status >= 500) {
                    return Err(failure);
                }
                if attempts <= endpoint.retries {
                    let wait = retry_after.unwrap_or_else(|| backoff(endpoint.backoff, attempts));
                    tokio::time::sleep(wait.min(MAX_BACKOFF)).await;
                    continue;
                }
                failure
            }
            Err(error) => transport(&error, attempts, endpoint.timeout),
        };
        if attempts > endpoint.retries {
            return Err(failure);
        }
        tokio::time::sleep(backoff(endpoint.backoff, attempts).min(MAX_BACKOFF)).await;
    }
}

/// `first`, doubled for every attempt after the first.
fn backoff(first: Duration, attempts: u32) -> Duration {
    first.saturating_mul(1u32 << attempts.saturating_sub(1).min(16))
}

/// The server's `Retry-After` in seconds (the HTTP-date form is not worth a date parser
/// here: the computed backoff stands in for it).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers
        .get("retry-after")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

fn transport(error: &reqwest::Error, attempts: u32, timeout: Duration) -> EndpointFailure {
    if error.is_timeout() {
        EndpointFailure::TimedOut {
            timeout_ms: timeout.as_millis().try_into().unwrap_or(u64::MAX),
            attempts,
        }
    } else {
        EndpointFailure::Unreachable {
            attempts,
            reason: error_chain(error),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_the_first_wait() {
        let first = Duration::from_millis(100);
        let waits: Vec<u128> = (1..=4).map(|a| backoff(first, a).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 800]);
        assert_eq!(backoff(first, 200), first.saturating_mul(1 << 16));
    }

    #[test]
    fn retry_after_is_read_in_seconds() {
        let mut headers = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(
            "retry-after",
            "Wed, 21 Oct 2026 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), None);
    }
}
