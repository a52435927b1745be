//! An OpenAI-compatible streaming chat-completions client (feature
//! `openai`): any server that speaks that API (vLLM, llama.cpp, Ollama, a
//! gateway) by base URL and key.

pub(crate) mod connect;
pub(crate) mod sse;

use std::collections::VecDeque;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Value, json};

use crate::descriptor::Provider;
use crate::session::model::{Message, Model, ModelChunk, ModelError, ModelRequest, Role};
use connect::Connector;
use sse::{Assembler, SseParser};

/// A [`Model`] served over the OpenAI chat-completions API with
/// `stream: true`. Text deltas stream as they arrive; a tool call is
/// yielded once its argument deltas are complete.
///
/// ```
/// use chalie_core::session::OpenAiModel;
///
/// let model = OpenAiModel::new("http://127.0.0.1:11434/v1", "llama3.1")
///     .api_key("sk-local")
///     .temperature(0.2);
/// assert_eq!(model.endpoint(), "http://127.0.0.1:11434/v1/chat/completions");
/// ```
///
/// `https://` URLs are served over rustls, with the server's certificate
/// checked against the platform's trust store; a private CA is added with
/// [`root_certificates_pem`](Self::root_certificates_pem). `http://` suits
/// a server on the local machine or network.
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    connector: Connector,
    extra_roots: Vec<reqwest::Certificate>,
    endpoint: String,
    model: String,
    api_key: Option<String>,
    temperature: Option<f64>,
    tools: bool,
    usage: bool,
}

impl OpenAiModel {
    /// A client for `model` at `base_url` (e.g. `http://localhost:8000/v1`).
    pub fn new(base_url: &str, model: &str) -> Self {
        Self {
            connector: Connector::new(&[]),
            extra_roots: Vec::new(),
            endpoint: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            model: model.to_owned(),
            api_key: None,
            temperature: None,
            tools: true,
            usage: true,
        }
    }

    /// Sends `Authorization: Bearer <key>`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Also trusts the certificates in `pem` (one or more `BEGIN
    /// CERTIFICATE` blocks), e.g. a company CA or a self-signed server's
    /// own certificate. The platform's trust store stays in use.
    ///
    /// ```
    /// use chalie_core::session::OpenAiModel;
    ///
    /// let refused = OpenAiModel::new("https://llm.internal/v1", "m")
    ///     .root_certificates_pem(b"not a certificate");
    /// assert!(refused.unwrap_err().0.contains("BEGIN CERTIFICATE"));
    /// ```
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Result<Self, ModelError> {
        let certificates = connect::parse_pem(pem).map_err(ModelError)?;
        self.extra_roots.extend(certificates);
        self.connector = Connector::new(&self.extra_roots);
        Ok(self)
    }

    /// The sampling temperature (default: the server's).
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Declares the served model has no tool support: requests carry no tools.
    pub fn without_tools(mut self) -> Self {
        self.tools = false;
        self
    }

    /// Stops asking for token counts (`stream_options.include_usage`), for
    /// a server that refuses the option; the requests' spans then carry no
    /// `gen_ai.usage.*` counts.
    pub fn without_usage(mut self) -> Self {
        self.usage = false;
        self
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The JSON body of a request: with `stream_options.include_usage`
    /// (unless [`without_usage`](Self::without_usage)), so the stream ends
    /// with the tokens used.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let messages: Vec<Value> = request.messages.iter().map(wire_message).collect();
        let mut body = json!({ "model": self.model, "stream": true, "messages": messages });
        if self.usage {
            body["stream_options"] = json!({ "include_usage": true });
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| tool.render(Provider::OpenAiChat))
                .collect();
        }
        if let Some(temperature) = self.temperature {
            body["temperature"] = json!(temperature);
        }
        body
    }
}

fn wire_message(message: &Message) -> Value {
    match message.role {
        Role::System => json!({ "role": "system", "content": message.content }),
        Role::User => json!({ "role": "user", "content": message.content }),
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.as_deref().unwrap_or_default(),
            "content": message.content,
        }),
        Role::Assistant if message.tool_calls.is_empty() => {
            json!({ "role": "assistant", "content": message.content })
        }
        Role::Assistant => {
            let calls: Vec<Value> = message
                .tool_calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments.to_string() },
                    })
                })
                .collect();
            let content = if message.content.is_empty() {
                Value::Null
            } else {
                Value::String(message.content.clone())
            };
            json!({ "role": "assistant", "content": content, "tool_calls": calls })
        }
    }
}

/// What turns one API's server-sent events into chunks: OpenAI's
/// [`Assembler`], Anthropic's decoder. The transport around it is shared.
pub(crate) trait Decoder: Send + 'static {
    /// The chunks one event's payload completes.
    fn payload(&mut self, payload: &str) -> Vec<Result<ModelChunk, ModelError>>;
    /// Whether the stream said it is over.
    fn is_done(&self) -> bool;
    /// What is left when the stream ends without saying so.
    fn flush(&mut self) -> Vec<Result<ModelChunk, ModelError>>;
}

impl Decoder for Assembler {
    fn payload(&mut self, payload: &str) -> Vec<Result<ModelChunk, ModelError>> {
        Assembler::payload(self, payload)
    }
    fn is_done(&self) -> bool {
        Assembler::is_done(self)
    }
    fn flush(&mut self) -> Vec<Result<ModelChunk, ModelError>> {
        Assembler::flush(self)
    }
}

/// POSTs `body` to `endpoint` as a streaming request (`headers` adds the
/// API's own, e.g. its key) and streams what `decoder` makes of the reply's
/// events; a client that cannot be built is the stream's one error.
pub(crate) fn stream_events<D: Decoder>(
    connector: &Connector,
    endpoint: &str,
    body: &Value,
    headers: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
    decoder: D,
) -> BoxStream<'static, Result<ModelChunk, ModelError>> {
    let client = match connector.client() {
        Ok(client) => client,
        Err(reason) => {
            let error = ModelError(reason.to_owned());
            return futures::stream::once(async move { Err(error) }).boxed();
        }
    };
    let request = headers(
        client
            .post(endpoint)
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(body.to_string()),
    );
    let reading = Reading {
        connector: connector.clone(),
        request: Some(request),
        response: None,
        parser: SseParser::default(),
        assembler: decoder,
        queue: VecDeque::new(),
        finished: false,
    };
    futures::stream::unfold(reading, |mut reading| async move {
        loop {
            if let Some(item) = reading.queue.pop_front() {
                return Some((item, reading));
            }
            if reading.finished {
                return None;
            }
            reading.advance().await;
        }
    })
    .boxed()
}

/// Where a streamed reply is.
struct Reading<D> {
    connector: Connector,
    request: Option<reqwest::RequestBuilder>,
    response: Option<reqwest::Response>,
    parser: SseParser,
    assembler: D,
    queue: VecDeque<Result<ModelChunk, ModelError>>,
    finished: bool,
}

impl<D: Decoder> Reading<D> {
    fn fail(&mut self, message: String) {
        self.queue.push_back(Err(ModelError(message)));
        self.finished = true;
    }

    fn payloads(&mut self, payloads: Vec<String>) {
        for payload in payloads {
            let chunks = self.assembler.payload(&payload);
            self.queue.extend(chunks);
            if self.assembler.is_done() {
                self.finished = true;
                return;
            }
        }
    }

    async fn advance(&mut self) {
        if let Some(request) = self.request.take() {
            match request.send().await {
                Ok(response) if response.status().is_success() => self.response = Some(response),
                Ok(response) => {
                    let status = response.status();
                    let body = response.text().await.unwrap_or_default();
                    self.fail(format!("the server answered {status}: {}", body.trim()));
                }
                Err(error) => {
                    let message =
                        format!("the request failed: {}", self.connector.describe(&error));
                    self.fail(message);
                }
            }
            return;
        }
        let Some(response) = self.response.as_mut() else {
            self.finished = true;
            return;
        };
        match response.chunk().await {
            Ok(Some(bytes)) => {
                let payloads = self.parser.feed(&bytes);
                self.payloads(payloads);
            }
            Ok(None) => {
                // The stream ended without `[DONE]`: keep what it said.
                let last = self.parser.finish().into_iter().collect();
                self.payloads(last);
                let calls = self.assembler.flush();
                self.queue.extend(calls);
                self.finished = true;
            }
            Err(error) => {
                let message = format!("the stream broke: {}", self.connector.describe(&error));
                self.fail(message);
            }
        }
    }
}

impl Model for OpenAiModel {
    fn supports_tools(&self) -> bool {
        self.tools
    }

    fn model_id(&self) -> Option<&str> {
        Some(&self.model)
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<ModelChunk, ModelError>> {
        let key = self.api_key.clone();
        stream_events(
            &self.connector,
            &self.endpoint,
            &self.body(&request),
            |builder| match key {
                Some(key) => builder.bearer_auth(key),
                None => builder,
            },
            Assembler::default(),
        )
    }
}
