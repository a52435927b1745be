//! Personalised playbooks: `find_skills` returns, with each playbook, the
//! preferences and corrections the caller stored that apply to it, and
//! nothing of another user's.

use std::sync::Arc;

use assistant::Host;
use chalie_core::turn::Principal;
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

#[tokio::test]
async fn find_skills_returns_each_users_own_preferences_with_the_playbook_they_fit() {
    // The shipped playbooks, indexed with a small embedder: this test is
    // about the rules, not the ranking.
    let dir = tempfile::tempdir().unwrap();
    let registry = chalie_core::registry().unwrap();
    let descriptors = assistant::descriptors(registry).unwrap();
    Index::build(
        &descriptors,
        &HashingEmbedder::default(),
        dir.path(),
        &mut |_| {},
    )
    .unwrap();
    let host = Host::sample().with_discovery(Discovery::open(
        dir.path(),
        Arc::new(HashingEmbedder::default()),
    ));
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
