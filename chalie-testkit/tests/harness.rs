//! The harness and the smoke checks, over the example abilities.

// A failed unwrap is a failed test, with its line.
#![allow(clippy::unwrap_used)]

use chalie_core::{Channel, dispatch::Approval, dispatch::Policy, dispatch::Setting};
use chalie_testkit::{Harness, ScriptedApprover, smoke};
use serde_json::{Value, json};

chalie_core::link_abilities!(quickstart);

#[tokio::test]
async fn calls_parse_into_assertable_envelopes() {
    let harness = Harness::builder()
        .pin(["weather"])
        .allow_all()
        .build()
        .unwrap();
    let outcome = harness
        .call("weather", json!({ "location": "Valletta, MT" }))
        .await;
    outcome.assert_success();
    let body: Value = outcome.body().unwrap();
    assert_eq!(body["temperature_c"], 24.1);

    harness
        .call("weather", json!({ "location": "Atlantis" }))
        .await
        .assert_error("unknown-location");
    harness
        .call("memory", json!({ "action": "recall" }))
        .await
        .assert_error("no-query-or-location");
    let stored = harness
        .call(
            "memory",
            json!({ "action": "store", "content": "likes tea" }),
        )
        .await;
    assert_eq!(stored.assert_success().metadata("count"), Some("1"));
    harness
        .call("weather", json!({ "location": 3 }))
        .await
        .assert_error("invalid-arguments");
    assert_eq!(harness.turn().trail().len(), 5);
}

#[tokio::test]
async fn a_scripted_approver_answers_ask_in_order() {
    let approver = ScriptedApprover::new([Approval::Rejected, Approval::Approved]);
    let harness = Harness::builder()
        .abilities(["weather"])
        .approver(approver.clone())
        .build()
        .unwrap();
    harness
        .call("weather", json!({ "location": "Rome, IT" }))
        .await
        .assert_error("approval-rejected");
    harness
        .call("weather", json!({ "location": "Rome, IT" }))
        .await
        .assert_success();
    assert_eq!(approver.asked().len(), 2);
    assert_eq!(approver.asked()[0].permission, "weather");
}

#[tokio::test]
async fn a_policy_and_a_channel_apply() {
    let mut policy = Policy::new();
    policy
        .set(Channel::Subconscious, "weather", Setting::Ask)
        .unwrap();
    let harness = Harness::builder()
        .channel(Channel::Subconscious)
        .pin(["weather"])
        .policy(policy)
        .build()
        .unwrap();
    // Nobody to ask on a background pass: `ask` is a rejection there.
    harness
        .call("weather", json!({ "location": "Rome, IT" }))
        .await
        .assert_error("permission-denied");
}

#[tokio::test]
async fn a_harness_reaches_only_what_it_pins_and_the_core() {
    let harness = Harness::builder().allow_all().build().unwrap();
    // Not pinned, not found: refused before anything runs, on the trail.
    harness
        .call("weather", json!({ "location": "Rome, IT" }))
        .await
        .assert_error("tool-not-available");
    assert_eq!(harness.turn().trail().len(), 1);
    // The channel's core is always reachable.
    harness
        .call(
            "memory",
            json!({ "action": "store", "content": "likes tea" }),
        )
        .await
        .assert_success();
    // Saying so widens it, and the name says what it does.
    let widened = Harness::builder()
        .pin_every_ability()
        .allow_all()
        .build()
        .unwrap();
    widened
        .call("weather", json!({ "location": "Rome, IT" }))
        .await
        .assert_success();
}

#[tokio::test]
async fn the_example_catalog_passes_the_smoke_checks() {
    let harness = Harness::builder().build().unwrap();
    let report = smoke(harness.registry()).await;
    assert_eq!(report.checked, 2);
    report.assert_clean();
}
