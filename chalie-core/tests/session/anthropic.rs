//! The Anthropic Messages API client against a local server replaying
//! recorded streams: text, a `tool_use` block whose input is split across
//! events, an error event, an error status, and a whole run through it.

use std::sync::Arc;

use chalie_core::session::{
    AnthropicModel, Event, Message, Mode, Model, ModelChunk, ModelRequest, ModelToolCall, Usage,
};
use futures::StreamExt;
use serde_json::json;

use crate::abilities::done;
use crate::openai::{Recorded, serve};
use crate::{allow_all, sessions_with};

/// One server-sent event as the API writes it.
fn event(kind: &str, data: serde_json::Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

pub(crate) fn text_reply() -> Recorded {
    Recorded {
        status: 200,
        pieces: vec![
            event(
                "message_start",
                json!({ "type": "message_start", "message": { "id": "msg_1", "role": "assistant", "content": [], "usage": { "input_tokens": 472, "cache_read_input_tokens": 100, "output_tokens": 1 } } }),
            ),
            event(
                "content_block_start",
                json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } }),
            ),
            event("ping", json!({ "type": "ping" })),
            event(
                "content_block_delta",
                json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "You have " } }),
            ),
            event(
                "content_block_delta",
                json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "one task." } }),
            ),
            event(
                "content_block_stop",
                json!({ "type": "content_block_stop", "index": 0 }),
            ),
            event(
                "message_delta",
                json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": 5 } }),
            ),
            event("message_stop", json!({ "type": "message_stop" })),
        ],
    }
}

/// A `tool_use` block after some text, its input JSON split mid-token, and
/// the event boundaries themselves split across network reads.
pub(crate) fn tool_use_reply() -> Recorded {
    let whole = [
        event("message_start", json!({ "type": "message_start", "message": { "id": "msg_2", "role": "assistant", "content": [], "usage": { "input_tokens": 410, "output_tokens": 2 } } })),
        event("content_block_start", json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } })),
        event("content_block_delta", json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "Deleting it." } })),
        event("content_block_stop", json!({ "type": "content_block_stop", "index": 0 })),
        event("content_block_start", json!({ "type": "content_block_start", "index": 1, "content_block": { "type": "tool_use", "id": "toolu_01", "name": "delete_task", "input": {} } })),
        event("content_block_delta", json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": "{\"i" } })),
        event("content_block_delta", json!({ "type": "content_block_delta", "index": 1, "delta": { "type": "input_json_delta", "partial_json": "d\": 7}" } })),
        event("content_block_stop", json!({ "type": "content_block_stop", "index": 1 })),
        event("message_delta", json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" }, "usage": { "output_tokens": 31 } })),
        event("message_stop", json!({ "type": "message_stop" })),
    ]
    .concat();
    // Cut the byte stream at arbitrary places, not at event ends.
    let pieces = whole
        .as_bytes()
        .chunks(37)
        .map(|piece| String::from_utf8(piece.to_vec()).unwrap())
        .collect();
    Recorded {
        status: 200,
        pieces,
    }
}

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        messages,
        tools: Vec::new(),
    }
}

async fn collect(
    model: &AnthropicModel,
    messages: Vec<Message>,
) -> Vec<Result<ModelChunk, chalie_core::session::ModelError>> {
    model.stream(request(messages)).collect().await
}

pub(crate) fn base(served: &str) -> String {
    served.trim_end_matches("/v1").to_owned()
}

#[tokio::test]
async fn text_streams_and_the_request_is_messages_shaped() {
    let (served, received) = serve(vec![text_reply()]).await;
    let model = AnthropicModel::new(&base(&served), "claude-test").api_key("sk-ant-test");
    let chunks = collect(
        &model,
        vec![Message::system("Be brief."), Message::user("what's left?")],
    )
    .await;
    let (mut text, mut usage) = (Vec::new(), Vec::new());
    for chunk in chunks {
        match chunk.unwrap() {
            ModelChunk::Text(delta) => text.push(delta),
            ModelChunk::Usage(counts) => usage.push(counts),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(text, ["You have ", "one task."]);
    // message_start's input (cache reads included) and first output count,
    // then message_delta's output so far.
    assert_eq!(
        usage,
        [
            Usage {
                input_tokens: Some(572),
                output_tokens: Some(1)
            },
            Usage {
                input_tokens: Some(572),
                output_tokens: Some(5)
            },
        ]
    );
    let (head, body) = received.lock().unwrap()[0].clone();
    let head = head.to_lowercase();
    assert!(head.contains("x-api-key: sk-ant-test"), "{head}");
    assert!(head.contains("anthropic-version: 2023-06-01"), "{head}");
    assert_eq!(body["system"], "Be brief.");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 4096);
    assert_eq!(
        body["messages"],
        json!([{ "role": "user", "content": [{ "type": "text", "text": "what's left?" }] }])
    );
}

#[tokio::test]
async fn a_tool_use_split_across_events_and_reads_is_one_call() {
    let (served, _) = serve(vec![tool_use_reply()]).await;
    let model = AnthropicModel::new(&base(&served), "claude-test");
    let chunks: Vec<ModelChunk> = collect(&model, vec![Message::user("delete task 7")])
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        chunks,
        [
            ModelChunk::Usage(Usage {
                input_tokens: Some(410),
                output_tokens: Some(2)
            }),
            ModelChunk::Text("Deleting it.".into()),
            ModelChunk::ToolCall(ModelToolCall {
                id: "toolu_01".into(),
                name: "delete_task".into(),
                arguments: json!({ "id": 7 }),
            }),
            ModelChunk::Usage(Usage {
                input_tokens: Some(410),
                output_tokens: Some(31)
            }),
        ]
    );
}

#[tokio::test]
async fn an_error_event_and_an_error_status_are_model_errors() {
    let overloaded = Recorded {
        status: 200,
        pieces: vec![event(
            "error",
            json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } }),
        )],
    };
    let unauthorized = Recorded {
        status: 401,
        pieces: vec![json!({ "type": "error", "error": { "type": "authentication_error", "message": "invalid x-api-key" } }).to_string()],
    };
    let (served, _) = serve(vec![overloaded, unauthorized]).await;
    let model = AnthropicModel::new(&base(&served), "claude-test");
    let first = collect(&model, vec![Message::user("hi")]).await;
    let error = first[0].as_ref().unwrap_err();
    assert!(
        error.0.contains("overloaded_error") && error.0.contains("Overloaded"),
        "{error}"
    );
    let second = collect(&model, vec![Message::user("hi")]).await;
    let error = second[0].as_ref().unwrap_err();
    assert!(
        error.0.contains("401") && error.0.contains("invalid x-api-key"),
        "{error}"
    );
}

#[tokio::test]
async fn a_run_over_the_client_sends_tool_use_and_tool_result_blocks() {
    let (served, received) = serve(vec![tool_use_reply(), text_reply()]).await;
    let model = Arc::new(AnthropicModel::new(&base(&served), "claude-test"));
    let sessions = sessions_with(allow_all(), model, None);
    sessions.set_mode("anthropic-run", Mode::Auto).unwrap();
    let events = sessions
        .send("anthropic-run", "delete task 7")
        .unwrap()
        .finish()
        .await;
    assert_eq!(done("anthropic-run"), ["delete:7"]);
    assert!(events.contains(&Event::MessageCompleted {
        content: "You have one task.".into()
    }));
    let requests = received.lock().unwrap().clone();
    // The descriptors in Anthropic's form.
    let tool = &requests[0].1["tools"][0];
    assert!(tool["input_schema"].is_object(), "{tool}");
    let messages = requests[1].1["messages"].as_array().unwrap();
    assert_eq!(
        messages[1],
        json!({ "role": "assistant", "content": [
            { "type": "text", "text": "Deleting it." },
            { "type": "tool_use", "id": "toolu_01", "name": "delete_task", "input": { "id": 7 } },
        ] })
    );
    assert_eq!(messages[2]["role"], "user");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_01");
    assert_eq!(
        messages[2]["content"][0]["content"],
        "[delete_task(status=success)]\ndeleted task 7\n[end:delete_task]"
    );
}

#[tokio::test]
async fn tools_with_input_examples_declare_the_beta_and_others_do_not() {
    use chalie_core::descriptor::{AbilityExt, AssembleOptions};

    let (served, received) = serve(vec![text_reply(), text_reply()]).await;
    let model = AnthropicModel::new(&base(&served), "claude-test");
    for tool in [
        crate::abilities::delete_task::descriptor(AssembleOptions::default()),
        crate::abilities::list_tasks::descriptor(AssembleOptions::default()),
    ] {
        let request = ModelRequest {
            messages: vec![Message::user("tidy my tasks")],
            tools: vec![tool],
        };
        let chunks: Vec<_> = model.stream(request).collect().await;
        assert!(chunks.iter().all(Result::is_ok), "{chunks:?}");
    }
    let requests = received.lock().unwrap().clone();
    let (head, body) = &requests[0];
    assert!(
        head.to_lowercase()
            .contains("anthropic-beta: advanced-tool-use-2025-11-20"),
        "{head}"
    );
    assert_eq!(body["tools"][0]["input_examples"], json!([{ "id": 7 }]));
    let (head, body) = &requests[1];
    assert!(!head.to_lowercase().contains("anthropic-beta"), "{head}");
    assert!(body["tools"][0].get("input_examples").is_none());
}
