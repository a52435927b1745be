//! The model seam: a streaming chat model that may call tools.

#[cfg(feature = "anthropic")]
pub(crate) mod anthropic;
#[cfg(feature = "openai")]
pub(crate) mod openai;
pub(crate) mod scripted;

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::descriptor::ToolDescriptor;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions to the model.
    System,
    /// The human.
    User,
    /// The model.
    Assistant,
    /// A tool's envelope, answering one call.
    Tool,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelToolCall {
    /// The provider's call id.
    pub id: String,
    /// The tool called.
    pub name: String,
    /// The arguments (a JSON string the model sent that is not valid JSON
    /// arrives as a `Value::String`, and the dispatcher bounces it).
    pub arguments: Value,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// The text (for a tool message, the envelope).
    pub content: String,
    /// The calls an assistant message made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ModelToolCall>,
    /// For a tool message, the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::text(Role::System, content)
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::text(Role::User, content)
    }
    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::text(Role::Assistant, content)
    }
    /// A tool message answering `call_id` with an envelope.
    pub fn tool(call_id: impl Into<String>, envelope: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: envelope.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }
    fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// What the run asks the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The conversation, system instructions first.
    pub messages: Vec<Message>,
    /// The tools the model may call now; empty when tools are off.
    pub tools: Vec<ToolDescriptor>,
}

impl ModelRequest {
    /// The names of the tools offered, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(ToolDescriptor::name).collect()
    }
}

/// A piece of the model's streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelChunk {
    /// More answer text.
    Text(String),
    /// A complete tool call (a client assembles streamed argument deltas
    /// before yielding it).
    ToolCall(ModelToolCall),
    /// The tokens the request used, as the API reported them so far; a
    /// later `Usage` of the same reply replaces an earlier one. The run
    /// records it on the request's span (`gen_ai.usage.input_tokens`,
    /// `gen_ai.usage.output_tokens`).
    Usage(Usage),
}

/// The tokens one model request used, as its API reports them: either
/// count is `None` when the API has not (yet) given it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Tokens of the request's input (the prompt), cached ones included.
    pub input_tokens: Option<u64>,
    /// Tokens of the reply.
    pub output_tokens: Option<u64>,
}

/// The model could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(pub String);

/// A streaming chat model. Implemented by [`ScriptedModel`](crate::session::ScriptedModel)
/// for tests and, with the `openai` feature, by
/// `OpenAiModel` for any OpenAI-compatible server.
pub trait Model: Send + Sync {
    /// Whether the model accepts tool definitions. A model that does not
    /// runs conversationally: requests carry no tools.
    fn supports_tools(&self) -> bool {
        true
    }

    /// The model's id, as its API names it (`gen_ai.request.model` on the
    /// request's span); `None` when there is none to give.
    fn model_id(&self) -> Option<&str> {
        None
    }

    /// Streams the reply to `request`: text deltas and complete tool calls,
    /// in the order the model produced them, and the tokens used when the
    /// API reports them ([`ModelChunk::Usage`]).
    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<ModelChunk, ModelError>>;
}
