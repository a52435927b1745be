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

use crate::{PerConversation, report, sessions, size};

/// Where this process counts the write bodies that ran.
static BODIES: Mutex<Option<PathBuf>> = Mutex::new(None);

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
        writeln!(file, "body {}", params.id).unwrap();
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
    let store = Arc::new(SqliteStore::open(&db).unwrap());
    let sessions = sessions(
        Arc::new(PerConversation {
            tool: "record_write",
        }),
        store.clone(),
    )
    .build();
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

/// One kill at `point`; returns (approval lost, write bodies that ran, the run ended).
fn kill_once(point: &str, round: usize) -> (bool, usize, bool) {
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("killed.db");
    let bodies = folder.path().join("bodies.txt");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "kill::child_running_a_write",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("CHALIE_FAULTS_KILL_DB", &db)
        .env("CHALIE_FAULTS_KILL_POINT", point)
        .env("CHALIE_FAULTS_BODIES", &bodies)
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
    let ran = std::fs::read_to_string(&bodies)
        .unwrap_or_default()
        .lines()
        .count();
    (ended.0, ran, ended.1)
}

#[test]
fn killed_processes_lose_no_approval_and_run_no_write_twice() {
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
