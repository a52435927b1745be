//! The policy changed through `PUT /ai/policy` by an administrator gates
//! the very next call, Bob may not change it, and the change is still
//! there after a restart.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{
    ALICE, BOB, Service, Workdir, body, calendar_write, client, names, open_session, send,
};

async fn put(base: &str, token: &str, permission: &str, setting: &str) -> reqwest::Response {
    client(token)
        .put(format!("{base}/policy"))
        .json(&json!({ "permission": permission, "channel": "chat", "setting": setting }))
        .send()
        .await
        .unwrap()
}

fn chat_setting(policy: &Value, permission: &str) -> Value {
    policy["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["permission"] == permission)
        .map(|row| row["settings"]["chat"].clone())
        .unwrap_or_else(|| panic!("no row `{permission}` in {policy}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_change_gates_the_next_call_and_survives_a_restart() {
    let work = Workdir::new();
    let mut script = calendar_write("Gym", "Added the gym.");
    script.extend(calendar_write("Dentist", "I may not add it."));
    let script = work.script("script.json", Value::Array(script));
    let service = Service::start(&work, &["--script", script.to_str().unwrap()], &[]);
    let base = service.base.clone();
    let permission = "calendar_edit.add_event";

    let policy = body(
        client(BOB)
            .get(format!("{base}/policy"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(chat_setting(&policy, permission)["setting"], "ask");
    assert_eq!(chat_setting(&policy, "memory")["editable"], false);
    let refused = put(&base, BOB, permission, "allow").await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let locked = put(&base, ALICE, "memory", "deny").await;
    assert_eq!(locked.status(), StatusCode::CONFLICT);
    assert_eq!(body(locked).await["code"], "not-editable");

    // Allowed, in auto mode: the write runs without asking.
    let allowed = put(&base, ALICE, permission, "allow").await;
    assert_eq!(allowed.status(), StatusCode::OK);
    assert_eq!(body(allowed).await["settings"]["chat"]["setting"], "allow");
    let session = open_session(&base, ALICE, "auto").await;
    let (_, mut stream) = send(&base, ALICE, &session, "put the gym on Saturday at 9").await;
    let first = stream.until("run.settlement.completed").await;
    let first = names(&first);
    assert!(!first.contains(&"tool.approval_required"), "{first:?}");
    assert_eq!(
        first
            .iter()
            .filter(|name| **name == "tool.completed")
            .count(),
        2,
        "{first:?}"
    );

    // Denied: the next call of the same session is refused, nothing runs.
    let denied = put(&base, ALICE, permission, "deny").await;
    assert_eq!(denied.status(), StatusCode::OK);
    let (_, mut stream) = send(&base, ALICE, &session, "put the dentist on Saturday at 9").await;
    let second = stream.until("run.settlement.completed").await;
    let failed = second
        .iter()
        .find(|(name, _)| name == "tool.failed")
        .map(|(_, data)| data.clone())
        .unwrap_or_else(|| panic!("the write is refused: {second:?}"));
    assert_eq!(failed["error"]["code"], "permission-denied", "{failed}");

    drop(service);
    let restarted = Service::start(&work, &["--script", script.to_str().unwrap()], &[]);
    let policy = body(
        client(BOB)
            .get(format!("{}/policy", restarted.base))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        chat_setting(&policy, permission),
        json!({ "setting": "deny", "source": "explicit", "editable": true })
    );
}
