//! The builder's `allow` shortcut: the same gate as a hand-built policy,
//! and a name it cannot place is an error at build time.

use chalie_core::dispatch::{Policy, PolicyError, Setting};
use chalie_core::turn::GateDecision;
use chalie_core::{Channel, Dispatcher};
use serde_json::json;

use crate::{TEST_ABILITIES, registry};

fn pinned() -> chalie_core::dispatch::DispatcherBuilder {
    Dispatcher::builder(chalie_core::registry().expect("unique names"))
        .pin(Channel::Chat, TEST_ABILITIES)
}

#[tokio::test]
async fn allow_sets_the_policy_a_hand_built_one_would() {
    let allowed = pinned().allow(Channel::Chat, ["lookup"]).unwrap().build();
    let mut policy = Policy::new();
    policy.set(Channel::Chat, "lookup", Setting::Allow).unwrap();
    assert_eq!(allowed.policy().snapshot().as_ref(), &policy);

    let done = allowed
        .call(Channel::Chat, "lookup", json!({ "query": "rust" }))
        .await;
    assert_eq!(done.record().decision, GateDecision::Allowed);
    assert!(
        done.envelope.contains("3 result(s) for rust"),
        "{}",
        done.envelope
    );

    // Only the channel and the tool it names: elsewhere the gate still asks,
    // and without an approver an `ask` is a rejection.
    let elsewhere = allowed
        .call(
            Channel::Chat,
            "calendar",
            json!({ "action": "list_events" }),
        )
        .await;
    assert_eq!(elsewhere.record().decision, GateDecision::Rejected);
}

#[test]
fn a_misspelt_ability_is_an_error_naming_the_closest() {
    let error = pinned().allow(Channel::Chat, ["lokup"]).err().unwrap();
    assert!(
        matches!(&error, PolicyError::UnknownTool { permission, suggestions }
            if permission == "lokup" && suggestions.first().map(String::as_str) == Some("lookup")),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "cannot allow `lokup`: no ability or external tool has that name; did you mean `lookup`?"
    );
}

#[test]
fn a_name_that_is_no_permission_is_refused() {
    let error = pinned().allow(Channel::Chat, ["look up"]).err().unwrap();
    assert!(
        matches!(error, PolicyError::BadPermission(ref name) if name == "look up"),
        "{error:?}"
    );
}

#[test]
fn an_action_permission_of_a_registered_ability_is_allowed() {
    let dispatcher = Dispatcher::builder(registry())
        .allow(Channel::Subconscious, ["calendar.delete_event"])
        .unwrap()
        .build();
    let policy = dispatcher.policy().snapshot();
    assert_eq!(
        policy.lookup(Channel::Subconscious, "calendar", Some("delete_event")),
        Setting::Allow
    );
    // The rest of the tool keeps the channel's default.
    assert_eq!(
        policy.lookup(Channel::Subconscious, "calendar", None),
        Policy::new().lookup(Channel::Subconscious, "calendar", None)
    );
}

#[test]
fn an_external_tool_is_allowed_once_its_proxy_is_added() {
    let before = pinned()
        .allow(Channel::Chat, ["ext__search"])
        .err()
        .unwrap();
    assert!(
        matches!(before, PolicyError::UnknownTool { .. }),
        "{before:?}"
    );

    let dispatcher = pinned()
        .external_tools(std::sync::Arc::new(crate::resolve::FakeProxy))
        .allow(Channel::Chat, ["ext__search"])
        .unwrap()
        .build();
    assert_eq!(
        dispatcher
            .policy()
            .snapshot()
            .lookup(Channel::Chat, "ext__search", None),
        Setting::Allow
    );
}
