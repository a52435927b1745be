//! A local OpenAI-compatible `/v1/embeddings` server over a real socket: it embeds with
//! the embedder it wraps (the real MiniLM where it matters), answers in reverse order (a
//! client must sort by `index`), reports a configurable model name, and can be scripted
//! to fail, stall or answer wrongly before it answers.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use chalie_index::Embedder;
use serde_json::{Value, json};

/// One scripted answer, used instead of embedding.
#[derive(Clone, Debug)]
pub enum Fault {
    /// An error status with a body, and a `Retry-After` in seconds when given.
    Status(u16, &'static str, Option<&'static str>),
    /// No answer for this long, then the real one.
    Stall(Duration),
    /// A success status with this body.
    Body(&'static str),
}

/// What the server saw and will do.
#[derive(Default)]
pub struct Script {
    /// Consumed one per request, before real answers.
    pub faults: VecDeque<Fault>,
    /// Number of texts of every request received, probe included.
    pub batches: Vec<usize>,
    /// The `Authorization` header of the last request.
    pub authorization: Option<String>,
    /// The model name put in responses.
    pub reported_model: String,
}

struct Served {
    embedder: Arc<dyn Embedder>,
    script: Arc<Mutex<Script>>,
}

/// A running server; dropped, it stops.
pub struct Server {
    /// `http://127.0.0.1:PORT/v1`, the base URL a client is given.
    pub base_url: String,
    pub script: Arc<Mutex<Script>>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Server {
    /// Serves `embedder`'s vectors, reporting `reported_model`, on a thread and runtime of
    /// its own (the embedder under test blocks its caller, as it must).
    pub fn start(embedder: Arc<dyn Embedder>, reported_model: &str) -> Server {
        let script = Arc::new(Mutex::new(Script {
            reported_model: reported_model.to_owned(),
            ..Script::default()
        }));
        let state = Arc::new(Served {
            embedder,
            script: script.clone(),
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (bound, address) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("server runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                bound
                    .send(listener.local_addr().expect("address"))
                    .expect("report address");
                let app = Router::new()
                    .route("/v1/embeddings", post(embeddings))
                    .with_state(state);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await
                    .expect("serve");
            });
        });
        let address = address.recv().expect("the server starts");
        Server {
            base_url: format!("http://{address}/v1"),
            script,
            _stop: stop,
        }
    }

    /// Queues `faults` to be answered before any real answer.
    pub fn fail_with(&self, faults: impl IntoIterator<Item = Fault>) {
        self.script.lock().expect("script").faults.extend(faults);
    }

    /// The batch sizes received so far, probe included.
    pub fn batches(&self) -> Vec<usize> {
        self.script.lock().expect("script").batches.clone()
    }

    pub fn set_reported_model(&self, model: &str) {
        self.script.lock().expect("script").reported_model = model.to_owned();
    }
}

async fn embeddings(
    State(served): State<Arc<Served>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let request: Value = match serde_json::from_str(&body) {
        Ok(request) => request,
        Err(error) => return (StatusCode::BAD_REQUEST, error.to_string()).into_response(),
    };
    let texts: Vec<String> = request["input"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let (fault, reported_model) = {
        let mut script = served.script.lock().expect("script");
        script.batches.push(texts.len());
        script.authorization = headers
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        (script.faults.pop_front(), script.reported_model.clone())
    };
    match fault {
        Some(Fault::Status(status, body, retry_after)) => {
            let status = StatusCode::from_u16(status).expect("status");
            let mut response = (status, body).into_response();
            if let Some(seconds) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", seconds.parse().expect("header"));
            }
            return response;
        }
        Some(Fault::Body(body)) => return (StatusCode::OK, body).into_response(),
        Some(Fault::Stall(pause)) => tokio::time::sleep(pause).await,
        None => {}
    }
    let embedder = served.embedder.clone();
    let vectors = tokio::task::spawn_blocking(move || {
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        embedder.embed_batch(&texts)
    })
    .await
    .expect("embedding task");
    let mut vectors = match vectors {
        Ok(vectors) => vectors,
        Err(error) => {
            return (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response();
        }
    };
    // `dimensions`, as OpenAI's text-embedding-3 models do it: the first n components.
    if let Some(dimensions) = request["dimensions"].as_u64() {
        vectors
            .iter_mut()
            .for_each(|vector| vector.truncate(dimensions as usize));
    }
    let data: Vec<Value> = vectors
        .iter()
        .enumerate()
        .rev()
        .map(
            |(index, vector)| json!({ "object": "embedding", "index": index, "embedding": vector }),
        )
        .collect();
    axum::Json(json!({
        "object": "list",
        "data": data,
        "model": reported_model,
        "usage": { "prompt_tokens": 0, "total_tokens": 0 },
    }))
    .into_response()
}
