//! The Anthropic Messages API as a [`Model`] (feature `anthropic`):
//! native `tool_use` / `tool_result` blocks, streamed, on the same HTTP
//! transport as [`OpenAiModel`](crate::session::OpenAiModel).

use std::collections::BTreeMap;

use futures::stream::BoxStream;
use serde_json::{Value, json};

use crate::descriptor::Provider;
use crate::session::model::openai::connect::{self, Connector};
use crate::session::model::openai::{Decoder, stream_events};
use crate::session::model::{
    Message, Model, ModelChunk, ModelError, ModelRequest, ModelToolCall, Role, Usage,
};

/// The API version the requests declare (`anthropic-version`).
const API_VERSION: &str = "2023-06-01";

/// The beta a request declares (`anthropic-beta`) when a tool it offers
/// carries `input_examples`, which the API reads only under it.
const INPUT_EXAMPLES_BETA: &str = "advanced-tool-use-2025-11-20";

/// A [`Model`] over Anthropic's Messages API with `stream: true`. Text
/// streams as it arrives; a `tool_use` block becomes one tool call once its
/// streamed input is complete.
///
/// ```
/// use chalie_core::session::AnthropicModel;
///
/// let model = AnthropicModel::new("https://api.anthropic.com", "claude-sonnet-4-5")
///     .api_key("sk-ant-...")
///     .max_tokens(2048);
/// assert_eq!(model.endpoint(), "https://api.anthropic.com/v1/messages");
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicModel {
    connector: Connector,
    endpoint: String,
    model: String,
    api_key: Option<String>,
    max_tokens: u32,
    temperature: Option<f64>,
    tools: bool,
}

impl AnthropicModel {
    /// A client for `model` at `base_url` (e.g. `https://api.anthropic.com`).
    pub fn new(base_url: &str, model: &str) -> Self {
        Self {
            connector: Connector::new(&[]),
            endpoint: format!("{}/v1/messages", base_url.trim_end_matches('/')),
            model: model.to_owned(),
            api_key: None,
            max_tokens: 4096,
            temperature: None,
            tools: true,
        }
    }

    /// Sends `x-api-key: <key>`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The most tokens a reply may use (the API requires one; default 4096).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The sampling temperature (default: the API's).
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Also trusts the certificates in `pem`, e.g. a gateway's private CA.
    pub fn root_certificates_pem(mut self, pem: &[u8]) -> Result<Self, ModelError> {
        let certificates = connect::parse_pem(pem).map_err(ModelError)?;
        self.connector = Connector::new(&certificates);
        Ok(self)
    }

    /// Declares the model has no tool support: requests carry no tools.
    pub fn without_tools(mut self) -> Self {
        self.tools = false;
        self
    }

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The JSON body of a request: system text apart, tool calls and
    /// results as content blocks, consecutive results in one user turn.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|message| message.role == Role::System)
            .map(|message| message.content.as_str())
            .collect();
        let mut messages: Vec<Value> = Vec::new();
        for message in request.messages.iter().filter(|m| m.role != Role::System) {
            let (role, blocks) = blocks(message);
            // The API alternates roles: a tool result after a user text (or
            // another result) joins that user turn.
            match messages.last_mut() {
                Some(last) if last["role"] == role => {
                    if let Some(content) = last["content"].as_array_mut() {
                        content.extend(blocks);
                    }
                }
                _ => messages.push(json!({ "role": role, "content": blocks })),
            }
        }
        let mut body = json!({
            "model": self.model,
            "max_tokens": self.max_tokens,
            "stream": true,
            "messages": messages,
        });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| tool.render(Provider::Anthropic))
                .collect();
        }
        if let Some(temperature) = self.temperature {
            body["temperature"] = json!(temperature);
        }
        body
    }
}

/// A message as the API's role and content blocks.
fn blocks(message: &Message) -> (&'static str, Vec<Value>) {
    match message.role {
        Role::Tool => (
            "user",
            vec![json!({
                "type": "tool_result",
                "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
                "content": message.content,
            })],
        ),
        Role::Assistant => {
            let mut blocks = Vec::new();
            if !message.content.is_empty() {
                blocks.push(json!({ "type": "text", "text": message.content }));
            }
            blocks.extend(message.tool_calls.iter().map(|call| {
                json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments })
            }));
            ("assistant", blocks)
        }
        Role::User | Role::System => (
            "user",
            vec![json!({ "type": "text", "text": message.content })],
        ),
    }
}

impl Model for AnthropicModel {
    fn supports_tools(&self) -> bool {
        self.tools
    }

    fn model_id(&self) -> Option<&str> {
        Some(&self.model)
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<ModelChunk, ModelError>> {
        let key = self.api_key.clone();
        let beta = request
            .tools
            .iter()
            .any(|tool| !tool.input_examples().is_empty());
        stream_events(
            &self.connector,
            &self.endpoint,
            &self.body(&request),
            |builder| {
                let builder = builder.header("anthropic-version", API_VERSION);
                let builder = match beta {
                    true => builder.header("anthropic-beta", INPUT_EXAMPLES_BETA),
                    false => builder,
                };
                match key {
                    Some(key) => builder.header("x-api-key", key),
                    None => builder,
                }
            },
            Events::default(),
        )
    }
}

/// A `tool_use` block being streamed: its id, name and input so far.
struct PendingCall {
    id: String,
    name: String,
    input: String,
}

/// Decodes the Messages API's events: `content_block_start` /
/// `content_block_delta` (`text_delta`, `input_json_delta`) /
/// `content_block_stop`, the usage of `message_start` and
/// `message_delta`, `message_stop`, and `error`.
#[derive(Default)]
struct Events {
    calls: BTreeMap<u64, PendingCall>,
    usage: Usage,
    done: bool,
}

impl Events {
    /// Folds a `usage` object into the counts so far and yields them.
    /// `message_start` gives the input and a first output count,
    /// `message_delta` the output so far (both cumulative). The input is
    /// the whole prompt: tokens written to and read from the prompt cache
    /// are counted apart by the API and added here.
    fn usage(&mut self, usage: &Value) -> Vec<Result<ModelChunk, ModelError>> {
        if !usage.is_object() {
            return Vec::new();
        }
        let input: Option<u64> = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .filter_map(|field| usage[*field].as_u64())
        .reduce(|sum, tokens| sum + tokens);
        if input.is_some() {
            self.usage.input_tokens = input;
        }
        if let Some(output) = usage["output_tokens"].as_u64() {
            self.usage.output_tokens = Some(output);
        }
        vec![Ok(ModelChunk::Usage(self.usage))]
    }

    fn finish_call(&mut self, index: u64) -> Option<Result<ModelChunk, ModelError>> {
        let call = self.calls.remove(&index)?;
        let input = if call.input.trim().is_empty() {
            Ok(json!({}))
        } else {
            serde_json::from_str::<Value>(&call.input)
        };
        Some(match input {
            Ok(arguments) => Ok(ModelChunk::ToolCall(ModelToolCall {
                id: call.id,
                name: call.name,
                arguments,
            })),
            Err(error) => Err(ModelError(format!(
                "the model's input for `{}` is not JSON: {error}",
                call.name
            ))),
        })
    }
}

impl Decoder for Events {
    fn payload(&mut self, payload: &str) -> Vec<Result<ModelChunk, ModelError>> {
        let event: Value = match serde_json::from_str(payload) {
            Ok(event) => event,
            Err(error) => {
                self.done = true;
                return vec![Err(ModelError(format!(
                    "the stream sent an event that is not JSON: {error}"
                )))];
            }
        };
        let index = event["index"].as_u64().unwrap_or_default();
        match event["type"].as_str().unwrap_or_default() {
            "content_block_start" if event["content_block"]["type"] == "tool_use" => {
                let block = &event["content_block"];
                self.calls.insert(
                    index,
                    PendingCall {
                        id: block["id"].as_str().unwrap_or_default().to_owned(),
                        name: block["name"].as_str().unwrap_or_default().to_owned(),
                        input: String::new(),
                    },
                );
                Vec::new()
            }
            "content_block_start" => match event["content_block"]["text"].as_str() {
                Some(text) if !text.is_empty() => vec![Ok(ModelChunk::Text(text.to_owned()))],
                _ => Vec::new(),
            },
            "content_block_delta" => {
                let delta = &event["delta"];
                match delta["type"].as_str().unwrap_or_default() {
                    "text_delta" => match delta["text"].as_str() {
                        Some(text) if !text.is_empty() => {
                            vec![Ok(ModelChunk::Text(text.to_owned()))]
                        }
                        _ => Vec::new(),
                    },
                    "input_json_delta" => {
                        if let (Some(call), Some(part)) =
                            (self.calls.get_mut(&index), delta["partial_json"].as_str())
                        {
                            call.input.push_str(part);
                        }
                        Vec::new()
                    }
                    _ => Vec::new(),
                }
            }
            "content_block_stop" => self.finish_call(index).into_iter().collect(),
            "message_start" => self.usage(&event["message"]["usage"]),
            "message_delta" => self.usage(&event["usage"]),
            "message_stop" => {
                self.done = true;
                self.flush()
            }
            "error" => {
                self.done = true;
                let error = &event["error"];
                vec![Err(ModelError(format!(
                    "the API reported {}: {}",
                    error["type"].as_str().unwrap_or("an error"),
                    error["message"].as_str().unwrap_or_default()
                )))]
            }
            // ping: nothing to yield.
            _ => Vec::new(),
        }
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn flush(&mut self) -> Vec<Result<ModelChunk, ModelError>> {
        let open: Vec<u64> = self.calls.keys().copied().collect();
        open.into_iter()
            .filter_map(|index| self.finish_call(index))
            .collect()
    }
}
