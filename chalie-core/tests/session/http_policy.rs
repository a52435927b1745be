//! The policy manager and the listing routes, over a real socket: an
//! administrator's `PUT /policy` gates the next call of a session already
//! open and outlives the process (the change is in the store); anyone else
//! is refused and nothing changes; `internal` is shown, not editable. The
//! listings (`GET /sessions`, `GET /plans`, a message's stream) answer
//! only the caller's own.

use std::sync::Arc;

use chalie_core::session::{
    ApprovalRecord, ApprovalState, BearerTokens, MemoryStore, Message, Mode, PlanStep,
    PolicyRecord, Reply, RunRecord, ScriptedModel, SessionRecord, SessionStore, Sessions,
    SqliteStore, StoreError, StoredMessage, ToolCallRecord, router,
};
use chalie_core::turn::Principal;
use chalie_core::{Channel, dispatch::Setting};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::abilities::done;
use crate::http::{ALICE, BOB, Frames, client};
use crate::{allow_all, sessions, sessions_with};

/// The operator's token: may change the policy.
const OPS: &str = "ops-0123456789abcdef0123456789abcdef000";

/// Serves the router with Alice, Bob and the operator; returns its base URL.
async fn serve(sessions: Sessions) -> String {
    let tokens = BearerTokens::new()
        .with(ALICE, Principal::new("alice"))
        .unwrap()
        .with(BOB, Principal::new("bob"))
        .unwrap()
        .with_admin(OPS, Principal::new("ops"))
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, router(sessions, tokens))
            .await
            .unwrap()
    });
    base
}

async fn body(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

async fn put_policy(base: &str, token: &str, change: Value) -> reqwest::Response {
    client(token)
        .put(format!("{base}/policy"))
        .header("content-type", "application/json")
        .body(change.to_string())
        .send()
        .await
        .unwrap()
}

/// Alice sends `content` to `session`; the run's events as SSE, to the end.
async fn alice_runs(base: &str, session: &str, content: &str) -> Vec<(String, Value)> {
    let started = client(ALICE)
        .post(format!("{base}/sessions/{session}/messages"))
        .header("content-type", "application/json")
        .body(json!({ "content": content }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(started.status(), StatusCode::CREATED);
    let started = body(started).await;
    assert_eq!(started["messageId"], started["runId"]);
    let message = started["messageId"].as_str().unwrap();
    let response = client(ALICE)
        .get(format!(
            "{base}/sessions/{session}/messages/{message}/stream"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut frames = Frames {
        response,
        buffer: String::new(),
    };
    let mut events = Vec::new();
    while let Some((event, _, data)) = frames.next().await {
        let last = event == "run.settlement.completed";
        events.push((event, data));
        if last {
            break;
        }
    }
    events
}

#[tokio::test]
async fn an_administrator_s_change_gates_the_next_call_of_an_open_session() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 1 })),
        Reply::text("Deleted."),
        Reply::tool_call("delete_task", json!({ "id": 2 })),
        Reply::text("Could not."),
    ]));
    let sessions = sessions(model);
    let base = serve(sessions.clone()).await;
    let session = "http-policy-next-call";
    sessions
        .assign_owner(session, Some(Principal::new("alice")))
        .unwrap();
    sessions.set_mode(session, Mode::Auto).unwrap();

    let first = alice_runs(&base, session, "delete task 1").await;
    assert!(first.iter().any(|(name, _)| name == "tool.completed"));
    assert_eq!(done(session), ["delete:1"]);

    // Bob may read the policy, not change it: 403, and nothing changes.
    let refused = put_policy(
        &base,
        BOB,
        json!({ "permission": "delete_task", "channel": "chat", "setting": "deny" }),
    )
    .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert_eq!(body(refused).await["code"], "forbidden");
    let shown = body(
        client(BOB)
            .get(format!("{base}/policy"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(shown["mayChange"], false);
    let row = shown["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["permission"] == "delete_task")
        .unwrap()
        .clone();
    assert_eq!(
        row["settings"]["chat"],
        json!({ "setting": "allow", "source": "explicit", "editable": true })
    );

    let changed = put_policy(
        &base,
        OPS,
        json!({ "permission": "delete_task", "channel": "chat", "setting": "deny" }),
    )
    .await;
    assert_eq!(changed.status(), StatusCode::OK);
    let changed = body(changed).await;
    assert_eq!(changed["permission"], "delete_task");
    assert_eq!(changed["settings"]["chat"]["setting"], "deny");

    // The same session, its next call: denied, nothing run.
    let second = alice_runs(&base, session, "delete task 2").await;
    let failed = second
        .iter()
        .find(|(name, _)| name == "tool.failed")
        .map(|(_, data)| data.clone())
        .expect("the call is refused");
    assert_eq!(failed["error"]["code"], "permission-denied", "{failed}");
    assert_eq!(done(session), ["delete:1"]);
}

#[tokio::test]
async fn internal_is_shown_not_editable_and_bad_changes_are_refused() {
    let sessions = sessions(Arc::new(ScriptedModel::new([])));
    let base = serve(sessions.clone()).await;
    let shown = body(
        client(OPS)
            .get(format!("{base}/policy"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        shown["channels"],
        json!(["chat", "subconscious", "external"])
    );
    assert_eq!(shown["mayChange"], true);
    let remember = shown["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["permission"] == "remember")
        .expect("the internal ability is listed")
        .clone();
    for channel in ["chat", "subconscious", "external"] {
        assert_eq!(remember["settings"][channel]["setting"], "internal");
        assert_eq!(remember["settings"][channel]["editable"], false);
    }
    let locked = put_policy(
        &base,
        OPS,
        json!({ "permission": "remember", "channel": "chat", "setting": "deny" }),
    )
    .await;
    assert_eq!(locked.status(), StatusCode::CONFLICT);
    assert_eq!(body(locked).await["code"], "not-editable");

    for bad in [
        json!({ "permission": "no_such_tool", "channel": "chat", "setting": "allow" }),
        json!({ "permission": "delete_task", "channel": "moon", "setting": "allow" }),
        json!({ "permission": "delete_task", "channel": "chat", "setting": "maybe" }),
        json!({ "permission": "delete_task", "channel": "chat", "setting": "internal" }),
        json!({ "permission": "delete_task" }),
    ] {
        let refused = put_policy(&base, OPS, bad.clone()).await;
        assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        let refused = body(refused).await;
        assert_eq!(refused["code"], "invalid-body", "{bad}");
        assert!(
            refused["error"].as_str().unwrap().contains("e.g."),
            "{refused}"
        );
    }
    assert_eq!(
        sessions
            .dispatcher()
            .policy()
            .get(Channel::Chat, "delete_task"),
        Setting::Allow
    );
}

#[tokio::test]
async fn a_policy_change_outlives_the_process_in_the_sessions_store() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let store = || -> Arc<dyn SessionStore> { Arc::new(SqliteStore::open(file.path()).unwrap()) };
    let model = || Arc::new(ScriptedModel::new([]));
    let first = sessions_with(allow_all(), model(), Some(store()));
    let base = serve(first.clone()).await;
    let changed = put_policy(
        &base,
        OPS,
        json!({ "permission": "rename_task", "channel": "chat", "setting": "deny" }),
    )
    .await;
    assert_eq!(changed.status(), StatusCode::OK);

    // A new process: the host's policy file says allow, the stored change
    // is applied over it.
    let second = sessions_with(allow_all(), model(), Some(store()));
    assert_eq!(
        second
            .dispatcher()
            .policy()
            .get(Channel::Chat, "rename_task"),
        Setting::Deny
    );
    assert_eq!(
        second.dispatcher().policy().get(Channel::Chat, "lookup"),
        Setting::Allow
    );
}

#[tokio::test]
async fn listings_answer_only_the_caller_s_own() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 3 })),
        Reply::text("Planned."),
    ]));
    let sessions = sessions(model);
    let base = serve(sessions.clone()).await;

    let opened = client(ALICE)
        .post(format!("{base}/sessions"))
        .header("content-type", "application/json")
        .body(json!({ "mode": "plan_collect" }).to_string())
        .send()
        .await
        .unwrap();
    let session = body(opened).await["id"].as_str().unwrap().to_owned();
    let events = alice_runs(&base, &session, "plan deleting task 3").await;
    assert!(events.iter().any(|(name, _)| name == "plan.step_added"));

    let listed = |token: &'static str| {
        let base = base.clone();
        async move {
            body(
                client(token)
                    .get(format!("{base}/sessions"))
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        }
    };
    assert_eq!(
        listed(ALICE).await,
        json!({ "sessions": [{ "id": session, "mode": "plan_collect" }] })
    );
    assert_eq!(listed(BOB).await, json!({ "sessions": [] }));

    let plans = body(
        client(ALICE)
            .get(format!("{base}/plans?sessionId={session}"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(plans["plans"][0]["planId"], session.as_str());
    assert_eq!(plans["plans"][0]["steps"][0]["tool"], "delete_task");
    let bob_all = body(
        client(BOB)
            .get(format!("{base}/plans"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(bob_all, json!({ "plans": [] }));
    let bob_one = client(BOB)
        .get(format!("{base}/plans?sessionId={session}"))
        .send()
        .await
        .unwrap();
    assert_eq!(bob_one.status(), StatusCode::FORBIDDEN);
    for refused in [
        client(BOB)
            .post(format!("{base}/plans/{session}/execute"))
            .send()
            .await
            .unwrap(),
        client(BOB)
            .delete(format!("{base}/plans/{session}"))
            .send()
            .await
            .unwrap(),
    ] {
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert_eq!(body(refused).await["code"], "not-owner");
    }
    assert_eq!(sessions.plan(&session).unwrap().len(), 1);
    assert!(done(&session).is_empty());

    // Alice discards it through the plan's own route.
    let discarded = client(ALICE)
        .delete(format!("{base}/plans/{session}"))
        .send()
        .await
        .unwrap();
    assert_eq!(discarded.status(), StatusCode::NO_CONTENT);
    assert!(sessions.plan(&session).unwrap().is_empty());

    // A message's stream is found only under its own session.
    let other = client(ALICE)
        .post(format!("{base}/sessions"))
        .send()
        .await
        .unwrap();
    let other = body(other).await["id"].as_str().unwrap().to_owned();
    let run = events
        .iter()
        .find(|(name, _)| name == "run.started")
        .map(|(_, data)| data["runId"].as_str().unwrap().to_owned())
        .unwrap();
    let misplaced = client(ALICE)
        .get(format!("{base}/sessions/{other}/messages/{run}/stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(misplaced.status(), StatusCode::NOT_FOUND);
    assert_eq!(body(misplaced).await["code"], "not-found");

    // Bob cannot follow Alice's run: not under her session, and not under
    // a session of his own either (the run's own session is checked).
    let bobs = client(BOB)
        .post(format!("{base}/sessions"))
        .send()
        .await
        .unwrap();
    let bobs = body(bobs).await["id"].as_str().unwrap().to_owned();
    for path in [
        format!("{base}/sessions/{session}/messages/{run}/stream"),
        format!("{base}/sessions/{bobs}/messages/{run}/stream"),
    ] {
        let refused = client(BOB).get(&path).send().await.unwrap();
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{path}");
        assert_eq!(body(refused).await["code"], "not-owner", "{path}");
    }

    let health = reqwest::get(format!("{base}/health")).await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    assert_eq!(body(health).await, json!({ "status": "ok" }));
    let me = body(client(BOB).get(format!("{base}/me")).send().await.unwrap()).await;
    assert_eq!(me, json!({ "principal": "bob", "mayChangePolicy": false }));
}

/// A [`MemoryStore`] whose `put_policy` of `allow` returns only after a
/// while: a change racing it is kept and applied in between.
struct SlowAllow(MemoryStore);

impl SessionStore for SlowAllow {
    fn put_policy(&self, record: &PolicyRecord) -> Result<(), StoreError> {
        self.0.put_policy(record)?;
        if record.setting == Setting::Allow {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(())
    }
    fn policy(&self) -> Result<Vec<PolicyRecord>, StoreError> {
        self.0.policy()
    }
    fn put_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        self.0.put_session(session)
    }
    fn create_session(&self, session: &SessionRecord) -> Result<SessionRecord, StoreError> {
        self.0.create_session(session)
    }
    fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.0.session(id)
    }
    fn sessions_of(&self, owner: &Principal) -> Result<Vec<SessionRecord>, StoreError> {
        self.0.sessions_of(owner)
    }
    fn put_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        self.0.put_run(run)
    }
    fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        self.0.run(id)
    }
    fn unfinished_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.0.unfinished_runs()
    }
    fn append_message(
        &self,
        session_id: &str,
        run_id: &str,
        message: &Message,
    ) -> Result<u64, StoreError> {
        self.0.append_message(session_id, run_id, message)
    }
    fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.0.messages(session_id)
    }
    fn put_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError> {
        self.0.put_tool_call(record)
    }
    fn tool_calls(&self, run_id: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.0.tool_calls(run_id)
    }
    fn put_approval(&self, approval: &ApprovalRecord) -> Result<(), StoreError> {
        self.0.put_approval(approval)
    }
    fn approval(&self, run_id: &str, call_id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        self.0.approval(run_id, call_id)
    }
    fn decide_approval(
        &self,
        run_id: &str,
        call_id: &str,
        state: ApprovalState,
    ) -> Result<bool, StoreError> {
        self.0.decide_approval(run_id, call_id, state)
    }
    fn pending_approvals(&self, session_id: &str) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.0.pending_approvals(session_id)
    }
    fn add_plan_step(&self, session_id: &str, step: &PlanStep) -> Result<(), StoreError> {
        self.0.add_plan_step(session_id, step)
    }
    fn plan(&self, session_id: &str) -> Result<Vec<PlanStep>, StoreError> {
        self.0.plan(session_id)
    }
    fn clear_plan(&self, session_id: &str) -> Result<(), StoreError> {
        self.0.clear_plan(session_id)
    }
}

#[test]
fn racing_changes_of_one_cell_leave_the_live_policy_as_the_store() {
    let store: Arc<dyn SessionStore> = Arc::new(SlowAllow(MemoryStore::new()));
    let sessions = sessions_with(allow_all(), Arc::new(ScriptedModel::new([])), Some(store));
    for round in 0..20 {
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let sessions = &sessions;
                scope.spawn(move || {
                    let setting = if (round + thread) % 2 == 0 {
                        Setting::Allow
                    } else {
                        // Let the `allow` be kept first, and race its apply.
                        std::thread::sleep(std::time::Duration::from_millis(1));
                        Setting::Deny
                    };
                    sessions
                        .set_policy(Channel::Chat, "rename_task", setting)
                        .unwrap();
                });
            }
        });
        let stored = sessions.store().policy().unwrap();
        assert_eq!(stored.len(), 1, "{stored:?}");
        assert_eq!(
            sessions
                .dispatcher()
                .policy()
                .get(Channel::Chat, "rename_task"),
            stored[0].setting,
            "round {round}: the live policy differs from the store"
        );
    }
}

#[tokio::test]
async fn a_kept_change_does_not_reopen_what_the_host_made_internal() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let store = || -> Arc<dyn SessionStore> { Arc::new(SqliteStore::open(file.path()).unwrap()) };
    let model = || Arc::new(ScriptedModel::new([]));
    let first = sessions_with(allow_all(), model(), Some(store()));
    first
        .set_policy(Channel::Chat, "rename_task", Setting::Deny)
        .unwrap();
    first
        .set_policy(Channel::Subconscious, "rename_task", Setting::Allow)
        .unwrap();
    drop(first);

    // The host has since made `rename_task` plumbing on chat: the kept
    // change of that cell is not applied (a PUT of it would be 409), the
    // kept change of another cell still is.
    let mut host = allow_all();
    host.set(Channel::Chat, "rename_task", Setting::Internal)
        .unwrap();
    let second = sessions_with(host, model(), Some(store()));
    let live = second.dispatcher().policy();
    assert_eq!(live.get(Channel::Chat, "rename_task"), Setting::Internal);
    assert_eq!(
        live.get(Channel::Subconscious, "rename_task"),
        Setting::Allow
    );
    assert_eq!(second.restore_policy().unwrap(), 1);
    assert_eq!(live.get(Channel::Chat, "rename_task"), Setting::Internal);
}

#[tokio::test]
async fn a_permission_internal_through_its_tool_star_is_listed_its_other_cells_editable() {
    // The operator makes every qualifier of `rename_task` plumbing on chat;
    // `rename_task.bulk` (a qualifier the ability derives) is named on
    // subconscious only, so it is internal on chat through `rename_task.*`.
    let mut host = allow_all();
    host.set(Channel::Chat, "rename_task.*", Setting::Internal)
        .unwrap();
    host.set(Channel::Subconscious, "rename_task.bulk", Setting::Deny)
        .unwrap();
    let sessions = sessions_with(host, Arc::new(ScriptedModel::new([])), None);
    let base = serve(sessions.clone()).await;
    let shown = body(
        client(OPS)
            .get(format!("{base}/policy"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let row = shown["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["permission"] == "rename_task.bulk")
        .unwrap_or_else(|| panic!("`rename_task.bulk` is listed: {shown}"))
        .clone();
    assert_eq!(row["settings"]["chat"]["setting"], "internal", "{row}");
    assert_eq!(row["settings"]["chat"]["source"], "every-action", "{row}");
    assert_eq!(row["settings"]["chat"]["editable"], false, "{row}");
    assert_eq!(row["settings"]["subconscious"]["editable"], true, "{row}");

    let changed = put_policy(
        &base,
        OPS,
        json!({ "permission": "rename_task.bulk", "channel": "subconscious", "setting": "allow" }),
    )
    .await;
    assert_eq!(changed.status(), StatusCode::OK);
    assert_eq!(
        body(changed).await["settings"]["subconscious"]["setting"],
        "allow"
    );
    let locked = put_policy(
        &base,
        OPS,
        json!({ "permission": "rename_task.bulk", "channel": "chat", "setting": "allow" }),
    )
    .await;
    assert_eq!(locked.status(), StatusCode::CONFLICT);
    assert_eq!(
        sessions
            .dispatcher()
            .policy()
            .get(Channel::Chat, "rename_task.bulk"),
        Setting::Internal
    );
    // The surface a chooser offers still leaves it out.
    assert!(
        !sessions
            .dispatcher()
            .policy_surface()
            .iter()
            .any(|entry| entry.permission == "rename_task.bulk")
    );
}

#[tokio::test]
async fn reads_and_plan_actions_on_an_unknown_session_are_404_and_open_nothing() {
    let sessions = sessions(Arc::new(ScriptedModel::new([])));
    let base = serve(sessions.clone()).await;
    let opened = client(ALICE)
        .post(format!("{base}/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), StatusCode::CREATED);
    let listed = || async {
        body(
            client(ALICE)
                .get(format!("{base}/sessions"))
                .send()
                .await
                .unwrap(),
        )
        .await
    };
    let before = listed().await;
    assert_eq!(before["sessions"].as_array().unwrap().len(), 1);

    let alice = client(ALICE);
    for request in [
        alice.delete(format!("{base}/plans/nope")),
        alice.post(format!("{base}/plans/nope/execute")),
        alice.get(format!("{base}/plans?sessionId=nope")),
        alice.get(format!("{base}/sessions/x/plan")),
        alice.delete(format!("{base}/sessions/x/plan")),
        alice.post(format!("{base}/sessions/x/plan/execute")),
        alice.get(format!("{base}/sessions/x/messages")),
    ] {
        let answer = request.send().await.unwrap();
        let url = answer.url().to_string();
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{url}");
        assert_eq!(body(answer).await["code"], "not-found", "{url}");
    }
    // Nothing was opened: the list is as it was, and the store has no row.
    assert_eq!(listed().await, before);
    for id in ["nope", "x"] {
        assert_eq!(sessions.store().session(id).unwrap(), None, "{id}");
    }
}
