//! Many sessions at once: nothing lost, the limit holds.

use std::collections::HashSet;
use std::sync::Arc;

use chalie_core::{Channel, ToolCall, Turn, dispatch::RateLimit, turn::CallStatus};
use serde_json::json;

use crate::widened_builder;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_over_eight_sessions() {
    const SESSIONS: usize = 8;
    const CALLS: usize = 10_000;
    const LIMIT: u32 = 200;
    let dispatcher = Arc::new(
        widened_builder()
            .rate_limit(RateLimit::per_minute(LIMIT))
            .build(),
    );
    let turns: Vec<Turn> = (0..SESSIONS)
        .map(|index| {
            Turn::builder(Channel::Chat)
                .session_id(format!("stress-{index}"))
                .build()
        })
        .collect();
    let mut tasks = Vec::with_capacity(CALLS);
    for index in 0..CALLS {
        let dispatcher = Arc::clone(&dispatcher);
        let turn = turns[index % SESSIONS].clone();
        let (name, arguments) = match index % 3 {
            0 => ("tally", json!({})),
            1 => ("lookup", json!({ "query": format!("q{}", index % 7) })),
            _ => ("calendar", json!({ "action": "list_events" })),
        };
        tasks.push(tokio::spawn(async move {
            dispatcher
                .dispatch(&turn, ToolCall::new(name, arguments))
                .await
        }));
    }
    let mut ids = HashSet::new();
    for task in tasks {
        let done = task.await.expect("no task panics");
        assert!(ids.insert(done.call_id().to_owned()), "call ids are unique");
    }
    assert_eq!(ids.len(), CALLS);
    let mut recorded = 0;
    for turn in &turns {
        let records = turn.trail().snapshot();
        recorded += records.len();
        assert_eq!(records.len(), CALLS / SESSIONS);
        let admitted = records
            .iter()
            .filter(|record| record.error_code.as_deref() != Some("rate-limited"))
            .count();
        assert_eq!(
            admitted,
            LIMIT as usize,
            "the limit holds in {}",
            turn.session_id()
        );
        assert!(
            records
                .iter()
                .all(|record| record.status != CallStatus::Pending)
        );
        assert!(records.iter().all(|record| ids.contains(&record.call_id)));
    }
    assert_eq!(recorded, CALLS);
}
