//! Local model servers for the service to talk to: each replays recorded
//! streaming replies, one per request, in the wire format of the real API
//! (as chalie-core's client tests record them), and keeps every request.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the server received: each request's head and JSON body.
pub type Received = Arc<Mutex<Vec<(String, Value)>>>;

/// Serves `replies` (each a list of body pieces, written with a pause
/// between them, as a network would split them) in order; returns the
/// base URL `http://127.0.0.1:<port>` and the requests received.
pub async fn serve(replies: Vec<Vec<String>>) -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let received: Received = Arc::default();
    let log = Arc::clone(&received);
    tokio::spawn(async move {
        for pieces in replies {
            let (mut socket, _) = listener.accept().await.unwrap();
            let (head, body) = read_request(&mut socket).await;
            log.lock()
                .unwrap()
                .push((head, serde_json::from_slice(&body).unwrap()));
            socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n")
                .await
                .unwrap();
            for piece in pieces {
                let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
                socket.write_all(chunk.as_bytes()).await.unwrap();
                socket.flush().await.unwrap();
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            socket.write_all(b"0\r\n\r\n").await.unwrap();
            socket.shutdown().await.ok();
        }
    });
    (base, received)
}

async fn read_request(socket: &mut (impl AsyncRead + Unpin)) -> (String, Vec<u8>) {
    let mut data = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let read = socket.read(&mut buffer).await.unwrap();
        assert!(read > 0, "the client closed before a whole request");
        data.extend_from_slice(&buffer[..read]);
        if let Some(end) = data.windows(4).position(|window| window == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_string();
            let length: usize = head
                .lines()
                .find_map(|line| {
                    line.to_lowercase()
                        .strip_prefix("content-length:")
                        .map(|value| value.trim().parse().unwrap())
                })
                .unwrap_or(0);
            while data.len() < end + 4 + length {
                let read = socket.read(&mut buffer).await.unwrap();
                data.extend_from_slice(&buffer[..read]);
            }
            return (head, data[end + 4..end + 4 + length].to_vec());
        }
    }
}

/// Cuts `whole` at arbitrary places, not at event ends.
fn split(whole: &str) -> Vec<String> {
    whole
        .as_bytes()
        .chunks(29)
        .map(|piece| String::from_utf8(piece.to_vec()).unwrap())
        .collect()
}

/// A chat-completions stream calling `name` with `arguments`, the
/// arguments arriving in several `tool_calls` deltas.
pub fn openai_tool_call(name: &str, arguments: &Value) -> Vec<String> {
    openai_tool_call_with_id("call_1", name, arguments)
}

/// [`openai_tool_call`] with the call's id `id`, for a run of several calls.
pub fn openai_tool_call_with_id(id: &str, name: &str, arguments: &Value) -> Vec<String> {
    let event = |delta: Value| {
        format!(
            "data: {}\n\n",
            json!({ "choices": [{ "index": 0, "delta": delta }] })
        )
    };
    let arguments = arguments.to_string();
    let (head, tail) = arguments.split_at(arguments.len() / 2);
    let whole = [
        event(json!({ "role": "assistant", "tool_calls": [{ "index": 0, "id": id, "type": "function", "function": { "name": name, "arguments": "" } }] })),
        event(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": head } }] })),
        event(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": tail } }] })),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n".to_owned(),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    split(&whole)
}

/// A chat-completions stream answering `text` in two deltas.
pub fn openai_text(text: &str) -> Vec<String> {
    let (head, tail) = text.split_at(text.len() / 2);
    let event = |content: &str| {
        format!(
            "data: {}\n\n",
            json!({ "choices": [{ "index": 0, "delta": { "content": content } }] })
        )
    };
    split(
        &[
            event(head),
            event(tail),
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".to_owned(),
        ]
        .concat(),
    )
}

fn anthropic_event(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

/// A Messages stream whose `tool_use` block calls `name` with `arguments`,
/// the input arriving in two `input_json_delta`s.
pub fn anthropic_tool_use(name: &str, arguments: &Value) -> Vec<String> {
    let arguments = arguments.to_string();
    let (head, tail) = arguments.split_at(arguments.len() / 2);
    let whole = [
        anthropic_event("message_start", json!({ "type": "message_start", "message": { "id": "msg_1", "role": "assistant", "content": [], "usage": { "input_tokens": 10, "output_tokens": 1 } } })),
        anthropic_event("content_block_start", json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "tool_use", "id": "toolu_1", "name": name, "input": {} } })),
        anthropic_event("content_block_delta", json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": head } })),
        anthropic_event("content_block_delta", json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "input_json_delta", "partial_json": tail } })),
        anthropic_event("content_block_stop", json!({ "type": "content_block_stop", "index": 0 })),
        anthropic_event("message_delta", json!({ "type": "message_delta", "delta": { "stop_reason": "tool_use" }, "usage": { "output_tokens": 20 } })),
        anthropic_event("message_stop", json!({ "type": "message_stop" })),
    ]
    .concat();
    split(&whole)
}

/// A Messages stream answering `text`.
pub fn anthropic_text(text: &str) -> Vec<String> {
    let whole = [
        anthropic_event("message_start", json!({ "type": "message_start", "message": { "id": "msg_2", "role": "assistant", "content": [], "usage": { "input_tokens": 10, "output_tokens": 1 } } })),
        anthropic_event("content_block_start", json!({ "type": "content_block_start", "index": 0, "content_block": { "type": "text", "text": "" } })),
        anthropic_event("content_block_delta", json!({ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": text } })),
        anthropic_event("content_block_stop", json!({ "type": "content_block_stop", "index": 0 })),
        anthropic_event("message_delta", json!({ "type": "message_delta", "delta": { "stop_reason": "end_turn" }, "usage": { "output_tokens": 5 } })),
        anthropic_event("message_stop", json!({ "type": "message_stop" })),
    ]
    .concat();
    split(&whole)
}
