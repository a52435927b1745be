//! Processes killed with SIGKILL in the middle of runs that write, on a
//! SQLite store: a child process (this test binary, re-run) drives a run
//! whose write is approved; it is killed while the approval waits, while
//! the write's body runs, just after the body returned, or while a plan's
//! step runs. The parent then
//! opens the same file, as a restarted service would: the approval is
//! still there, every run ends, and no write body ran twice (bodies are
//! counted in a side file, which a killed process cannot take back).
//!
//! `CHALIE_SOAK_KILLS` sets how many kills of each kind (default 3).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use chalie_core::session::{SessionStore, SqliteStore};
use chalie_core::{Params, ToolResult, ability};
use serde_json::json;
#[cfg(feature = "postgres")]
use std::time::Duration;

use crate::{PerConversation, report, sessions, size};

/// Where this process counts the write bodies that ran.
pub(crate) static BODIES: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Held by each test that sets [`BODIES`], so they take turns.
pub(crate) static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Parameters of [`record_write()`].
#[derive(Params)]
pub struct RecordParams {
    /// The record's id.
    pub id: u32,
}

/// Records one entry by id. Use it only when the user asks to record.
#[ability(
    effect = write,
    examples = ["record entry 7", "write the record", "save record 3", "store this entry", "log entry 9", "record it"],
)]
pub async fn record_write(params: RecordParams) -> ToolResult {
    let bodies = BODIES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if let Some(bodies) = bodies {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(bodies)
            .unwrap();
        // One write of the whole line: concurrent bodies append to the
        // same file, and `writeln!` may write its pieces one by one.
        file.write_all(format!("body {}\n", params.id).as_bytes())
            .unwrap();
        file.sync_all().unwrap();
    }
    println!("body ran");
    if matches!(
        std::env::var("CHALIE_FAULTS_KILL_POINT").as_deref(),
        Ok("body" | "plan")
    ) {
        // Killed here, while the write is in flight.
        std::future::pending::<()>().await;
    }
    ToolResult::success(format!("recorded {}", params.id))
}

/// The child: starts a run whose write waits for approval, then (at the
/// `body` and `after` points) approves it, and runs until killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run as a child process by `killed_processes_lose_no_approval_and_run_no_write_twice`"]
async fn child_running_a_write() {
    let (Ok(db), Ok(point)) = (
        std::env::var("CHALIE_FAULTS_KILL_DB"),
        std::env::var("CHALIE_FAULTS_KILL_POINT"),
    ) else {
        return;
    };
    *BODIES.lock().unwrap() = std::env::var("CHALIE_FAULTS_BODIES")
        .ok()
        .map(PathBuf::from);
    let model = Arc::new(PerConversation {
        tool: "record_write",
    });
    // `db` is a SQLite file, or a PostgreSQL URL shared with a live replica.
    #[cfg(feature = "postgres")]
    if db.starts_with("postgres://") {
        let store: Arc<dyn SessionStore> =
            Arc::new(chalie_core::session::PgStore::connect(&db).unwrap());
        let sessions = sessions(model, store.clone()).lease(LEASE).build();
        return drive_until_killed(sessions, store, &point).await;
    }
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&db).unwrap());
    let sessions = sessions(model, store.clone()).build();
    drive_until_killed(sessions, store, &point).await;
}

/// What a replica's runs' leases last in the PostgreSQL rounds: short, so
/// a killed process's run moves on quickly.
#[cfg(feature = "postgres")]
const LEASE: Duration = Duration::from_millis(600);

/// Starts the run (a plan's, at `plan`), approves its write unless the
/// point is the approval itself, and waits to be killed.
async fn drive_until_killed(
    sessions: chalie_core::session::Sessions,
    store: Arc<dyn SessionStore>,
    point: &str,
) {
    let run = if point == "plan" {
        // A plan of one write, collected, then executed.
        sessions
            .set_mode("killed", chalie_core::session::Mode::PlanCollect)
            .unwrap();
        sessions
            .send("killed", "record entry 7")
            .unwrap()
            .finish()
            .await;
        sessions.execute_plan("killed").unwrap()
    } else {
        sessions.send("killed", "record entry 7").unwrap()
    };
    let call = loop {
        if let Some(approval) = store.pending_approvals("killed").unwrap().pop() {
            break approval.call_id;
        }
        tokio::task::yield_now().await;
    };
    println!("waiting for approval");
    if point != "approval" {
        sessions.approve(run.id(), &call).unwrap();
    }
    // Killed before this ends.
    run.finish().await;
    std::future::pending::<()>().await;
}

/// Starts the child on `db` (a SQLite file or a PostgreSQL URL) and
/// SIGKILLs it once it reached `point`.
fn spawn_and_kill(db: &std::ffi::OsStr, point: &str, bodies: &std::path::Path, round: usize) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "kill::child_running_a_write",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("CHALIE_FAULTS_KILL_DB", db)
        .env("CHALIE_FAULTS_KILL_POINT", point)
        .env("CHALIE_FAULTS_BODIES", bodies)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let marker = match point {
        "approval" => "waiting for approval",
        _ => "body ran",
    };
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = false;
    for line in lines {
        if line.unwrap().contains(marker) {
            seen = true;
            break;
        }
    }
    assert!(
        seen,
        "round {round} at `{point}`: the child never reached the point"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// How many write bodies ran, by the side file.
fn bodies_ran(bodies: &std::path::Path) -> usize {
    std::fs::read_to_string(bodies)
        .unwrap_or_default()
        .lines()
        .count()
}

/// How many times each record id's write body ran, by the side file.
#[cfg(feature = "postgres")]
pub(crate) fn bodies_by_id(bodies: &std::path::Path) -> std::collections::BTreeMap<u32, usize> {
    let mut ran = std::collections::BTreeMap::new();
    for line in std::fs::read_to_string(bodies).unwrap_or_default().lines() {
        if let Some(id) = line.strip_prefix("body ").and_then(|id| id.parse().ok()) {
            *ran.entry(id).or_insert(0) += 1;
        }
    }
    ran
}

/// One kill at `point` on SQLite, then a restart on the same file; returns
/// (approval lost, write bodies that ran, the run ended).
fn kill_once(point: &str, round: usize) -> (bool, usize, bool) {
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("killed.db");
    let bodies = folder.path().join("bodies.txt");
    spawn_and_kill(db.as_os_str(), point, &bodies, round);

    // Restarted: the same file, a new process's sessions.
    *BODIES.lock().unwrap() = Some(bodies.clone());
    let store = Arc::new(SqliteStore::open(&db).unwrap());
    let sessions = sessions(
        Arc::new(PerConversation {
            tool: "record_write",
        }),
        store.clone(),
    )
    .build();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ended = runtime.block_on(async {
        let mut approval_lost = false;
        if point == "approval" {
            match store.pending_approvals("killed").unwrap().pop() {
                Some(approval) => sessions
                    .approve(&approval.run_id, &approval.call_id)
                    .unwrap(),
                None => approval_lost = true,
            }
        }
        let resumed = sessions.resume().unwrap();
        let mut ended = true;
        for run in &resumed {
            let events = run.finish().await;
            ended &= events
                .last()
                .is_some_and(chalie_core::session::Event::is_terminal);
        }
        // Nothing is left unfinished.
        ended &= store.unfinished_runs().unwrap().is_empty();
        (approval_lost, ended)
    });
    (ended.0, bodies_ran(&bodies), ended.1)
}

#[test]
fn killed_processes_lose_no_approval_and_run_no_write_twice() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let rounds = size("CHALIE_SOAK_KILLS", 3);
    let mut kills = 0;
    let mut approvals_lost = 0;
    let mut duplicated = 0;
    let mut lost_writes = 0;
    let mut ended = 0;
    let mut failures = Vec::new();
    for round in 0..rounds {
        for point in ["approval", "body", "after", "plan"] {
            let (lost, ran, run_ended) = kill_once(point, round);
            kills += 1;
            approvals_lost += usize::from(lost);
            duplicated += ran.saturating_sub(1);
            // Approved, the write runs once: in the child or after the restart.
            lost_writes += usize::from(ran == 0);
            ended += usize::from(run_ended);
            if lost || ran != 1 || !run_ended {
                failures.push(format!("round {round} at `{point}`: approval lost {lost}, bodies {ran}, ended {run_ended}"));
            }
        }
    }
    report(json!({
        "test": "sqlite_kill",
        "kills": kills,
        "runs": kills,
        "runs_ended": ended,
        "approvals_lost": approvals_lost,
        "writes_duplicated": duplicated,
        "writes_lost": lost_writes,
    }));
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Two processes on one PostgreSQL database: the child (replica A) is
/// killed at each point; the parent (replica B) serves HTTP throughout,
/// takes the run over once A's lease lapses, and finishes it. No approval
/// is lost, no write body runs twice, and B answers every request.
#[cfg(feature = "postgres")]
#[test]
fn a_replica_killed_mid_write_hands_its_run_to_the_live_one() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    use chalie_core::session::{BearerTokens, PgStore, router};
    use chalie_core::turn::Principal;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let server = std::env::var("CHALIE_TEST_POSTGRES_URL").unwrap_or_else(|_| {
        panic!("CHALIE_TEST_POSTGRES_URL is not set: `cargo xtask soak` (or `cargo xtask postgres start`) starts a server")
    });
    let rounds = size("CHALIE_SOAK_KILLS", 3);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (admin, connection) = runtime
        .block_on(tokio_postgres::connect(&server, tokio_postgres::NoTls))
        .unwrap();
    runtime.spawn(connection);
    let (mut kills, mut approvals_lost, mut duplicated, mut lost_writes, mut ended) =
        (0, 0, 0, 0, 0);
    let (served, refused) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut failures = Vec::new();
    for round in 0..rounds {
        for point in ["approval", "body", "after", "plan"] {
            let name = format!("chalie_kill_{}_{round}_{point}", std::process::id());
            runtime
                .block_on(admin.batch_execute(&format!("CREATE DATABASE {name}")))
                .unwrap();
            let url = format!("{}/{name}", server.rsplit_once('/').unwrap().0);
            let folder = tempfile::tempdir().unwrap();
            let bodies = folder.path().join("bodies.txt");
            *BODIES.lock().unwrap() = Some(bodies.clone());

            // Replica B, serving before, during and after A's death.
            let _entered = runtime.enter();
            let store: Arc<dyn SessionStore> = Arc::new(PgStore::connect(&url).unwrap());
            let replica = sessions(
                Arc::new(PerConversation {
                    tool: "record_write",
                }),
                store.clone(),
            )
            .lease(LEASE)
            .build();
            let token = "replica-b-0123456789abcdef0123456789ab";
            let app = router(
                replica.clone(),
                BearerTokens::new()
                    .with(token, Principal::new("b"))
                    .unwrap(),
            );
            let listener = runtime
                .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
                .unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let serving = runtime.spawn(async move { axum::serve(listener, app).await.unwrap() });
            let stop = Arc::new(AtomicBool::new(false));
            // B's own session, opened before A dies: an unknown id is a 404,
            // and the pinger must count only what a dying peer could break.
            let own: serde_json::Value = runtime.block_on(async {
                reqwest::Client::new()
                    .post(format!("{base}/sessions"))
                    .bearer_auth(token)
                    .send()
                    .await
                    .unwrap()
                    .error_for_status()
                    .unwrap()
                    .json()
                    .await
                    .unwrap()
            });
            let own = own["id"].as_str().unwrap().to_owned();
            let pinger = {
                let (stop, served, refused) = (stop.clone(), served.clone(), refused.clone());
                runtime.spawn(async move {
                    let client = reqwest::Client::new();
                    while !stop.load(Ordering::Relaxed) {
                        let answer = client
                            .get(format!("{base}/sessions/{own}/messages"))
                            .bearer_auth(token)
                            .send()
                            .await;
                        match answer {
                            Ok(answer) if answer.status() == 200 => {
                                served.fetch_add(1, Ordering::Relaxed)
                            }
                            _ => refused.fetch_add(1, Ordering::Relaxed),
                        };
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                })
            };

            spawn_and_kill(std::ffi::OsStr::new(&url), point, &bodies, round);
            kills += 1;
            let (lost, run_ended) = runtime.block_on(async {
                let mut lost = false;
                if point == "approval" {
                    match store.pending_approvals("killed").unwrap().pop() {
                        Some(approval) => replica
                            .approve(&approval.run_id, &approval.call_id)
                            .unwrap(),
                        None => lost = true,
                    }
                }
                // A's lease lapses; B takes the run.
                let mut resumed = Vec::new();
                for _ in 0..200 {
                    resumed = replica.resume().unwrap();
                    if !resumed.is_empty() || store.unfinished_runs().unwrap().is_empty() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                // Ended: in A before it died (killed just after), or here.
                let mut run_ended = true;
                for run in &resumed {
                    let events = run.finish().await;
                    run_ended &= events
                        .last()
                        .is_some_and(chalie_core::session::Event::is_terminal);
                }
                run_ended &= store.unfinished_runs().unwrap().is_empty();
                (lost, run_ended)
            });
            stop.store(true, Ordering::Relaxed);
            runtime.block_on(pinger).unwrap();
            serving.abort();
            replica.shutdown();
            let ran = bodies_ran(&bodies);
            approvals_lost += usize::from(lost);
            duplicated += ran.saturating_sub(1);
            lost_writes += usize::from(ran == 0);
            ended += usize::from(run_ended);
            if lost || ran != 1 || !run_ended {
                failures.push(format!("round {round} at `{point}`: approval lost {lost}, bodies {ran}, ended {run_ended}"));
            }
        }
    }
    let refused = refused.load(Ordering::Relaxed);
    report(json!({
        "test": "pg_kill",
        "kills": kills,
        "runs": kills,
        "runs_ended": ended,
        "approvals_lost": approvals_lost,
        "writes_duplicated": duplicated,
        "writes_lost": lost_writes,
        "served": served.load(Ordering::Relaxed),
        "serving_failures": refused,
    }));
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(
        refused, 0,
        "the live replica failed requests while the other died"
    );
}
