//! PostgreSQL restarted in the middle of runs that write (every connection
//! cut, open transactions rolled back, the server down until it is back)
//! while clients keep sending. Every run ends; a write body
//! never runs twice; every answer a client saw is in the database after
//! the restart; what could not be written reaches the client as an error,
//! never as a silent loss; and the same `Sessions` serves again once the
//! server is back, with no restart of its own.
//!
//! The server is the one `cargo xtask soak` starts; the test restarts it
//! through the program the soak names in `CHALIE_TEST_POSTGRES_RESTART`,
//! `CHALIE_SOAK_RESTARTS` times (default 4). The restart is a clean one
//! (`fast`): the soak's throwaway server acknowledges commits before they
//! reach its log (`synchronous_commit=off`), so a crash of it loses
//! answers no client of it could keep.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use chalie_core::session::{Event, Mode, PgStore, SessionStore};
use chalie_core::{Channel, dispatch::Setting};
use serde_json::json;

use crate::kill::{BODIES, ONE_AT_A_TIME, bodies_by_id};
use crate::{PerConversation, report, sessions, size};

/// What one client saw of one message it sent.
#[derive(Debug)]
struct Sent {
    id: u32,
    session: String,
    /// `send` refused it (the client saw the error).
    refused: bool,
    /// The run ended within the wait.
    ended: bool,
    /// Its answer, `answered write N`, arrived.
    completed: bool,
    /// The run ended with a failure the client saw.
    failed: bool,
    /// Sent after the server was back.
    after_restart: bool,
    /// How a run that did not complete ended: its last events.
    ending: String,
}

#[test]
fn postgres_restarted_mid_runs_loses_nothing_silently() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let server = std::env::var("CHALIE_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!("CHALIE_TEST_POSTGRES_URL is not set: `cargo xtask soak` starts a server")
    });
    let restarter = std::env::var("CHALIE_TEST_POSTGRES_RESTART").unwrap_or_else(|_| {
        panic!(
            "CHALIE_TEST_POSTGRES_RESTART is not set: this test restarts the server \
             `cargo xtask soak` starts, and only the soak names the program that can"
        )
    });
    let restarts = size("CHALIE_SOAK_RESTARTS", 4);
    let clients = 6;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let name = format!("chalie_restart_{}", std::process::id());
    let (admin, connection) = runtime
        .block_on(tokio_postgres::connect(&server, tokio_postgres::NoTls))
        .unwrap();
    let connection = runtime.spawn(connection);
    runtime
        .block_on(admin.batch_execute(&format!("CREATE DATABASE {name}")))
        .unwrap();
    // The restart ends this connection too; it is not needed again.
    drop(admin);
    connection.abort();
    let url = format!("{}/{name}", server.rsplit_once('/').unwrap().0);
    let folder = tempfile::tempdir().unwrap();
    let bodies = folder.path().join("bodies.txt");
    *BODIES.lock().unwrap_or_else(PoisonError::into_inner) = Some(bodies.clone());

    let _entered = runtime.enter();
    let store: Arc<dyn SessionStore> = Arc::new(PgStore::connect(&url).unwrap());
    // "write N" is one `record_write` of id N, answered "answered write N":
    // each run's write and answer are its own, so the test can tell which
    // the database kept.
    let sessions = sessions(
        Arc::new(PerConversation {
            tool: "record_write",
        }),
        store,
    )
    .build();
    sessions
        .set_policy(Channel::Chat, "record_write", Setting::Allow)
        .unwrap();

    let next = Arc::new(AtomicU32::new(1));
    let stop = Arc::new(AtomicBool::new(false));
    let back = Arc::new(AtomicBool::new(false));
    let sent: Arc<Mutex<Vec<Sent>>> = Arc::default();
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let (sessions, next, stop, back, sent) = (
                sessions.clone(),
                next.clone(),
                stop.clone(),
                back.clone(),
                sent.clone(),
            );
            runtime.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    let id = next.fetch_add(1, Ordering::Relaxed);
                    // A session per message, as many users' first messages:
                    // one session's calls would soon meet its rate limit.
                    let session = format!("restart-{client}-{id}");
                    let after_restart = back.load(Ordering::Relaxed);
                    let mut seen = Sent {
                        id,
                        session: session.clone(),
                        refused: false,
                        ended: false,
                        completed: false,
                        failed: false,
                        after_restart,
                        ending: String::new(),
                    };
                    // Auto: the allowed write runs without asking, so every
                    // run writes while the server may go down. Refused while
                    // it is down, as the send would be.
                    let sent_to = sessions
                        .set_mode(&session, Mode::Auto)
                        .and_then(|()| sessions.send(&session, &format!("write {id}")));
                    match sent_to {
                        Err(_) => seen.refused = true,
                        Ok(run) => {
                            if let Ok(events) =
                                tokio::time::timeout(Duration::from_secs(60), run.finish()).await
                            {
                                seen.ended = true;
                                // A failed call (a store error while it was
                                // recorded) is an error the client saw.
                                let call_failed = events
                                    .iter()
                                    .any(|event| matches!(event, Event::ToolFailed { .. }));
                                seen.completed = !call_failed
                                    && events.contains(&Event::MessageCompleted {
                                        content: format!("answered write {id}"),
                                    });
                                seen.failed = events.iter().any(|event| {
                                    matches!(
                                        event,
                                        Event::RunFailed { .. } | Event::ToolFailed { .. }
                                    ) || matches!(
                                        event,
                                        Event::RunSettlementCompleted { status, .. }
                                            if status != "completed"
                                    )
                                });
                                if !seen.completed {
                                    let last = events.len().saturating_sub(4);
                                    seen.ending = format!("{:?}", &events[last..]);
                                }
                            }
                        }
                    }
                    sent.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(seen);
                    // A refused send is retried, as a client would, without
                    // spinning while the server is down.
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
        })
        .collect();

    let mut downtime = Vec::new();
    for _ in 0..restarts {
        std::thread::sleep(Duration::from_millis(400));
        back.store(false, Ordering::Relaxed);
        let started = Instant::now();
        let output = std::process::Command::new(&restarter)
            .args(["postgres", "restart"])
            .output()
            .unwrap_or_else(|error| panic!("cannot run `{restarter} postgres restart`: {error}"));
        assert!(
            output.status.success(),
            "`{restarter} postgres restart` failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        downtime.push(started.elapsed().as_millis() as u64);
        back.store(true, Ordering::Relaxed);
    }
    // Long enough after the last restart for the pool to reconnect and for
    // runs to complete again.
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        runtime.block_on(task).unwrap();
    }
    drop(sessions);

    let sent = std::mem::take(&mut *sent.lock().unwrap_or_else(PoisonError::into_inner));
    let ran = bodies_by_id(&bodies);
    // What the database kept, read by a connection of its own.
    let reader = PgStore::connect(&url).unwrap();
    let mut kept: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for seen in &sent {
        if !kept.contains_key(&seen.session) {
            let messages = reader
                .messages(&seen.session)
                .unwrap()
                .into_iter()
                .map(|stored| stored.message.content)
                .collect();
            kept.insert(seen.session.clone(), messages);
        }
    }

    let mut failures = Vec::new();
    let started = sent.iter().filter(|seen| !seen.refused).count();
    let ended = sent
        .iter()
        .filter(|seen| !seen.refused && seen.ended)
        .count();
    let duplicated = ran.values().filter(|count| **count > 1).count();
    let mut lost = 0;
    for seen in sent.iter().filter(|seen| seen.completed) {
        let answer = format!("answered write {}", seen.id);
        let in_store = kept[&seen.session].contains(&answer);
        let bodies = ran.get(&seen.id).copied().unwrap_or(0);
        if !in_store || bodies != 1 {
            lost += 1;
            failures.push(format!(
                "write {}: the client saw `{answer}`, the store has it: {in_store}, bodies {bodies}",
                seen.id
            ));
        }
    }
    // A run that neither completed nor told its client it failed would be
    // a silent loss.
    let silent = sent
        .iter()
        .filter(|seen| !seen.refused && seen.ended && !seen.completed && !seen.failed)
        .inspect(|seen| {
            failures.push(format!(
                "write {}: neither its answer nor an error reached the client: {}",
                seen.id, seen.ending
            ))
        })
        .count();
    let errors_seen = sent
        .iter()
        .filter(|seen| seen.refused || seen.failed)
        .count();
    let completed_after = sent
        .iter()
        .filter(|seen| seen.after_restart && seen.completed)
        .count();
    report(json!({
        "test": "pg_restart",
        "restarts": restarts,
        "runs": started,
        "runs_ended": ended,
        "writes_duplicated": duplicated,
        "answers_lost": lost + silent,
        "errors_seen": errors_seen,
        "completed": sent.iter().filter(|seen| seen.completed).count(),
        "completed_after_restart": completed_after,
        "downtime_ms": downtime,
    }));
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(ended, started, "every run that started ends");
    assert_eq!(duplicated, 0, "a write body ran twice: {ran:?}");
    assert!(
        completed_after > 0,
        "nothing completed after the server came back: the store did not reconnect"
    );
}
