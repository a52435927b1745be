//! Reading an OpenAI-compatible chat-completions stream: Server-Sent
//! Events split anywhere by the network, and tool calls whose arguments
//! arrive as string deltas across many events.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::session::model::{ModelChunk, ModelError, ModelToolCall, Usage};

/// Splits a byte stream into SSE `data` payloads, whatever the chunking.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buffer: Vec<u8>,
    data: String,
}

impl SseParser {
    /// Feeds bytes; returns the payloads of every event completed by them.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut payloads = Vec::new();
        while let Some(end) = self.buffer.iter().position(|byte| *byte == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                // A blank line ends the event.
                if !self.data.is_empty() {
                    payloads.push(std::mem::take(&mut self.data));
                }
            } else if let Some(data) = line.strip_prefix("data:") {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(data.strip_prefix(' ').unwrap_or(data));
            }
            // Comments (`:`), `event:`, `id:` and `retry:` lines carry nothing here.
        }
        payloads
    }

    /// The last event, if the stream ended without its blank line.
    pub(crate) fn finish(&mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.buffer);
        let rest = String::from_utf8_lossy(&rest);
        if let Some(data) = rest.trim_end().strip_prefix("data:") {
            if !self.data.is_empty() {
                self.data.push('\n');
            }
            self.data.push_str(data.trim_start());
        }
        (!self.data.is_empty()).then(|| std::mem::take(&mut self.data))
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Turns chunk payloads into text deltas and whole tool calls.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    calls: BTreeMap<u64, PartialCall>,
    done: bool,
}

impl Assembler {
    /// Whether `[DONE]` was read.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Reads one payload.
    pub(crate) fn payload(&mut self, payload: &str) -> Vec<Result<ModelChunk, ModelError>> {
        if payload.trim() == "[DONE]" {
            self.done = true;
            return self.flush();
        }
        let chunk: Value = match serde_json::from_str(payload) {
            Ok(chunk) => chunk,
            Err(error) => {
                return vec![Err(ModelError(format!(
                    "the server sent a chunk that is not JSON ({error}): {payload}"
                )))];
            }
        };
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return vec![Err(ModelError(format!("the server failed: {message}")))];
        }
        let mut out = self.choice(&chunk);
        // With `stream_options.include_usage` the counts come in a last
        // chunk of their own (`choices` empty); other chunks carry
        // `"usage": null`, and some servers send running counts on each.
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            out.push(Ok(ModelChunk::Usage(Usage {
                input_tokens: usage.get("prompt_tokens").and_then(Value::as_u64),
                output_tokens: usage.get("completion_tokens").and_then(Value::as_u64),
            })));
        }
        out
    }

    /// The text and the tool calls the chunk's first choice completes.
    fn choice(&mut self, chunk: &Value) -> Vec<Result<ModelChunk, ModelError>> {
        let mut out = Vec::new();
        let Some(choice) = chunk.pointer("/choices/0") else {
            return out;
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(text) = delta.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            out.push(Ok(ModelChunk::Text(text.to_owned())));
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let partial = self.calls.entry(index).or_default();
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                partial.id.push_str(id);
            }
            let function = call.get("function").unwrap_or(&Value::Null);
            if let Some(name) = function.get("name").and_then(Value::as_str) {
                partial.name.push_str(name);
            }
            if let Some(arguments) = function.get("arguments").and_then(Value::as_str) {
                partial.arguments.push_str(arguments);
            }
        }
        if choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .is_some()
        {
            out.extend(self.flush());
        }
        out
    }

    /// Every assembled tool call, in index order.
    pub(crate) fn flush(&mut self) -> Vec<Result<ModelChunk, ModelError>> {
        std::mem::take(&mut self.calls)
            .into_values()
            .map(|call| {
                let arguments = if call.arguments.trim().is_empty() {
                    Value::Object(Default::default())
                } else {
                    // Invalid JSON goes on as a string: the dispatcher tells
                    // the model its arguments were malformed.
                    serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments))
                };
                Ok(ModelChunk::ToolCall(ModelToolCall {
                    id: call.id,
                    name: call.name,
                    arguments,
                }))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_anywhere_are_rejoined() {
        let mut parser = SseParser::default();
        let stream = b"data: {\"a\":1}\n\n: keep-alive\n\ndata: {\"b\"\r\n\r\ndata: [DONE]\n\n";
        let mut payloads = Vec::new();
        for piece in stream.chunks(3) {
            payloads.extend(parser.feed(piece));
        }
        assert_eq!(payloads, ["{\"a\":1}", "{\"b\"", "[DONE]"]);
        assert_eq!(parser.finish(), None);
    }

    #[test]
    fn tool_call_arguments_are_assembled_by_index() {
        let mut assembler = Assembler::default();
        let payloads = [
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"lookup","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"query\":"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"list_tasks"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"rust\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ];
        let chunks: Vec<_> = payloads
            .iter()
            .flat_map(|payload| assembler.payload(payload))
            .collect();
        assert_eq!(
            chunks,
            [
                Ok(ModelChunk::ToolCall(ModelToolCall {
                    id: "c1".into(),
                    name: "lookup".into(),
                    arguments: serde_json::json!({ "query": "rust" }),
                })),
                Ok(ModelChunk::ToolCall(ModelToolCall {
                    id: "c2".into(),
                    name: "list_tasks".into(),
                    arguments: serde_json::json!({}),
                })),
            ]
        );
    }
}
