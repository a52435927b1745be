//! Each user's memories, tasks and calendar, attacked as a service composes
//! them: one store for the sessions and the users' records (memory, a
//! SQLite file, PostgreSQL), one dispatcher built as the crate's docs build
//! it, and a scripted model's tool calls in sessions opened for Alice and
//! for Bob. Bob reaches nothing of Alice's; a call for nobody is refused;
//! the data outlives the process.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use assistant::{Host, SAMPLE_NOW, TaskState};
use chalie_core::envelope::Envelope;
use chalie_core::session::{
    Event, MemoryStore, RecordStore, Reply, ScriptedModel, SessionStore, Sessions,
};
use chalie_core::turn::{Clock, Principal};
use chalie_core::{Channel, Dispatcher, ToolCall, Turn};
use serde_json::{Value, json};

/// The per-user abilities, offered on every turn so the script calls them
/// straight away.
const PER_USER: [&str; 5] = ["memory", "tasks", "task_list", "calendar", "calendar_edit"];

/// The assistant as a service builds it over `store`: the host's records
/// and the sessions in the same database, the assistant's policy.
struct Service {
    host: Host,
    dispatcher: Arc<Dispatcher>,
    store: Arc<dyn SessionStore>,
}

impl Service {
    fn over<S: SessionStore + RecordStore + 'static>(store: Arc<S>) -> Service {
        let clock = Clock::parse(SAMPLE_NOW).unwrap();
        // The service's own host, without the model and index the service
        // adds (these calls need neither).
        let host = assistant::service::host(store.clone(), clock, None).unwrap();
        let registry = chalie_core::registry().unwrap().clone();
        let dispatcher = Arc::new(
            host.install(Dispatcher::builder(registry).policy(assistant::policy()))
                .build(),
        );
        Service {
            host,
            dispatcher,
            store,
        }
    }

    /// The envelope the model read after calling `tool` with `arguments` in
    /// a new session of `who` (`None`: a session the host opened, owned by
    /// nobody); a write the policy asks about is approved by its owner.
    async fn call(&self, who: Option<&Principal>, tool: &str, arguments: Value) -> Envelope {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let session = format!(
            "{}-{}-{}",
            who.map_or("host", Principal::id),
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let model = Arc::new(ScriptedModel::new([
            Reply::tool_call(tool, arguments),
            Reply::text("Done."),
        ]));
        let sessions = Sessions::builder(Arc::clone(&self.dispatcher), model)
            .store(Arc::clone(&self.store))
            .pinned(PER_USER)
            .build();
        let run = match who {
            Some(who) => sessions.as_principal(who).send(&session, "go"),
            None => sessions.send(&session, "go"),
        }
        .unwrap();
        let mut events = run.events();
        while let Some(event) = events.next().await {
            if let Event::ToolApprovalRequired { tool_call_id, .. } = &event {
                match who {
                    Some(who) => sessions.as_principal(who).approve(run.id(), tool_call_id),
                    None => sessions.approve(run.id(), tool_call_id),
                }
                .unwrap();
            }
        }
        let calls = self.store.tool_calls(run.id()).unwrap();
        let envelope = calls[0].envelope.as_deref().expect("the call finished");
        Envelope::parse(envelope).unwrap()
    }
}

/// The body of a successful call.
#[track_caller]
fn body(envelope: &Envelope) -> Value {
    assert!(envelope.is_success(), "{envelope:?}");
    envelope.json().unwrap()
}

/// Fails unless the call was refused with `code`.
#[track_caller]
fn refused(envelope: &Envelope, code: &str) {
    assert_eq!(envelope.code(), Some(code), "{envelope:?}");
}

fn alice() -> Principal {
    Principal::new("alice")
}

fn bob() -> Principal {
    Principal::new("bob")
}

/// What Alice keeps in [`attack`]: her memory's, task's and event's ids.
struct Kept {
    memory: u64,
    task: u64,
    event: u64,
}

/// Alice stores a memory, a task and an event through her own session.
async fn alice_keeps(service: &Service) -> Kept {
    let alice = alice();
    let memory = service
        .call(
            Some(&alice),
            "memory",
            json!({ "action": "store", "content": "my locker code is 4512" }),
        )
        .await;
    let task = service
        .call(
            Some(&alice),
            "tasks",
            json!({ "action": "create", "title": "Book the Rome hotel", "due": "2026-03-04" }),
        )
        .await;
    let event = service
        .call(
            Some(&alice),
            "calendar_edit",
            json!({ "action": "add_event", "title": "Dentist", "start": "2026-03-02T15:00" }),
        )
        .await;
    Kept {
        memory: body(&memory)["stored"].as_u64().unwrap(),
        task: body(&task)["created"]["id"].as_u64().unwrap(),
        event: body(&event)["added"]["id"].as_u64().unwrap(),
    }
}

/// Bob, in his own sessions on the same service, tries every way to
/// Alice's data: reads find nothing, writes read her ids as missing.
/// Then checks nothing of hers changed.
async fn attack(service: &Service, kept: &Kept) {
    let bob = Some(bob());
    let bob = bob.as_ref();
    let recalled = service
        .call(
            bob,
            "memory",
            json!({ "action": "recall", "query": "locker code" }),
        )
        .await;
    assert_eq!(body(&recalled)["count"], 0, "{recalled:?}");
    let listed = service
        .call(bob, "task_list", json!({ "status": "all" }))
        .await;
    assert_eq!(body(&listed)["items"], json!([]), "{listed:?}");
    let week = service
        .call(bob, "calendar", json!({ "action": "week" }))
        .await;
    assert_eq!(body(&week)["items"], json!([]), "{week:?}");

    for action in [
        json!({ "action": "update", "id": kept.task, "title": "Hijacked" }),
        json!({ "action": "complete", "id": kept.task }),
        json!({ "action": "delete", "id": kept.task }),
    ] {
        refused(&service.call(bob, "tasks", action).await, "unknown-task");
    }
    refused(
        &service
            .call(
                bob,
                "calendar_edit",
                json!({ "action": "delete_event", "id": kept.event }),
            )
            .await,
        "unknown-event",
    );
    refused(
        &service
            .call(
                bob,
                "memory",
                json!({ "action": "forget", "id": kept.memory }),
            )
            .await,
        "unknown-memory",
    );

    // Nothing of Alice's changed, and she still reaches all of it.
    let alice = alice();
    let tasks = service.host.tasks.all(&alice).unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(
        (tasks[0].title.as_str(), tasks[0].state),
        ("Book the Rome hotel", TaskState::Open)
    );
    let events = service.host.calendar.events(&alice).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].title, "Dentist");
    let recalled = service
        .call(
            Some(&alice),
            "memory",
            json!({ "action": "recall", "query": "locker code" }),
        )
        .await;
    assert_eq!(
        body(&recalled)["items"][0]["content"],
        "my locker code is 4512"
    );
}

#[tokio::test]
async fn bob_reaches_nothing_of_alices_memory_tasks_or_calendar() {
    let service = Service::over(Arc::new(MemoryStore::new()));
    let kept = alice_keeps(&service).await;
    attack(&service, &kept).await;
    // Bob's own task is his alone. Ids are numbered per user, so his first
    // task may take the same number as Alice's: neither sees the other's,
    // and his numbering says nothing of how many she has.
    let his = service
        .call(
            Some(&bob()),
            "tasks",
            json!({ "action": "create", "title": "Bob's errand" }),
        )
        .await;
    let his_id = body(&his)["created"]["id"].as_u64().unwrap();
    let bobs = service.host.tasks.all(&bob()).unwrap();
    assert_eq!(bobs.len(), 1);
    assert_eq!(
        (bobs[0].id, bobs[0].title.as_str()),
        (his_id, "Bob's errand")
    );
    let alices = service.host.tasks.all(&alice()).unwrap();
    assert_eq!(alices.len(), 1);
    assert_eq!(alices[0].id, kept.task);
    assert_ne!(alices[0].title, "Bob's errand");
}

#[tokio::test]
async fn alices_own_delete_is_soft() {
    let service = Service::over(Arc::new(MemoryStore::new()));
    let kept = alice_keeps(&service).await;
    let alice = Some(alice());
    body(
        &service
            .call(
                alice.as_ref(),
                "tasks",
                json!({ "action": "delete", "id": kept.task }),
            )
            .await,
    );
    let listed = service
        .call(alice.as_ref(), "task_list", json!({ "status": "all" }))
        .await;
    assert_eq!(body(&listed)["items"], json!([]));
    // Kept, marked deleted; a second delete finds nothing to delete.
    let tasks = service.host.tasks.all(alice.as_ref().unwrap()).unwrap();
    assert_eq!(tasks[0].state, TaskState::Deleted);
    refused(
        &service
            .call(
                alice.as_ref(),
                "tasks",
                json!({ "action": "delete", "id": kept.task }),
            )
            .await,
        "unknown-task",
    );
}

#[tokio::test]
async fn a_call_for_nobody_is_refused_with_the_fix() {
    let service = Service::over(Arc::new(MemoryStore::new()));
    // A session the host opened belongs to nobody: its turns carry no
    // principal, so there is no user whose data a call could touch.
    let from_host = service
        .call(
            None,
            "memory",
            json!({ "action": "store", "content": "nobody's fact" }),
        )
        .await;
    refused(&from_host, "no-principal");
    assert!(
        from_host
            .error
            .as_ref()
            .is_some_and(|error| error.hint.contains("as_principal")),
        "{from_host:?}"
    );
    // Every per-user ability, its writes approved by the host: the
    // ability itself refuses.
    for (tool, arguments) in [
        ("memory", json!({ "action": "recall", "query": "fact" })),
        ("task_list", json!({})),
        ("tasks", json!({ "action": "create", "title": "Nobody's" })),
        ("calendar", json!({ "action": "today" })),
        (
            "calendar_edit",
            json!({ "action": "add_event", "title": "Nobody's", "start": "2026-03-02T15:00" }),
        ),
    ] {
        refused(&service.call(None, tool, arguments).await, "no-principal");
    }
    // The same straight through the dispatcher, on a turn built for nobody.
    let turn = Turn::builder(Channel::Chat).pin(PER_USER).build();
    let done = service
        .dispatcher
        .dispatch(
            &turn,
            ToolCall::new("memory", json!({ "action": "recall", "query": "fact" })),
        )
        .await;
    refused(&Envelope::parse(&done.envelope).unwrap(), "no-principal");
}

#[tokio::test]
async fn the_data_outlives_the_process_in_the_sqlite_file() {
    use chalie_core::session::SqliteStore;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("assistant.db");
    let kept = {
        let service = Service::over(Arc::new(SqliteStore::open(&path).unwrap()));
        alice_keeps(&service).await
    };
    // A new process: the same file, nothing else carried over.
    let service = Service::over(Arc::new(SqliteStore::open(&path).unwrap()));
    attack(&service, &kept).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread")]
async fn the_same_holds_on_postgres_across_reconnecting() {
    use chalie_core::session::PgStore;

    let url = postgres::fresh_database().await;
    let kept = {
        let service = Service::over(Arc::new(PgStore::connect(&url).unwrap()));
        alice_keeps(&service).await
    };
    let service = Service::over(Arc::new(PgStore::connect(&url).unwrap()));
    attack(&service, &kept).await;
}

#[cfg(feature = "postgres")]
mod postgres {
    //! A database of its own on the server `cargo xtask test` starts.

    use std::sync::atomic::{AtomicU32, Ordering};

    /// The variable `cargo xtask test` passes the server's URL in.
    const URL_VARIABLE: &str = "CHALIE_TEST_POSTGRES_URL";

    /// A new, empty database; returns its URL. Without the server this
    /// fails, naming what is missing: it never passes by skipping.
    pub async fn fresh_database() -> String {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let url = std::env::var(URL_VARIABLE).unwrap_or_else(|_| {
            panic!(
                "{URL_VARIABLE} is not set: the PostgreSQL tests need a server. \
                 `cargo xtask test` starts one; by hand, `cargo xtask postgres start` prints \
                 the variable to export"
            )
        });
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|error| panic!("cannot reach the test PostgreSQL: {error}"));
        tokio::spawn(connection);
        let name = format!(
            "assistant_test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        let (server, _) = url.rsplit_once('/').unwrap();
        format!("{server}/{name}")
    }
}
