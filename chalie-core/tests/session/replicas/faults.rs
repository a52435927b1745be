//! Faults: connections the server drops are replaced, and a decision or a
//! policy change announced while a replica was not listening still reaches
//! it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chalie_core::Channel;
use chalie_core::dispatch::Setting;
use chalie_core::session::{Event, Reply, ScriptedModel};
use serde_json::json;

use super::{admin, fresh_database, replica};
use crate::abilities::done;
use crate::wait_for;

/// Ends every connection to the database `url` names, as a server restart
/// or a failover does.
async fn drop_connections(url: &str) -> u64 {
    let name = url.rsplit_once('/').unwrap().1.to_owned();
    let rows = admin()
        .await
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = $1 AND pid <> pg_backend_pid()",
            &[&name],
        )
        .await
        .unwrap();
    rows.len() as u64
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_survives_its_connections_dropping_mid_run() {
    let url = fresh_database().await;
    let session = "replicas-dropped-connections";
    let a = replica(
        &url,
        Arc::new(ScriptedModel::new([
            Reply::tool_call("delete_task", json!({ "id": 5 })),
            Reply::text("Deleted task 5."),
        ])),
    );
    let b = replica(&url, Arc::new(ScriptedModel::new([])));
    let run = a.send(session, "delete task 5").unwrap();
    wait_for(&run, "tool.approval_required").await;

    // Every pooled connection and both listeners are cut while A waits.
    assert!(drop_connections(&url).await >= 2);
    // B's next call takes a fresh connection; the approval is announced
    // while A's listener is still reconnecting, and reaches A all the same.
    let call_id = b.store().pending_approvals(session).unwrap()[0]
        .call_id
        .clone();
    b.approve(run.id(), &call_id).unwrap();
    let events = tokio::time::timeout(Duration::from_secs(5), run.finish())
        .await
        .expect("A heard the approval after reconnecting");
    assert!(events.contains(&Event::MessageCompleted {
        content: "Deleted task 5.".into()
    }));
    assert_eq!(done(session), ["delete:5"]);
}

/// A deny kept through A while B's listener is cut (a restart, a failover)
/// is announced to nobody; B reads the kept changes again once it listens
/// again, so it gates its next call without a restart of its own.
#[tokio::test(flavor = "multi_thread")]
async fn a_deny_made_while_a_replica_was_not_listening_still_reaches_it() {
    let url = fresh_database().await;
    let a = replica(&url, Arc::new(ScriptedModel::new([])));
    let b = replica(&url, Arc::new(ScriptedModel::new([])));
    assert_eq!(
        b.dispatcher().policy().get(Channel::Chat, "lookup"),
        Setting::Allow
    );

    assert!(drop_connections(&url).await >= 2);
    // At once, before B's listener is back: its notification goes nowhere.
    a.set_policy(Channel::Chat, "lookup", Setting::Deny)
        .unwrap();
    let changed = Instant::now();
    while b.dispatcher().policy().get(Channel::Chat, "lookup") != Setting::Deny {
        assert!(
            changed.elapsed() < Duration::from_secs(5),
            "B still allows `lookup` 5 s after A denied it while B was not listening"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
