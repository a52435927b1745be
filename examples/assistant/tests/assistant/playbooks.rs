//! Personalised playbooks: `find_skills` returns, with each playbook, the
//! preferences and corrections the caller stored that apply to it, and
//! nothing of another user's.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use assistant::{Host, SAMPLE_NOW};
use chalie_core::session::{Listing, MemoryStore, Record, RecordStore, StoreError};
use chalie_core::turn::{Clock, Principal};
use chalie_index::{Discovery, HashingEmbedder, Index};
use chalie_testkit::Harness;
use serde_json::{Value, json};

/// A harness acting for `who` on `host`.
fn acting_for(who: &str, host: &Host) -> Harness {
    let host = host.clone();
    Harness::builder()
        .principal(Principal::new(who))
        .pin_every_ability()
        .allow_all()
        .configure(move |builder| host.install(builder))
        .build()
        .unwrap()
}

/// The rules `find_skills` returned with the playbook `name` for `query`.
async fn rules(harness: &Harness, query: &str, name: &str) -> Value {
    let found: Value = harness
        .call("find_skills", json!({ "query": [query] }))
        .await
        .assert_success()
        .body()
        .unwrap();
    found["injected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|skill| skill["name"] == name)
        .unwrap_or_else(|| panic!("{name} was not found: {found}"))["rules"]
        .clone()
}

/// The shipped abilities and playbooks, indexed in `dir` with a small
/// embedder (these tests are about the rules, not the ranking); the
/// discovery over it.
fn discovery(dir: &std::path::Path) -> Discovery {
    let registry = chalie_core::registry().unwrap();
    let descriptors = assistant::descriptors(registry).unwrap();
    Index::build(&descriptors, &HashingEmbedder::default(), dir, &mut |_| {}).unwrap();
    Discovery::open(dir, Arc::new(HashingEmbedder::default()))
}

#[tokio::test]
async fn find_skills_returns_each_users_own_preferences_with_the_playbook_they_fit() {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::sample().with_discovery(discovery(dir.path()));
    let (alice, bob) = (acting_for("alice", &host), acting_for("bob", &host));

    for stored in [
        // Matched by its words: the trip playbook puts flights in the calendar.
        (
            "preference",
            json!({ "content": "I always want a window seat on flights" }),
        ),
        // Matched by the playbook the user named.
        (
            "preference",
            json!({ "kind": "correction", "skill": "weekly_review",
                "content": "no: go through overdue tasks before the calendar" }),
        ),
        // A fact is remembered, never a rule.
        (
            "memory",
            json!({ "action": "store", "content": "my flights to Rome leave on Thursday" }),
        ),
    ] {
        alice.call(stored.0, stored.1).await.assert_success();
    }
    bob.call(
        "preference",
        json!({ "content": "book trains, not flights" }),
    )
    .await
    .assert_success();

    assert_eq!(
        rules(&alice, "help me plan my trip to Rome", "plan_a_trip").await,
        json!(["I always want a window seat on flights"])
    );
    assert_eq!(
        rules(&alice, "let's do my weekly review", "weekly_review").await,
        json!(["no: go through overdue tasks before the calendar"])
    );
    assert_eq!(
        rules(&bob, "help me plan my trip to Rome", "plan_a_trip").await,
        json!(["book trains, not flights"])
    );
    assert_eq!(
        rules(&bob, "let's do my weekly review", "weekly_review").await,
        json!([])
    );

    // An unknown kind is refused with the valid ones.
    alice
        .call("preference", json!({ "kind": "rule", "content": "x" }))
        .await
        .assert_error("invalid-kind");
}

/// A store counting the reads of the users' memories.
#[derive(Default)]
struct Counting {
    inner: MemoryStore,
    memory_reads: AtomicUsize,
}

impl RecordStore for Counting {
    fn insert_record(
        &self,
        owner: &Principal,
        collection: &str,
        data: &Value,
    ) -> Result<Record, StoreError> {
        self.inner.insert_record(owner, collection, data)
    }

    fn record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
    ) -> Result<Option<Record>, StoreError> {
        self.inner.record(owner, collection, id)
    }

    fn update_record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
        data: &Value,
    ) -> Result<Option<Record>, StoreError> {
        self.inner.update_record(owner, collection, id, data)
    }

    fn delete_record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
    ) -> Result<bool, StoreError> {
        self.inner.delete_record(owner, collection, id)
    }

    fn records(
        &self,
        owner: &Principal,
        collection: &str,
        listing: Listing,
    ) -> Result<Vec<Record>, StoreError> {
        if collection == "assistant.memory" {
            self.memory_reads.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.records(owner, collection, listing)
    }
}

#[tokio::test]
async fn find_skills_reads_the_users_memories_once_for_every_playbook_it_finds() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Counting::default());
    let host = Host::new(Clock::parse(SAMPLE_NOW).unwrap(), store.clone())
        .with_discovery(discovery(dir.path()));
    let alice = acting_for("alice", &host);
    alice
        .call(
            "preference",
            json!({ "content": "I always want a window seat on flights" }),
        )
        .await
        .assert_success();
    let before = store.memory_reads.load(Ordering::Relaxed);
    let found: Value = alice
        .call(
            "find_skills",
            json!({ "query": ["plan_a_trip", "weekly_review"] }),
        )
        .await
        .assert_success()
        .body()
        .unwrap();
    let injected = found["injected"].as_array().unwrap();
    assert!(injected.len() >= 2, "{found}");
    assert_eq!(
        store.memory_reads.load(Ordering::Relaxed) - before,
        1,
        "one read of the memories for {} playbooks",
        injected.len()
    );
    // The rules still go to the playbook they fit, and only to it.
    for skill in injected {
        let expected = if skill["name"] == "plan_a_trip" {
            json!(["I always want a window seat on flights"])
        } else {
            json!([])
        };
        assert_eq!(skill["rules"], expected, "{skill}");
    }
}
