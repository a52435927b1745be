//! The OpenAI-compatible client against a local HTTP server replaying
//! recorded streaming responses, tool-call deltas split across chunks, over
//! plain HTTP and over HTTPS with a certificate made for the test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chalie_core::session::{
    Event, Message, Mode, Model, ModelChunk, ModelRequest, ModelToolCall, OpenAiModel, Usage,
};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::abilities::done;
use crate::{allow_all, sessions_with};

/// A reply the server replays: status, then body pieces written one by one.
pub(crate) struct Recorded {
    pub(crate) status: u16,
    pub(crate) pieces: Vec<String>,
}

/// What the server received: the head and the JSON body of each request.
pub(crate) type Received = Arc<Mutex<Vec<(String, Value)>>>;

/// Serves `replies` in order, one per request, on a loopback port.
pub(crate) async fn serve(replies: Vec<Recorded>) -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let received: Received = Arc::default();
    let log = Arc::clone(&received);
    tokio::spawn(async move {
        for reply in replies {
            let (socket, _) = listener.accept().await.unwrap();
            answer(socket, reply, &log).await;
        }
    });
    (base, received)
}

/// A self-signed certificate for `localhost`: its PEM, and a TLS acceptor
/// presenting it.
fn localhost_tls() -> (String, TlsAcceptor) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
    let config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![made.cert.der().clone()], key)
        .unwrap();
    (made.cert.pem(), TlsAcceptor::from(Arc::new(config)))
}

/// As [`serve`], over TLS at `https://localhost:<port>`. A client that
/// refuses the certificate consumes no reply.
async fn serve_tls(acceptor: TlsAcceptor, replies: Vec<Recorded>) -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let base = format!("https://localhost:{port}/v1");
    let received: Received = Arc::default();
    let log = Arc::clone(&received);
    tokio::spawn(async move {
        let mut replies = replies.into_iter();
        while let Ok((socket, _)) = listener.accept().await {
            let Ok(stream) = acceptor.accept(socket).await else {
                continue;
            };
            let Some(reply) = replies.next() else { return };
            answer(stream, reply, &log).await;
        }
    });
    (base, received)
}

/// Reads one request, logs it, and writes `reply` chunk by chunk.
async fn answer(mut socket: impl AsyncRead + AsyncWrite + Unpin, reply: Recorded, log: &Received) {
    let (head, body) = read_request(&mut socket).await;
    log.lock()
        .unwrap()
        .push((head, serde_json::from_slice(&body).unwrap()));
    let reason = if reply.status == 200 {
        "OK"
    } else {
        "Unauthorized"
    };
    let content_type = if reply.status == 200 {
        "text/event-stream"
    } else {
        "application/json"
    };
    let head = format!(
        "HTTP/1.1 {} {reason}\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        reply.status
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    for piece in reply.pieces {
        let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
        socket.write_all(chunk.as_bytes()).await.unwrap();
        socket.flush().await.unwrap();
        // Separate reads on the client, as over a real network.
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    socket.write_all(b"0\r\n\r\n").await.unwrap();
    socket.shutdown().await.ok();
}

async fn read_request(socket: &mut (impl AsyncRead + Unpin)) -> (String, Vec<u8>) {
    let mut data = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let read = socket.read(&mut buffer).await.unwrap();
        data.extend_from_slice(&buffer[..read]);
        if let Some(end) = data.windows(4).position(|window| window == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_string();
            let length: usize = head
                .lines()
                .find_map(|line| {
                    line.to_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
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

/// A recorded text answer, as a llama.cpp / vLLM server streams it.
pub(crate) fn text_reply() -> Recorded {
    Recorded {
        status: 200,
        pieces: vec![
            "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n".into(),
            "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"You have\"}}]}\n\n".into(),
            // An event split mid-line across two network chunks.
            "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choi".into(),
            "ces\":[{\"index\":0,\"delta\":{\"content\":\" one task.\"}}]}\n\n".into(),
            ": keep-alive\n\n".into(),
            "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n".into(),
        ],
    }
}

/// What the client yields for [`text_reply`].
fn text_reply_chunks() -> Vec<Result<ModelChunk, chalie_core::session::ModelError>> {
    vec![
        Ok(ModelChunk::Text("You have".into())),
        Ok(ModelChunk::Text(" one task.".into())),
    ]
}

/// A recorded tool call whose arguments arrive in four deltas, split
/// across chunks (one chunk ends inside an event).
pub(crate) fn tool_call_reply() -> Recorded {
    let event = |delta: Value| {
        format!(
            "data: {}\n\n",
            json!({ "choices": [{ "index": 0, "delta": delta }] })
        )
    };
    let first = event(
        json!({ "role": "assistant", "tool_calls": [{ "index": 0, "id": "call_abc", "type": "function", "function": { "name": "delete_task", "arguments": "" } }] }),
    );
    let second =
        event(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "{\"i" } }] }));
    let third =
        event(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "d\": " } }] }));
    let fourth =
        event(json!({ "tool_calls": [{ "index": 0, "function": { "arguments": "7}" } }] }));
    let (third_a, third_b) = third.split_at(20);
    Recorded {
        status: 200,
        pieces: vec![
            first,
            format!("{second}{third_a}"),
            third_b.to_owned(),
            fourth,
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
                .into(),
            "data: [DONE]\n\n".into(),
        ],
    }
}

/// `reply` as a server asked for `stream_options.include_usage` streams
/// it: a last chunk with no choices and the counts, before `[DONE]`.
pub(crate) fn with_usage(mut reply: Recorded, prompt: u64, completion: u64) -> Recorded {
    let usage = json!({
        "id": "x",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": { "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion },
    });
    let last = reply.pieces.last_mut().unwrap();
    *last = last.replace("data: [DONE]", &format!("data: {usage}\n\ndata: [DONE]"));
    reply
}

fn request(messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        messages,
        tools: Vec::new(),
    }
}

#[tokio::test]
async fn text_deltas_stream_in_order_and_the_request_is_openai_shaped() {
    let (base, received) = serve(vec![text_reply()]).await;
    let model = OpenAiModel::new(&base, "local-model").api_key("sk-test");
    let chunks: Vec<_> = model
        .stream(request(vec![
            Message::system("Be brief."),
            Message::user("tasks?"),
        ]))
        .collect()
        .await;
    assert_eq!(chunks, text_reply_chunks());
    let (head, body) = received.lock().unwrap()[0].clone();
    assert!(
        head.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{head}"
    );
    assert!(
        head.to_lowercase()
            .contains("authorization: bearer sk-test"),
        "{head}"
    );
    assert_eq!(
        body,
        json!({
            "model": "local-model",
            "stream": true,
            "stream_options": { "include_usage": true },
            "messages": [
                { "role": "system", "content": "Be brief." },
                { "role": "user", "content": "tasks?" },
            ],
        })
    );
}

#[tokio::test]
async fn tool_call_deltas_split_across_chunks_make_one_call() {
    let (base, _) = serve(vec![tool_call_reply()]).await;
    let model = OpenAiModel::new(&base, "m");
    let chunks: Vec<_> = model
        .stream(request(vec![Message::user("delete 7")]))
        .collect()
        .await;
    assert_eq!(
        chunks,
        [Ok(ModelChunk::ToolCall(ModelToolCall {
            id: "call_abc".into(),
            name: "delete_task".into(),
            arguments: json!({ "id": 7 }),
        }))]
    );
}

#[tokio::test]
async fn the_usage_chunk_is_read_and_can_be_turned_off() {
    let (base, received) = serve(vec![with_usage(text_reply(), 57, 9), text_reply()]).await;
    let model = OpenAiModel::new(&base, "m");
    let chunks: Vec<_> = model
        .stream(request(vec![Message::user("tasks?")]))
        .collect()
        .await;
    let mut expected = text_reply_chunks();
    expected.push(Ok(ModelChunk::Usage(Usage {
        input_tokens: Some(57),
        output_tokens: Some(9),
    })));
    assert_eq!(chunks, expected);
    // A server that refuses `stream_options` is not sent it.
    let quiet = OpenAiModel::new(&base, "m").without_usage();
    let chunks: Vec<_> = quiet
        .stream(request(vec![Message::user("tasks?")]))
        .collect()
        .await;
    assert_eq!(chunks, text_reply_chunks());
    let bodies = received.lock().unwrap().clone();
    assert_eq!(bodies[0].1["stream_options"]["include_usage"], true);
    assert!(
        bodies[1].1.get("stream_options").is_none(),
        "{}",
        bodies[1].1
    );
}

#[tokio::test]
async fn an_error_status_is_a_model_error_with_the_body() {
    let (base, _) = serve(vec![Recorded {
        status: 401,
        pieces: vec!["{\"error\":{\"message\":\"bad key\"}}".into()],
    }])
    .await;
    let chunks: Vec<_> = OpenAiModel::new(&base, "m")
        .stream(request(vec![Message::user("hi")]))
        .collect()
        .await;
    assert_eq!(chunks.len(), 1);
    let error = chunks[0].clone().unwrap_err();
    assert!(
        error.0.starts_with("the server answered 401 Unauthorized"),
        "{error}"
    );
    assert!(error.0.contains("bad key"), "{error}");
}

#[tokio::test]
async fn a_run_over_the_client_calls_the_tool_and_sends_its_envelope_back() {
    let (base, received) = serve(vec![tool_call_reply(), text_reply()]).await;
    let model = Arc::new(OpenAiModel::new(&base, "m"));
    let sessions = sessions_with(allow_all(), model, None);
    sessions.set_mode("openai-run", Mode::Auto).unwrap();
    let events = sessions
        .send("openai-run", "delete task 7")
        .unwrap()
        .finish()
        .await;
    assert_eq!(done("openai-run"), ["delete:7"]);
    assert!(events.contains(&Event::MessageCompleted {
        content: "You have one task.".into()
    }));
    let requests = received.lock().unwrap().clone();
    let tools: Vec<_> = requests[0].1["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(tools, ["find_tools", "lookup", "list_tasks", "delete_task"]);
    assert_eq!(requests[0].1["tools"][0]["function"]["strict"], true);
    let messages = requests[1].1["messages"].as_array().unwrap();
    assert_eq!(
        messages[1],
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{ "id": "call_abc", "type": "function", "function": { "name": "delete_task", "arguments": "{\"id\":7}" } }],
        })
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(messages[2]["tool_call_id"], "call_abc");
    assert_eq!(
        messages[2]["content"],
        "[delete_task(status=success)]\ndeleted task 7\n[end:delete_task]"
    );
}

#[tokio::test]
async fn https_with_the_servers_certificate_trusted_streams_the_reply() {
    let (pem, acceptor) = localhost_tls();
    let (base, received) = serve_tls(acceptor, vec![text_reply()]).await;
    assert!(base.starts_with("https://"));
    let model = OpenAiModel::new(&base, "hosted-model")
        .api_key("sk-test")
        .root_certificates_pem(pem.as_bytes())
        .unwrap();
    let chunks: Vec<_> = model
        .stream(request(vec![Message::user("tasks?")]))
        .collect()
        .await;
    assert_eq!(chunks, text_reply_chunks());
    let (head, body) = received.lock().unwrap()[0].clone();
    assert!(
        head.starts_with("POST /v1/chat/completions HTTP/1.1"),
        "{head}"
    );
    assert_eq!(body["model"], "hosted-model");
}

#[tokio::test]
async fn https_to_an_untrusted_certificate_is_refused_and_says_why() {
    let (_, acceptor) = localhost_tls();
    let (base, received) = serve_tls(acceptor, vec![text_reply()]).await;
    let chunks: Vec<_> = OpenAiModel::new(&base, "m")
        .stream(request(vec![Message::user("hi")]))
        .collect()
        .await;
    assert_eq!(chunks.len(), 1, "{chunks:?}");
    let error = chunks[0].clone().unwrap_err();
    assert!(error.0.starts_with("the request failed"), "{error}");
    assert!(error.0.contains("certificate"), "{error}");
    assert!(received.lock().unwrap().is_empty(), "nothing was sent");
}

#[test]
fn a_pem_without_a_certificate_is_refused() {
    let model = OpenAiModel::new("https://localhost/v1", "m");
    let error = model.root_certificates_pem(b"").unwrap_err();
    assert!(error.0.contains("BEGIN CERTIFICATE"), "{error}");
}
