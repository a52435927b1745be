//! What sessions add to tool calls, and how fast the SQLite store records
//! them. Run it with `cargo bench -p chalie-core --bench session`.
//!
//! - `session/run_20_calls` is one run whose model asks for 20 reads at
//!   once, then answers: every call's events (`tool.started`,
//!   `tool.completed`), its tool-call record (written twice: started, then
//!   finished), its tool message, the gate's session lookup and the model
//!   turn around them. `session/dispatch_20_calls` is the same 20 calls
//!   straight through the dispatcher. The difference over 20 is the event
//!   overhead per tool call (goal <= 20 us).
//! - `session/events_per_call` is the events alone: built, logged, read by
//!   a subscriber and serialised as an SSE client would get them.
//! - `sqlite/tool_call_record` is one tool-call record inserted into the
//!   SQLite store on disk (goal >= 2,000 records a second).

use std::sync::Arc;
use std::time::Duration;

use chalie_core::session::{
    Activity, Event, EventLog, MemoryStore, Mode, Reply, ScriptedModel, SessionStore, Sessions,
    SqliteStore,
};
use chalie_core::{
    Channel, Dispatcher, Params, ToolCall, ToolResult, Turn, ability, dispatch::Policy,
    dispatch::Setting,
};
use criterion::{BatchSize, Criterion};
use serde_json::json;

#[path = "support/estimates.rs"]
mod estimates;
#[path = "support/records.rs"]
mod records;

use estimates::median_ns;
use records::tool_call_record;

/// Parameters of [`lookup()`].
#[derive(Params)]
struct LookupParams {
    /// What to look up.
    query: String,
}

/// Looks a topic up; the bench's trivial read.
#[ability(
    effect = read,
    examples = ["look up rust", "find notes on tokio", "search for serde", "what about json", "notes about tests", "look for it"],
)]
async fn lookup(params: LookupParams) -> ToolResult {
    ToolResult::success(json!({ "query": params.query, "found": 1 }))
}

const CALLS: usize = 20;

fn dispatcher() -> Arc<Dispatcher> {
    let mut policy = Policy::new();
    policy
        .set(Channel::Chat, "lookup", Setting::Allow)
        .expect("a valid permission");
    let registry = chalie_core::registry().expect("unique names").clone();
    Arc::new(
        Dispatcher::builder(registry)
            .policy(policy)
            .pin(Channel::Chat, ["lookup"])
            .without_rate_limit()
            .build(),
    )
}

fn twenty_reads() -> Reply {
    (0..CALLS).fold(Reply::empty(), |reply, index| {
        reply.then_tool_call("lookup", json!({ "query": format!("topic {index}") }))
    })
}

fn bench_session(c: &mut Criterion, runtime: &tokio::runtime::Runtime) {
    let dispatcher = dispatcher();
    let model = Arc::new(ScriptedModel::new([]));
    let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
    let sessions = Sessions::builder(Arc::clone(&dispatcher), model.clone())
        .store(store)
        .pinned(["lookup"])
        .build();

    let mut group = c.benchmark_group("session");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let mut session = 0u64;
    group.bench_function("run_20_calls", |b| {
        b.to_async(runtime).iter_batched(
            || {
                model.clear_requests();
                model.push(twenty_reads());
                model.push(Reply::text("Found them all."));
                session += 1;
                let id = format!("bench-{session}");
                sessions.set_mode(&id, Mode::Auto).expect("memory store");
                id
            },
            |id| {
                let sessions = &sessions;
                async move {
                    let run = sessions.send(&id, "look everything up").expect("a runtime");
                    let events = run.finish().await;
                    let completed = events
                        .iter()
                        .filter(|e| e.name() == "tool.completed")
                        .count();
                    assert_eq!(completed, CALLS);
                    events
                }
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("dispatch_20_calls", |b| {
        b.to_async(runtime).iter_batched(
            || Turn::builder(Channel::Chat).build(),
            |turn| {
                let dispatcher = &dispatcher;
                async move {
                    let mut envelopes = Vec::with_capacity(CALLS);
                    for index in 0..CALLS {
                        let call =
                            ToolCall::new("lookup", json!({ "query": format!("topic {index}") }))
                                .with_id(format!("call-{index}"));
                        envelopes.push(dispatcher.dispatch(&turn, call).await.envelope);
                    }
                    envelopes
                }
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("events_per_call", |b| {
        b.iter_batched(
            || {
                let log = EventLog::new();
                (log.subscribe(), log)
            },
            |(mut stream, log)| {
                log.push(Event::ToolStarted {
                    tool_key: "lookup".into(),
                    call_id: "call-1".into(),
                    activity: Activity {
                        label: "Looking it up".into(),
                    },
                });
                log.push(Event::ToolCompleted {
                    tool_key: "lookup".into(),
                    call_id: "call-1".into(),
                    execution_ms: 1,
                    success: true,
                    reused: false,
                    added_to_plan: false,
                    card: None,
                });
                // Both are in the log already: each read returns at once.
                for _ in 0..2 {
                    let event = futures::executor::block_on(stream.next()).expect("logged");
                    std::hint::black_box(event.to_json());
                }
                log.len()
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

fn bench_sqlite(c: &mut Criterion) {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let store = SqliteStore::open(folder.path().join("bench.db")).expect("a database");
    let mut group = c.benchmark_group("sqlite");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    let mut next = 0u64;
    group.bench_function("tool_call_record", |b| {
        b.iter_batched(
            || {
                next += 1;
                tool_call_record(next)
            },
            |record| store.put_tool_call(&record).expect("written"),
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut criterion = Criterion::default().configure_from_args();
    bench_session(&mut criterion, &runtime);
    bench_sqlite(&mut criterion);
    criterion.final_summary();
    if let (Some(run), Some(dispatch)) = (
        median_ns("session", "run_20_calls"),
        median_ns("session", "dispatch_20_calls"),
    ) {
        let per_call = (run - dispatch) / CALLS as f64 / 1000.0;
        println!(
            "event overhead per tool call: {per_call:.1} us (run {run:.0} ns - dispatch {dispatch:.0} ns, over {CALLS} calls; goal <= 20 us)"
        );
    }
    if let Some(events) = median_ns("session", "events_per_call") {
        println!(
            "events of one call, logged, read and serialised: {:.2} us",
            events / 1000.0
        );
    }
    if let Some(record) = median_ns("sqlite", "tool_call_record") {
        println!(
            "tool-call records written to SQLite: {:.0}/s (goal >= 2,000/s)",
            1e9 / record
        );
    }
}
