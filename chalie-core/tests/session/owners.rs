//! Sessions belong to principals: the owner's runs carry them to the
//! abilities, and any other principal is refused every action on the
//! session (send, approve, reject, mode, plan, events) with nothing run.

use std::sync::Arc;

use chalie_core::session::{
    ApprovalState, Mode, Model, Reply, ScriptedModel, SessionError, SessionStore, Sessions,
};
use chalie_core::{Channel, Dispatcher, dispatch::Setting, turn::Principal};
use serde_json::json;

use crate::abilities::done;
use crate::{allow_all, registry, wait_for};

/// Sessions the way a host composes them: a dispatcher whose policy
/// allows the test abilities, with what the tests call pinned.
fn composed(model: Arc<dyn Model>, store: Option<Arc<dyn SessionStore>>) -> Sessions {
    let mut policy = allow_all();
    policy.set(Channel::Chat, "whoami", Setting::Allow).unwrap();
    let dispatcher = Dispatcher::builder(registry()).policy(policy).build();
    let builder = Sessions::builder(Arc::new(dispatcher), model).pinned(["whoami", "delete_task"]);
    match store {
        Some(store) => builder.store(store).build(),
        None => builder.build(),
    }
}

fn not_owner(result: Result<impl std::fmt::Debug, SessionError>, session: &str, who: &str) {
    match result {
        Err(SessionError::NotOwner {
            session_id,
            principal,
        }) => {
            assert_eq!(session_id, session);
            assert_eq!(principal.id(), who);
        }
        other => panic!("expected NotOwner for `{who}` on `{session}`, got {other:?}"),
    }
}

#[tokio::test]
async fn the_owner_s_runs_carry_the_owner_and_another_principal_cannot_send() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("whoami", json!({})),
        Reply::text("You are alice."),
    ]));
    let sessions = composed(model.clone(), None);
    let (alice, bob) = (Principal::new("alice"), Principal::new("bob"));
    let session = "owners-send";

    let run = sessions
        .as_principal(&alice)
        .send(session, "who am i?")
        .unwrap();
    run.finish().await;
    assert_eq!(done(session), ["whoami:alice"]);
    let stored = sessions.store().session(session).unwrap().unwrap();
    assert_eq!(stored.owner, Some(alice.clone()));

    let messages = sessions.store().messages(session).unwrap().len();
    not_owner(
        sessions.as_principal(&bob).send(session, "who am i?"),
        session,
        "bob",
    );
    // Refused before anything started: no message stored, nothing ran,
    // and the model was not asked again.
    assert_eq!(sessions.store().messages(session).unwrap().len(), messages);
    assert_eq!(done(session), ["whoami:alice"]);
    assert_eq!(model.requests().len(), 2);
    not_owner(sessions.as_principal(&bob).mode(session), session, "bob");
}

#[tokio::test]
async fn another_principal_cannot_answer_an_approval_and_the_write_never_runs() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 7 })),
        Reply::text("Deleted."),
    ]));
    let sessions = composed(model, None);
    let (alice, bob) = (Principal::new("alice"), Principal::new("bob"));
    let session = "owners-approve";

    let run = sessions
        .as_principal(&alice)
        .send(session, "delete task 7")
        .unwrap();
    wait_for(&run, "tool.approval_required").await;
    not_owner(
        sessions.as_principal(&bob).approve(run.id(), "call-1"),
        session,
        "bob",
    );
    not_owner(
        sessions.as_principal(&bob).reject(run.id(), "call-1"),
        session,
        "bob",
    );
    not_owner(sessions.as_principal(&bob).run(run.id()), session, "bob");
    // Still pending: bob's answers changed nothing, and nothing ran.
    let approval = sessions.store().approval(run.id(), "call-1").unwrap();
    assert_eq!(approval.map(|a| a.state), Some(ApprovalState::Pending));
    assert!(done(session).is_empty());

    // An approval that does not exist is not pending, for anyone.
    assert!(matches!(
        sessions.as_principal(&bob).approve(run.id(), "call-9"),
        Err(SessionError::NotPending { .. })
    ));

    let followed = sessions.as_principal(&alice).run(run.id()).unwrap();
    assert_eq!(
        followed.map(|run| run.session_id().to_owned()).as_deref(),
        Some(session)
    );
    sessions
        .as_principal(&alice)
        .approve(run.id(), "call-1")
        .unwrap();
    run.finish().await;
    assert_eq!(done(session), ["delete:7"]);
}

#[tokio::test]
async fn another_principal_cannot_change_the_mode_or_touch_the_plan() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("delete_task", json!({ "id": 3 })),
        Reply::text("Planned."),
        Reply::text("Done."),
    ]));
    let sessions = composed(model, None);
    let (alice, bob) = (Principal::new("alice"), Principal::new("bob"));
    let session = "owners-plan";
    let as_alice = sessions.as_principal(&alice);
    let as_bob = sessions.as_principal(&bob);

    as_alice.set_mode(session, Mode::PlanCollect).unwrap();
    as_alice
        .send(session, "delete task 3")
        .unwrap()
        .finish()
        .await;
    assert_eq!(as_alice.plan(session).unwrap().len(), 1);

    not_owner(as_bob.set_mode(session, Mode::Auto), session, "bob");
    assert_eq!(sessions.mode(session).unwrap(), Mode::PlanCollect);
    not_owner(as_bob.plan(session), session, "bob");
    not_owner(as_bob.execute_plan(session), session, "bob");
    not_owner(as_bob.discard_plan(session), session, "bob");
    assert_eq!(
        sessions.plan(session).unwrap().len(),
        1,
        "the plan is intact"
    );
    assert!(done(session).is_empty(), "no step ran");

    as_alice.execute_plan(session).unwrap().finish().await;
    assert_eq!(done(session), ["delete:3"]);
}

#[tokio::test]
async fn a_session_the_host_opened_belongs_to_nobody_until_the_host_assigns_it() {
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("whoami", json!({})),
        Reply::text("Nobody."),
        Reply::tool_call("whoami", json!({})),
        Reply::text("Alice."),
    ]));
    let sessions = composed(model, None);
    let alice = Principal::new("alice");
    let session = "owners-host";

    sessions.send(session, "who?").unwrap().finish().await;
    assert_eq!(done(session), ["whoami:nobody"]);
    not_owner(
        sessions.as_principal(&alice).send(session, "who?"),
        session,
        "alice",
    );
    not_owner(
        sessions.as_principal(&alice).set_mode(session, Mode::Auto),
        session,
        "alice",
    );

    sessions.assign_owner(session, Some(alice.clone())).unwrap();
    assert_eq!(
        sessions.mode(session).unwrap(),
        Mode::Approval,
        "the mode is kept"
    );
    sessions
        .as_principal(&alice)
        .send(session, "who?")
        .unwrap()
        .finish()
        .await;
    assert_eq!(done(session), ["whoami:nobody", "whoami:alice"]);
}

#[tokio::test]
async fn of_principals_racing_to_open_a_new_session_exactly_one_owns_it() {
    let sessions = composed(Arc::new(ScriptedModel::new([])), None);
    let handles: Vec<_> = (0..16)
        .map(|n| {
            let sessions = sessions.clone();
            std::thread::spawn(move || {
                let principal = Principal::new(format!("racer-{n}"));
                sessions
                    .as_principal(&principal)
                    .mode("owners-race")
                    .is_ok()
            })
        })
        .collect();
    let owners = handles
        .into_iter()
        .map(|handle| handle.join().unwrap())
        .filter(|owns| *owns)
        .count();
    assert_eq!(owners, 1);
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use super::*;
    use chalie_core::session::SqliteStore;

    /// The sessions table as it was before sessions had owners.
    const OLD_SCHEMA: &str = "
        CREATE TABLE sessions (id TEXT PRIMARY KEY, mode TEXT NOT NULL);
        CREATE TABLE messages (
            session_id TEXT NOT NULL, seq INTEGER NOT NULL, run_id TEXT NOT NULL, body TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        );
        INSERT INTO sessions (id, mode) VALUES ('owners-old', 'auto');
        INSERT INTO messages VALUES ('owners-old', 0, 'run-old', '{\"role\":\"user\",\"content\":\"hi\"}');
    ";

    #[tokio::test]
    async fn an_older_database_opens_and_its_sessions_are_the_host_s_until_assigned() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("old.db");
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(OLD_SCHEMA)
            .unwrap();

        let store = Arc::new(SqliteStore::open(&path).unwrap());
        let old = store.session("owners-old").unwrap().unwrap();
        assert_eq!((old.mode, old.owner.clone()), (Mode::Auto, None));
        assert_eq!(store.messages("owners-old").unwrap().len(), 1);

        let model = Arc::new(ScriptedModel::new([
            Reply::tool_call("whoami", json!({})),
            Reply::text("Alice."),
        ]));
        let sessions = composed(model, Some(store.clone()));
        let alice = Principal::new("alice");
        not_owner(
            sessions.as_principal(&alice).send("owners-old", "hi"),
            "owners-old",
            "alice",
        );
        sessions
            .assign_owner("owners-old", Some(alice.clone()))
            .unwrap();
        drop(sessions);

        // Reopened (the migration runs again and changes nothing), the
        // owner is what was stored.
        let store = Arc::new(SqliteStore::open(&path).unwrap());
        assert_eq!(
            store.session("owners-old").unwrap().unwrap().owner,
            Some(alice.clone())
        );
        let model = Arc::new(ScriptedModel::new([
            Reply::tool_call("whoami", json!({})),
            Reply::text("Alice."),
        ]));
        let sessions = composed(model, Some(store));
        sessions
            .as_principal(&alice)
            .send("owners-old", "who am i?")
            .unwrap()
            .finish()
            .await;
        assert_eq!(done("owners-old"), ["whoami:alice"]);
    }
}
