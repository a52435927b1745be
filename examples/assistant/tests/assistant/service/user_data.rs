//! Alice's memory and tasks, through the tool calls a model makes in the
//! service process: Bob's model recalls, lists, deletes and forgets with
//! Alice's ids and gets nothing of hers, and changes nothing; Alice's own
//! reads still find everything she stored. The model is a local server
//! speaking the OpenAI-compatible protocol that keeps what it was sent, so
//! each tool result is read as the model received it.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fake_model::{Received, openai_text, openai_tool_call_with_id, serve};
use super::{ALICE, BOB, Service, Workdir, client, open_session, send};

/// One message's replies: a call of `tool` (id `id`) with `arguments`,
/// then `done`. A tool outside the core is activated first by its exact
/// name, the way a model reaches it through `find_tools`.
fn call(id: &str, tool: &str, arguments: Value, done: &str) -> Vec<Vec<String>> {
    let mut replies = Vec::new();
    if tool != "memory" {
        replies.push(openai_tool_call_with_id(
            &format!("{id}_find"),
            "find_tools",
            &json!({ "query": [tool] }),
        ));
    }
    replies.push(openai_tool_call_with_id(id, tool, &arguments));
    replies.push(openai_text(done));
    replies
}

/// Sends `content` as `token` in a new session and waits for the run to
/// settle, approving any write it asks about (as its owner would).
async fn run(base: &str, token: &str, content: &str) {
    let session = open_session(base, token, "auto").await;
    let (run, mut stream) = send(base, token, &session, content).await;
    while let Some((name, _, data)) = stream.next().await {
        if name == "run.settlement.completed" {
            assert_eq!(data["status"], "completed", "{content}: {data}");
            return;
        }
        if name == "tool.approval_required" {
            let call = data["toolCallId"].as_str().unwrap();
            let approved = client(token)
                .post(format!("{base}/runs/{run}/tools/{call}/approve"))
                .send()
                .await
                .unwrap();
            assert_eq!(approved.status(), StatusCode::NO_CONTENT);
        }
    }
    panic!("the stream of `{content}` ended before its settlement");
}

/// The result of the tool call `id` as the model received it.
fn result(received: &Received, id: &str) -> String {
    let received = received.lock().unwrap();
    received
        .iter()
        .flat_map(|(_, sent)| sent["messages"].as_array().cloned().unwrap_or_default())
        .find(|message| message["role"] == "tool" && message["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("the model never received the result of {id}"))["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bob_s_tool_calls_reach_none_of_alice_s_memory_or_tasks() {
    let mut replies = Vec::new();
    // Alice stores a memory and a task.
    replies.extend(call(
        "alice_store",
        "memory",
        json!({ "action": "store", "content": "my locker code is 4512" }),
        "Noted.",
    ));
    replies.extend(call(
        "alice_task",
        "tasks",
        json!({ "action": "create", "title": "Renew the passport" }),
        "Added.",
    ));
    // Bob reads, deletes and forgets with the ids Alice's records took.
    replies.extend(call(
        "bob_recall",
        "memory",
        json!({ "action": "recall", "query": "locker code" }),
        "Nothing.",
    ));
    replies.extend(call("bob_list", "task_list", json!({}), "Nothing."));
    replies.extend(call(
        "bob_delete",
        "tasks",
        json!({ "action": "delete", "id": 1 }),
        "Gone?",
    ));
    replies.extend(call(
        "bob_forget",
        "memory",
        json!({ "action": "forget", "id": 1 }),
        "Gone?",
    ));
    // Alice reads hers back.
    replies.extend(call(
        "alice_recall",
        "memory",
        json!({ "action": "recall", "query": "locker code" }),
        "4512.",
    ));
    replies.extend(call("alice_list", "task_list", json!({}), "One task."));
    let (url, received) = serve(replies).await;
    let work = Workdir::new();
    let service = Service::start(
        &work,
        &[
            "--model-url",
            &format!("{url}/v1"),
            "--model",
            "local-model",
        ],
        &[("OPENAI_API_KEY", "sk-local-test")],
    );
    let base = &service.base;

    run(base, ALICE, "remember that my locker code is 4512").await;
    run(base, ALICE, "add renewing the passport to my tasks").await;
    assert!(
        result(&received, "alice_store").contains("status=success"),
        "{}",
        result(&received, "alice_store")
    );
    let created = result(&received, "alice_task");
    assert!(created.contains("status=success"), "{created}");
    assert!(created.contains("Renew the passport"), "{created}");

    run(base, BOB, "what is my locker code").await;
    run(base, BOB, "what is on my list").await;
    run(base, BOB, "delete task 1").await;
    run(base, BOB, "forget memory 1").await;
    let recalled = result(&received, "bob_recall");
    assert!(!recalled.contains("4512"), "{recalled}");
    let listed = result(&received, "bob_list");
    assert!(!listed.contains("passport"), "{listed}");
    for (id, what) in [("bob_delete", "delete"), ("bob_forget", "forget")] {
        let refused = result(&received, id);
        assert!(refused.contains("status=error"), "{what}: {refused}");
        assert!(
            !refused.contains("passport") && !refused.contains("4512"),
            "{what}: {refused}"
        );
    }

    run(base, ALICE, "what is my locker code").await;
    run(base, ALICE, "what is on my list").await;
    let recalled = result(&received, "alice_recall");
    assert!(recalled.contains("4512"), "{recalled}");
    let listed = result(&received, "alice_list");
    assert!(listed.contains("Renew the passport"), "{listed}");
    assert!(service.terminate());
}
