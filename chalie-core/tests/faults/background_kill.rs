//! Processes killed with SIGKILL while a call runs in the background, on a
//! SQLite store: a child process (this test binary, re-run) starts a run
//! whose call goes to the background, and is killed either once the
//! background call has finished and its result is stored (`done`) or while
//! it still runs (`running`). The parent opens the same file, as a
//! restarted service would, and sends the session's next message: a
//! finished result reaches the model then, and a cut-off call is reported
//! to it as interrupted. No background result is lost either way.
//!
//! `CHALIE_SOAK_KILLS` sets how many kills of each kind (default 3).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use chalie_core::session::{Reply, ScriptedModel, SessionStore, SqliteStore, ToolCallStatus};
use chalie_core::{ToolResult, ability};
use serde_json::json;

use crate::{report, sessions, size};

/// The session each child runs in.
const SESSION: &str = "killed-background";

/// What [`background_report()`] returns: the result a restart must deliver.
const REPORT: &str = "report: 12 entries kept";

/// Builds the report, which takes a while. Use it when the user asks for
/// the report.
#[ability(
    effect = read,
    examples = ["build the report", "make me the report", "prepare the report", "report for this week", "weekly summary report", "generate the report"],
)]
pub async fn background_report() -> ToolResult {
    println!("report started");
    if std::env::var("CHALIE_FAULTS_KILL_POINT").as_deref() == Ok("running") {
        // Killed here, while the call runs in the background.
        std::future::pending::<()>().await;
    }
    ToolResult::success(REPORT)
}

/// Sessions on the SQLite file `db` that reach and allow the report.
fn on_file(db: &std::path::Path, model: Arc<ScriptedModel>) -> chalie_core::session::Sessions {
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db).unwrap());
    let sessions = sessions(model, store).pinned(["background_report"]).build();
    sessions
        .set_policy(
            chalie_core::Channel::Chat,
            "background_report",
            chalie_core::dispatch::Setting::Allow,
        )
        .unwrap();
    sessions
}

/// The child: asks for the report in the background, says when the point
/// is reached (the result stored, or the call started), and waits to be
/// killed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run as a child process by `killed_processes_lose_no_background_result`"]
async fn child_running_a_background_call() {
    let (Ok(db), Ok(point)) = (
        std::env::var("CHALIE_FAULTS_KILL_DB"),
        std::env::var("CHALIE_FAULTS_KILL_POINT"),
    ) else {
        return;
    };
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("background_report", json!({ "async": true })),
        Reply::text("The report is being built."),
    ]));
    let sessions = on_file(std::path::Path::new(&db), model);
    let run = sessions.send(SESSION, "build the report").unwrap();
    run.finish().await;
    if point == "done" {
        // Killed only once the finished result is kept (undelivered:
        // `finished`). A child that never gets there exits, and the parent
        // fails on the missing marker rather than waiting for ever.
        for _ in 0..2000 {
            let calls = sessions.store().tool_calls(run.id()).unwrap();
            if calls
                .iter()
                .any(|call| call.status == ToolCallStatus::Finished)
            {
                println!("background result kept");
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        return;
    }
    std::future::pending::<()>().await;
}

/// Starts the child on `db` and SIGKILLs it at `point`.
fn spawn_and_kill(db: &std::path::Path, point: &str, round: usize) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "background_kill::child_running_a_background_call",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env("CHALIE_FAULTS_KILL_DB", db)
        .env("CHALIE_FAULTS_KILL_POINT", point)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let marker = match point {
        "done" => "background result kept",
        _ => "report started",
    };
    let seen = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .any(|line| line.unwrap().contains(marker));
    assert!(
        seen,
        "round {round} at `{point}`: the child never reached the point"
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// One kill at `point`, then the next message on the same file; returns
/// what went wrong, if anything.
fn kill_once(point: &str, round: usize) -> Option<String> {
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("killed.db");
    spawn_and_kill(&db, point, round);

    let model = Arc::new(ScriptedModel::new([Reply::text("Here is where it is.")]));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let sessions = on_file(&db, Arc::clone(&model));
    let events = runtime.block_on(async {
        sessions
            .send(SESSION, "is the report done?")
            .unwrap()
            .finish()
            .await
    });
    let sent = model.requests();
    let told = |text: &str| {
        sent.first()
            .is_some_and(|request| request.messages.iter().any(|m| m.content.contains(text)))
    };
    let delivered = match point {
        "done" => told(REPORT),
        _ => told("background-interrupted"),
    };
    let ended = events
        .last()
        .is_some_and(chalie_core::session::Event::is_terminal);
    (!delivered || !ended).then(|| {
        format!("round {round} at `{point}`: delivered {delivered}, ended {ended}: {events:?}")
    })
}

#[test]
fn killed_processes_lose_no_background_result() {
    let _turn = crate::kill::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let rounds = size("CHALIE_SOAK_KILLS", 3);
    let (mut kills, mut failures) = (0, Vec::new());
    for round in 0..rounds {
        for point in ["done", "running"] {
            kills += 1;
            failures.extend(kill_once(point, round));
        }
    }
    report(json!({
        "test": "background_kill",
        "kills": kills,
        "background_results_lost": failures.len(),
    }));
    assert!(failures.is_empty(), "{failures:#?}");
}
