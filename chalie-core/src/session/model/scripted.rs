//! A model that replays a script: deterministic runs for tests.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;

use crate::session::model::{Model, ModelChunk, ModelError, ModelRequest, ModelToolCall};

/// One scripted reply: text pieces and tool calls, or a failure.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    chunks: Vec<Result<ModelChunk, ModelError>>,
}

impl Reply {
    /// A text answer, streamed word by word (`"Two tasks."` arrives as
    /// `"Two"`, `" tasks."`).
    pub fn text(text: &str) -> Self {
        Self::empty().then_text(text)
    }

    /// A text answer streamed in exactly these pieces.
    pub fn deltas<S: Into<String>>(pieces: impl IntoIterator<Item = S>) -> Self {
        Self {
            chunks: pieces
                .into_iter()
                .map(|piece| Ok(ModelChunk::Text(piece.into())))
                .collect(),
        }
    }

    /// One tool call, its id given by the model (`call-1`, `call-2`, ...).
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Self::empty().then_tool_call(name, arguments)
    }

    /// A stream that fails with `message` (after any pieces added before).
    pub fn error(message: &str) -> Self {
        Self::empty().then_error(message)
    }

    /// Nothing yet, to build on with the `then_*` methods.
    pub fn empty() -> Self {
        Self { chunks: Vec::new() }
    }

    /// Adds text, word by word.
    pub fn then_text(mut self, text: &str) -> Self {
        let mut start = 0;
        for (index, _) in text.match_indices(' ') {
            if index > start {
                self.chunks
                    .push(Ok(ModelChunk::Text(text[start..index].to_owned())));
                start = index;
            }
        }
        if start < text.len() {
            self.chunks
                .push(Ok(ModelChunk::Text(text[start..].to_owned())));
        }
        self
    }

    /// Adds a tool call.
    pub fn then_tool_call(mut self, name: &str, arguments: Value) -> Self {
        self.chunks.push(Ok(ModelChunk::ToolCall(ModelToolCall {
            id: String::new(),
            name: name.to_owned(),
            arguments,
        })));
        self
    }

    /// Adds a tool call with the given id.
    pub fn then_tool_call_with_id(mut self, id: &str, name: &str, arguments: Value) -> Self {
        self.chunks.push(Ok(ModelChunk::ToolCall(ModelToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments,
        })));
        self
    }

    /// Ends the stream with a failure.
    pub fn then_error(mut self, message: &str) -> Self {
        self.chunks.push(Err(ModelError(message.to_owned())));
        self
    }
}

/// A [`Model`] that answers each request with the next scripted [`Reply`]
/// and remembers every request, so a test can assert what the model was
/// shown. Past the end of the script it fails the request.
///
/// ```
/// use chalie_core::session::{Model, ModelChunk, ModelRequest, Message, Reply, ScriptedModel};
/// use futures::StreamExt;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let model = ScriptedModel::new([Reply::text("Hello there.")]);
/// let request = ModelRequest { messages: vec![Message::user("hi")], tools: vec![] };
/// let chunks: Vec<_> = model.stream(request).collect().await;
/// assert_eq!(chunks.len(), 2);
/// assert_eq!(chunks[0], Ok(ModelChunk::Text("Hello".into())));
/// assert_eq!(model.requests()[0].messages[0].content, "hi");
/// # }
/// ```
#[derive(Debug, Default)]
pub struct ScriptedModel {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<ModelRequest>>,
    next_call: AtomicU64,
    without_tools: bool,
}

impl ScriptedModel {
    /// A model that gives these replies, in order.
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self {
            script: Mutex::new(replies.into_iter().collect()),
            requests: Mutex::new(Vec::new()),
            next_call: AtomicU64::new(1),
            without_tools: false,
        }
    }

    /// The same model, declaring it does not support tools.
    pub fn without_tools(mut self) -> Self {
        self.without_tools = true;
        self
    }

    /// Appends replies to the script.
    pub fn push(&self, reply: Reply) {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(reply);
    }

    /// Every request received, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Forgets the requests received so far (a long benchmark would keep
    /// every one).
    pub fn clear_requests(&self) {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// How many replies are left.
    pub fn remaining(&self) -> usize {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Model for ScriptedModel {
    fn supports_tools(&self) -> bool {
        !self.without_tools
    }

    fn model_id(&self) -> Option<&str> {
        Some("scripted")
    }

    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<ModelChunk, ModelError>> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request);
        let reply = self
            .script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        let chunks = match reply {
            Some(reply) => reply
                .chunks
                .into_iter()
                .map(|chunk| match chunk {
                    Ok(ModelChunk::ToolCall(mut call)) if call.id.is_empty() => {
                        let n = self.next_call.fetch_add(1, Ordering::Relaxed);
                        call.id = format!("call-{n}");
                        Ok(ModelChunk::ToolCall(call))
                    }
                    other => other,
                })
                .collect(),
            None => vec![Err(ModelError(
                "the scripted model has no reply left for this request".into(),
            ))],
        };
        futures::stream::iter(chunks).boxed()
    }
}
