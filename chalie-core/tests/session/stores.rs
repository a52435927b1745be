//! The store contract, the same for memory, SQLite and PostgreSQL.

use chalie_core::session::{
    ApprovalRecord, ApprovalState, MemoryStore, Message, Mode, PlanStep, PolicyRecord, RunRecord,
    RunStatus, SessionRecord, SessionStore, ToolCallRecord, ToolCallStatus,
};
use chalie_core::turn::Principal;
use chalie_core::{Channel, dispatch::Setting};
use serde_json::json;

pub(crate) fn contract(store: &dyn SessionStore) {
    assert_eq!(store.session("s").unwrap(), None);
    store
        .put_session(&SessionRecord {
            id: "s".into(),
            mode: Mode::Plan,
            owner: None,
        })
        .unwrap();
    store
        .put_session(&SessionRecord {
            id: "s".into(),
            mode: Mode::Auto,
            owner: Some(Principal::new("alice")),
        })
        .unwrap();
    let stored = store.session("s").unwrap().unwrap();
    assert_eq!(stored.mode, Mode::Auto);
    assert_eq!(stored.owner, Some(Principal::new("alice")));

    // Creating never replaces: the first to create a session owns it.
    let first = SessionRecord {
        id: "new".into(),
        mode: Mode::Approval,
        owner: Some(Principal::new("bob")),
    };
    assert_eq!(store.create_session(&first).unwrap(), first);
    let second = SessionRecord {
        owner: Some(Principal::new("mallory")),
        mode: Mode::Auto,
        ..first.clone()
    };
    assert_eq!(store.create_session(&second).unwrap(), first.clone());
    assert_eq!(store.session("new").unwrap(), Some(first.clone()));

    for id in ["r1", "r2"] {
        let run = RunRecord {
            id: id.into(),
            session_id: "s".into(),
            status: RunStatus::Running,
        };
        store.put_run(&run).unwrap();
    }
    store
        .put_run(&RunRecord {
            id: "r1".into(),
            session_id: "s".into(),
            status: RunStatus::Completed,
        })
        .unwrap();
    let unfinished: Vec<_> = store
        .unfinished_runs()
        .unwrap()
        .into_iter()
        .map(|run| run.id)
        .collect();
    assert_eq!(unfinished, ["r2"]);

    assert_eq!(
        store
            .append_message("s", "r1", &Message::user("hi"))
            .unwrap(),
        0
    );
    assert_eq!(
        store
            .append_message("s", "r1", &Message::assistant("hello"))
            .unwrap(),
        1
    );
    let contents: Vec<_> = store
        .messages("s")
        .unwrap()
        .into_iter()
        .map(|m| m.message.content)
        .collect();
    assert_eq!(contents, ["hi", "hello"]);

    let mut record = ToolCallRecord {
        run_id: "r1".into(),
        message_seq: 1,
        call_id: "c1".into(),
        tool: "lookup".into(),
        input: json!({ "query": "x" }),
        status: ToolCallStatus::Started,
        envelope: None,
        execution_ms: 0,
        card: None,
    };
    store.put_tool_call(&record).unwrap();
    record.status = ToolCallStatus::Completed;
    record.envelope = Some("[lookup(status=success)]\nx\n[end:lookup]".into());
    record.execution_ms = 3;
    // The card a client rebuilds after a reload is kept with the outcome.
    record.card = Some(json!({ "title": "Notes on x", "count": 1 }));
    store.put_tool_call(&record).unwrap();
    assert_eq!(store.tool_calls("r1").unwrap(), [record]);

    let approval = ApprovalRecord {
        run_id: "r2".into(),
        session_id: "s".into(),
        call_id: "c2".into(),
        tool: "delete_task".into(),
        input: json!({ "id": 1 }),
        state: ApprovalState::Pending,
    };
    store.put_approval(&approval).unwrap();
    assert_eq!(
        store.pending_approvals("s").unwrap(),
        std::slice::from_ref(&approval)
    );
    assert!(
        store
            .decide_approval("r2", "c2", ApprovalState::Approved)
            .unwrap()
    );
    assert!(
        !store
            .decide_approval("r2", "c2", ApprovalState::Rejected)
            .unwrap(),
        "decided once"
    );
    assert_eq!(
        store.approval("r2", "c2").unwrap().unwrap().state,
        ApprovalState::Approved
    );
    assert!(store.pending_approvals("s").unwrap().is_empty());

    for index in 0..2 {
        let step = PlanStep {
            index,
            call_id: format!("c{index}"),
            tool: "delete_task".into(),
            input: json!({ "id": index }),
        };
        store.add_plan_step("s", &step).unwrap();
    }
    let plan: Vec<_> = store
        .plan("s")
        .unwrap()
        .into_iter()
        .map(|step| step.call_id)
        .collect();
    assert_eq!(plan, ["c0", "c1"]);
    store.clear_plan("s").unwrap();
    assert!(store.plan("s").unwrap().is_empty());

    // Background calls not yet delivered, of this session only, in call order.
    let call = |run: &str, id: &str, status| ToolCallRecord {
        run_id: run.into(),
        message_seq: 0,
        call_id: id.into(),
        tool: "report".into(),
        input: json!({}),
        status,
        envelope: None,
        execution_ms: 0,
        card: None,
    };
    store
        .put_run(&RunRecord {
            id: "other-run".into(),
            session_id: "other".into(),
            status: RunStatus::Running,
        })
        .unwrap();
    store
        .put_tool_call(&call("r2", "bg-1", ToolCallStatus::Background))
        .unwrap();
    store
        .put_tool_call(&call("r2", "bg-2", ToolCallStatus::Finished))
        .unwrap();
    store
        .put_tool_call(&call("r2", "bg-3", ToolCallStatus::Completed))
        .unwrap();
    store
        .put_tool_call(&call("other-run", "bg-4", ToolCallStatus::Finished))
        .unwrap();
    let undelivered: Vec<String> = store
        .background_calls("s")
        .unwrap()
        .into_iter()
        .map(|call| call.call_id)
        .collect();
    assert_eq!(undelivered, ["bg-1", "bg-2"]);
    store
        .put_tool_call(&call("r2", "bg-1", ToolCallStatus::Completed))
        .unwrap();
    assert_eq!(store.background_calls("s").unwrap().len(), 1);

    // A call's outcome and the tool message the model reads go in together.
    let finished = ToolCallRecord {
        run_id: "r1".into(),
        message_seq: 1,
        call_id: "c9".into(),
        tool: "lookup".into(),
        input: json!({ "query": "y" }),
        status: ToolCallStatus::Completed,
        envelope: Some("[lookup(status=success)]\ny\n[end:lookup]".into()),
        execution_ms: 1,
        card: None,
    };
    let seq = store
        .record_result(&finished, "s", &Message::tool("c9", "y"))
        .unwrap();
    assert_eq!(seq, 2);
    assert!(store.tool_calls("r1").unwrap().contains(&finished));
    let messages = store.messages("s").unwrap();
    assert_eq!(messages[2].message.tool_call_id.as_deref(), Some("c9"));

    // A principal's sessions, oldest first, never another's; an update
    // keeps a session's place.
    store
        .put_session(&SessionRecord {
            id: "s".into(),
            mode: Mode::Auto,
            owner: Some(Principal::new("alice")),
        })
        .unwrap();
    let alice_later = SessionRecord {
        id: "alice-later".into(),
        mode: Mode::Approval,
        owner: Some(Principal::new("alice")),
    };
    store.create_session(&alice_later).unwrap();
    let alice: Vec<String> = store
        .sessions_of(&Principal::new("alice"))
        .unwrap()
        .into_iter()
        .map(|session| session.id)
        .collect();
    assert_eq!(alice, ["s", "alice-later"]);
    assert_eq!(store.sessions_of(&Principal::new("bob")).unwrap(), [first]);
    assert!(
        store
            .sessions_of(&Principal::new("eve"))
            .unwrap()
            .is_empty()
    );

    // Policy changes: one per channel and permission, the last one kept,
    // in the order first made.
    let change = |channel, permission: &str, setting| PolicyRecord {
        channel,
        permission: permission.into(),
        setting,
    };
    assert!(store.policy().unwrap().is_empty());
    store
        .put_policy(&change(Channel::Chat, "delete_task", Setting::Deny))
        .unwrap();
    store
        .put_policy(&change(Channel::External, "delete_task", Setting::Allow))
        .unwrap();
    store
        .put_policy(&change(Channel::Chat, "delete_task", Setting::Ask))
        .unwrap();
    assert_eq!(
        store.policy().unwrap(),
        [
            change(Channel::Chat, "delete_task", Setting::Ask),
            change(Channel::External, "delete_task", Setting::Allow),
        ]
    );
}

#[test]
fn the_memory_store_keeps_the_contract() {
    contract(&MemoryStore::new());
}

#[cfg(feature = "sqlite")]
#[test]
fn the_sqlite_store_keeps_the_contract_and_survives_reopening() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("store.db");
    use chalie_core::session::SqliteStore;
    contract(&SqliteStore::open(&path).unwrap());
    let reopened = SqliteStore::open(&path).unwrap();
    assert_eq!(reopened.session("s").unwrap().unwrap().mode, Mode::Auto);
    assert_eq!(reopened.messages("s").unwrap().len(), 3);
    assert_eq!(reopened.tool_calls("r1").unwrap().len(), 2);
}

#[cfg(feature = "sqlite")]
#[test]
fn a_bad_path_is_a_clear_error() {
    let error = chalie_core::session::SqliteStore::open("/nonexistent-folder/x/y.db").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("session store: cannot open `/nonexistent-folder/x/y.db`"),
        "{error}"
    );
}

/// A database written before tool calls had cards opens, and its calls
/// take cards from then on.
#[cfg(feature = "sqlite")]
#[test]
fn an_sqlite_database_without_cards_opens_and_keeps_them_from_then_on() {
    use chalie_core::session::SqliteStore;
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("old.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TABLE tool_calls (
                run_id TEXT NOT NULL, call_id TEXT NOT NULL, ord INTEGER NOT NULL,
                message_seq INTEGER NOT NULL, tool TEXT NOT NULL, input TEXT NOT NULL,
                status TEXT NOT NULL, envelope TEXT, execution_ms INTEGER NOT NULL,
                PRIMARY KEY (run_id, call_id)
            );
            INSERT INTO tool_calls VALUES ('r-old', 'c-old', 0, 1, 'lookup', '{}', 'completed', NULL, 2);",
        )
        .unwrap();
    let store = SqliteStore::open(&path).unwrap();
    let old = store.tool_calls("r-old").unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].card, None);
    let mut record = old[0].clone();
    record.card = Some(json!({ "title": "kept" }));
    store.put_tool_call(&record).unwrap();
    drop(store);
    let reopened = SqliteStore::open(&path).unwrap();
    assert_eq!(reopened.tool_calls("r-old").unwrap(), [record]);
}
