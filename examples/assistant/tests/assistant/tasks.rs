use serde_json::{Value, json};

use crate::harness;

#[tokio::test]
async fn pages_default_to_twenty_and_a_cursor_continues_the_same_listing() {
    let harness = harness();
    let first = harness.call("task_list", json!({})).await;
    let body: Value = first.assert_success().body().unwrap();
    assert_eq!(body["count"], 20);
    assert_eq!(first.metadata("count"), Some("20"));
    // Every seventh sample task is done, so the open listing skips ids 7, 14, 21.
    assert_eq!(body["items"][6]["id"], 8);
    let cursor = body["next_cursor"].as_str().unwrap().to_owned();
    let second: Value = harness
        .call("task_list", json!({ "cursor": cursor }))
        .await
        .assert_success()
        .body()
        .unwrap();
    assert_eq!(second["items"][0]["id"], 24);
    // The cursor belongs to the `open` listing, not to `done`.
    harness
        .call("task_list", json!({ "status": "done", "cursor": cursor }))
        .await
        .assert_error("invalid-cursor");
    harness
        .call("task_list", json!({ "cursor": "forged.cursor" }))
        .await
        .assert_error("invalid-cursor");
}

#[tokio::test]
async fn page_size_is_bounded_at_fifty() {
    let harness = harness();
    let all: Value = harness
        .call("task_list", json!({ "status": "all", "max_items": 50 }))
        .await
        .body()
        .unwrap();
    assert_eq!(all["count"], 45);
    assert!(all["next_cursor"].is_null());
    harness
        .call("task_list", json!({ "max_items": 51 }))
        .await
        .assert_error("invalid-arguments");
}

#[tokio::test]
async fn create_update_complete_and_soft_delete() {
    let harness = harness();
    let created: Value = harness
        .call(
            "tasks",
            json!({ "action": "create", "title": "Buy milk", "due": "2026-03-03" }),
        )
        .await
        .assert_success()
        .body()
        .unwrap();
    assert_eq!(created["created"]["id"], 46);
    let updated: Value = harness
        .call(
            "tasks",
            json!({ "action": "update", "id": 46, "due": "2026-03-04" }),
        )
        .await
        .body()
        .unwrap();
    assert_eq!(updated["task"]["due"], "2026-03-04");
    assert_eq!(updated["task"]["title"], "Buy milk");
    harness
        .call("tasks", json!({ "action": "update", "id": 46 }))
        .await
        .assert_error("nothing-to-update");
    harness
        .call("tasks", json!({ "action": "complete", "id": 46 }))
        .await
        .assert_success();
    let done: Value = harness
        .call("task_list", json!({ "status": "done", "max_items": 50 }))
        .await
        .body()
        .unwrap();
    assert!(
        done["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|task| task["id"] == 46)
    );
    harness
        .call("tasks", json!({ "action": "delete", "id": 46 }))
        .await
        .assert_success();
    let listed: Value = harness
        .call("task_list", json!({ "status": "all", "max_items": 50 }))
        .await
        .body()
        .unwrap();
    assert!(
        !listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|task| task["id"] == 46)
    );
    // Soft-deleted: still stored, but no longer addressable.
    harness
        .call("tasks", json!({ "action": "complete", "id": 46 }))
        .await
        .assert_error("unknown-task");
    harness
        .call(
            "tasks",
            json!({ "action": "create", "due": "soon", "title": "x" }),
        )
        .await
        .assert_error("invalid-date");
}
