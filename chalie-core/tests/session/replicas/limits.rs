//! The per-session rate limit (30 calls a minute) holds across replicas:
//! 30 in total, not 30 on each; so does a limit an ability declares.

use std::sync::Arc;
use std::time::Duration;

use chalie_core::dispatch::{Admission, RateCounter, RateLimit, RateScope};
use chalie_core::session::{Event, PgStore, Reply, ScriptedModel};
use serde_json::json;

use super::{fresh_database, replica};

/// A reply making `calls` distinct reads.
fn reads(prefix: &str, calls: usize) -> Reply {
    (1..calls).fold(
        Reply::tool_call("lookup", json!({ "query": format!("{prefix}-0") })),
        |reply, n| reply.then_tool_call("lookup", json!({ "query": format!("{prefix}-{n}") })),
    )
}

fn counted(events: &[Event]) -> (usize, usize) {
    let ran = events
        .iter()
        .filter(|event| matches!(event, Event::ToolCompleted { .. }))
        .count();
    let refused = events
        .iter()
        .filter(|event| matches!(event, Event::ToolDegraded { .. }))
        .count();
    (ran, refused)
}

#[tokio::test(flavor = "multi_thread")]
async fn thirty_calls_a_minute_in_total_across_two_replicas() {
    let url = fresh_database().await;
    let session = "replicas-rate-limit";
    let a = replica(
        &url,
        Arc::new(ScriptedModel::new([reads("a", 20), Reply::text("ok")])),
    );
    let b = replica(
        &url,
        Arc::new(ScriptedModel::new([reads("b", 20), Reply::text("ok")])),
    );
    let on_a = counted(&a.send(session, "read twenty").unwrap().finish().await);
    assert_eq!(on_a, (20, 0), "20 of 30 on A");
    let on_b = counted(&b.send(session, "read twenty more").unwrap().finish().await);
    assert_eq!(on_b, (10, 10), "B gets the 10 left, not a fresh 30");

    // Another session has a window of its own.
    let c = replica(
        &url,
        Arc::new(ScriptedModel::new([reads("c", 5), Reply::text("ok")])),
    );
    let elsewhere = c.send("replicas-rate-other", "read five").unwrap();
    assert_eq!(counted(&elsewhere.finish().await), (5, 0));
}

/// An ability's declared limit is counted in the database in a window of
/// its own: two replicas' connections share it, and it neither spends nor
/// is spent by the session's window or another ability's.
#[tokio::test(flavor = "multi_thread")]
async fn a_declared_limit_is_one_window_for_every_replica() {
    let url = fresh_database().await;
    let (a, b) = (
        PgStore::connect(&url).unwrap(),
        PgStore::connect(&url).unwrap(),
    );
    let limit = RateLimit::new(2, Duration::from_secs(3_600));
    let export = RateScope::Ability("export");
    let session = "replicas-declared";
    assert_eq!(a.admit(session, export, limit), Ok(Admission::Admitted));
    assert_eq!(b.admit(session, export, limit), Ok(Admission::Admitted));
    let Ok(Admission::Wait(wait)) = a.admit(session, export, limit) else {
        panic!("the third call in the hour must wait");
    };
    assert!(
        wait > Duration::from_secs(3_500) && wait <= Duration::from_secs(3_600),
        "{wait:?}"
    );
    // The session's window, another ability's and another session's are
    // their own.
    assert_eq!(
        b.admit(session, RateScope::Session, limit),
        Ok(Admission::Admitted)
    );
    assert_eq!(
        b.admit(session, RateScope::Ability("refund"), limit),
        Ok(Admission::Admitted)
    );
    assert_eq!(
        b.admit("replicas-declared-other", export, limit),
        Ok(Admission::Admitted)
    );
}
