//! The store many replicas share against the embedded one, in one run:
//! `cargo xtask bench-replicas` starts a PostgreSQL server and runs this
//! bench against it (by hand: `cargo xtask postgres start`, export the
//! variable it prints, then `cargo bench -p chalie-core --features postgres
//! --bench replicas`).
//!
//! - `records/sqlite`, `records/postgres`: one tool-call record written
//!   (the run writes one when a call starts and again when it ends), on a
//!   SQLite file and on the PostgreSQL server, the way `Sessions` writes it:
//!   one synchronous call that returns once the row is committed.
//! - `approval/sqlite_one_replica`: the time from `approve` to the approved
//!   write's body running, one process on SQLite (the decision reaches the
//!   waiting run in memory).
//! - `approval/postgres_same_replica`: the same on PostgreSQL, approved
//!   through the replica that drives the run.
//! - `approval/postgres_other_replica`: approved through replica B while
//!   replica A drives the run: the decision is committed by B and reaches A
//!   by `LISTEN`/`NOTIFY`; the time ends when A's ability body runs.
//!
//! Each replica is built as the README's "Many replicas" section builds it:
//! its own `PgStore`, its own dispatcher counting the rate limit in the
//! database, its own `Sessions`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use chalie_core::session::{
    Event, PgStore, Reply, ScriptedModel, SessionStore, Sessions, SqliteStore,
};
use chalie_core::{Channel, Dispatcher, Params, ToolResult, ability, dispatch::Policy};
use criterion::{BatchSize, Criterion};
use serde_json::json;

#[path = "support/estimates.rs"]
mod estimates;
#[path = "support/records.rs"]
mod records;

use estimates::median_ns;
use records::tool_call_record;

/// The variable `cargo xtask bench-replicas` (and `cargo xtask postgres
/// start`) passes the server's URL in.
const URL_VARIABLE: &str = "CHALIE_TEST_POSTGRES_URL";

/// When the approved write's body last ran: the end of an approval's time.
static RAN_AT: Mutex<Option<Instant>> = Mutex::new(None);

/// Parameters of [`archive_task()`].
#[derive(Params)]
struct ArchiveParams {
    /// The task's id.
    id: u32,
}

/// Archives one task by id. Use it only when the user asks to archive a task.
#[ability(
    effect = write,
    examples = ["archive task 7", "put the rent task away", "archive that todo", "archive my first task", "file task 3 away", "archive it"],
)]
async fn archive_task(params: ArchiveParams) -> ToolResult {
    *RAN_AT.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
    ToolResult::success(json!({ "archived": params.id }))
}

/// A database of its own on the server at `server_url`; returns its URL.
fn fresh_database(runtime: &tokio::runtime::Runtime, server_url: &str) -> String {
    let name = format!("chalie_bench_{}", std::process::id());
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(server_url, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|error| panic!("cannot reach PostgreSQL at {server_url}: {error}"));
        tokio::spawn(connection);
        // Two statements: neither may run inside a transaction block, which
        // one multi-statement batch would be.
        for statement in [
            format!("DROP DATABASE IF EXISTS {name}"),
            format!("CREATE DATABASE {name}"),
        ] {
            client
                .batch_execute(&statement)
                .await
                .expect("a database for the bench");
        }
    });
    let (server, _) = server_url.rsplit_once('/').expect("a URL with a database");
    format!("{server}/{name}")
}

fn bench_records(c: &mut Criterion, postgres: &Arc<PgStore>) {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let sqlite = SqliteStore::open(folder.path().join("bench.db")).expect("a database");
    let mut group = c.benchmark_group("records");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let stores: [(&str, &dyn SessionStore); 2] = [("sqlite", &sqlite), ("postgres", &**postgres)];
    for (name, store) in stores {
        let mut next = 0u64;
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    next += 1;
                    tool_call_record(next)
                },
                |record| store.put_tool_call(&record).expect("written"),
                BatchSize::SmallInput,
            );
        });
    }
    group.finish();
}

/// One replica as the README builds it, on `store`.
fn replica(store: Arc<dyn SessionStore>, model: Arc<ScriptedModel>) -> Sessions {
    let mut policy = Policy::new();
    policy
        .set(
            Channel::Chat,
            "archive_task",
            chalie_core::dispatch::Setting::Allow,
        )
        .expect("a valid permission");
    let dispatcher = Dispatcher::builder(chalie_core::registry().expect("unique names").clone())
        .policy(policy)
        .without_rate_limit()
        .build();
    Sessions::builder(Arc::new(dispatcher), model)
        .store(store)
        .pinned(["archive_task"])
        .build()
}

/// `driver` runs a turn that asks to archive a task; once it waits for the
/// approval, `approver` approves it. Returns the time from the approval to
/// the write's body running on the driver.
async fn approval_latency(
    driver: &Sessions,
    model: &ScriptedModel,
    approver: &Sessions,
    session: &str,
) -> Duration {
    model.push(Reply::tool_call("archive_task", json!({ "id": 7 })));
    model.push(Reply::text("Archived."));
    *RAN_AT.lock().unwrap_or_else(PoisonError::into_inner) = None;
    let run = driver.send(session, "archive task 7").expect("a run");
    let mut events = run.events();
    let call_id = loop {
        match events.next().await {
            Some(Event::ToolApprovalRequired { tool_call_id, .. }) => break tool_call_id,
            Some(_) => {}
            None => panic!("the run ended without asking for approval"),
        }
    };
    let approved_at = Instant::now();
    approver.approve(run.id(), &call_id).expect("approved");
    let finished = run.finish().await;
    let ran_at = RAN_AT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .unwrap_or_else(|| panic!("the approved write did not run: {finished:?}"));
    ran_at.duration_since(approved_at)
}

fn bench_approvals(c: &mut Criterion, runtime: &tokio::runtime::Runtime, database: &str) {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let sqlite: Arc<dyn SessionStore> =
        Arc::new(SqliteStore::open(folder.path().join("approvals.db")).expect("a database"));
    let postgres =
        || -> Arc<dyn SessionStore> { Arc::new(PgStore::connect(database).expect("connects")) };
    let one = Arc::new(ScriptedModel::new([]));
    let sqlite_replica = replica(sqlite, one.clone());
    let (model_a, model_b) = (
        Arc::new(ScriptedModel::new([])),
        Arc::new(ScriptedModel::new([])),
    );
    let a = replica(postgres(), model_a.clone());
    // B's model is never asked: B only answers approvals.
    let b = replica(postgres(), model_b.clone());

    let mut group = c.benchmark_group("approval");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    let cases: [(&str, &Sessions, &ScriptedModel, &Sessions); 3] = [
        ("sqlite_one_replica", &sqlite_replica, &one, &sqlite_replica),
        ("postgres_same_replica", &a, &model_a, &a),
        ("postgres_other_replica", &a, &model_a, &b),
    ];
    for (name, driver, model, approver) in cases {
        let mut session = 0u64;
        group.bench_function(name, |bencher| {
            bencher.to_async(runtime).iter_custom(|iterations| {
                let first = session;
                session += iterations;
                async move {
                    let mut total = Duration::ZERO;
                    for index in 0..iterations {
                        let id = format!("{name}-{}", first + index);
                        total += approval_latency(driver, model, approver, &id).await;
                    }
                    total
                }
            });
        });
    }
    group.finish();
    assert!(
        model_b.requests().is_empty(),
        "replica B drove a run it only approved"
    );
}

fn main() {
    let server_url = std::env::var(URL_VARIABLE).unwrap_or_else(|_| {
        panic!(
            "{URL_VARIABLE} is not set: this bench needs a PostgreSQL server. \
             `cargo xtask bench-replicas` starts one and runs it"
        )
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let database = fresh_database(&runtime, &server_url);
    let postgres = Arc::new(PgStore::connect(&database).expect("connects"));
    let mut criterion = Criterion::default().configure_from_args();
    bench_records(&mut criterion, &postgres);
    bench_approvals(&mut criterion, &runtime, &database);
    criterion.final_summary();

    println!("\n| figure | SQLite | PostgreSQL |\n|---|---:|---:|");
    if let (Some(sqlite), Some(postgres)) = (
        median_ns("records", "sqlite"),
        median_ns("records", "postgres"),
    ) {
        println!(
            "| tool-call records written per second | {:.0} | {:.0} |",
            1e9 / sqlite,
            1e9 / postgres
        );
    }
    let ms = |name| median_ns("approval", name).map(|ns| format!("{:.2} ms", ns / 1e6));
    let dash = || "–".to_owned();
    println!(
        "| approval to the write running, same replica | {} | {} |",
        ms("sqlite_one_replica").unwrap_or_else(dash),
        ms("postgres_same_replica").unwrap_or_else(dash)
    );
    println!(
        "| approval on replica B to the write running on A | (one process only) | {} |",
        ms("postgres_other_replica").unwrap_or_else(dash)
    );
}
