//! The policy file and the policy surface.

use chalie_core::{Channel, dispatch::Policy, dispatch::Setting, dispatch::SettingSource};

use crate::widened_builder;

fn sample() -> Policy {
    let mut policy = Policy::new();
    policy
        .set(Channel::Chat, "calendar.*", Setting::Allow)
        .unwrap();
    policy
        .set(Channel::Chat, "calendar.delete_event", Setting::Ask)
        .unwrap();
    policy
        .set(Channel::Subconscious, "calendar.*", Setting::Deny)
        .unwrap();
    policy
        .set(Channel::External, "lookup", Setting::Allow)
        .unwrap();
    policy
        .set(Channel::Chat, "tally", Setting::Internal)
        .unwrap();
    policy
}

#[test]
fn the_file_round_trips() {
    let policy = sample();
    let path = std::env::temp_dir().join(format!("chalie-policy-{}.toml", std::process::id()));
    policy.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("[chat]\n\"calendar.*\" = \"allow\"\n\"calendar.delete_event\" = \"ask\"\n"),
        "{text}"
    );
    assert!(
        text.contains("[subconscious]\n\"calendar.*\" = \"deny\"\n"),
        "{text}"
    );
    assert!(text.starts_with("# Permission policy"));
    let loaded = Policy::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(loaded, policy);
    assert_eq!(Policy::from_toml(&policy.to_toml()).unwrap(), policy);
}

#[test]
fn a_hand_edited_file_is_read_and_mistakes_are_named() {
    let policy =
        Policy::from_toml("[chat]\nweather = \"allow\"\n\"calendar.delete_event\" = \"deny\"\n")
            .unwrap();
    assert_eq!(
        policy.lookup(Channel::Chat, "weather", None),
        Setting::Allow
    );
    assert_eq!(
        policy.lookup(Channel::Chat, "calendar", Some("delete_event")),
        Setting::Deny
    );
    assert_eq!(
        policy.lookup(Channel::Chat, "calendar", Some("list_events")),
        Setting::Ask
    );
    assert_eq!(
        policy.lookup(Channel::External, "calendar", None),
        Setting::Deny
    );
    let bad_setting = Policy::from_toml("[chat]\nweather = \"sometimes\"\n").unwrap_err();
    assert!(
        bad_setting.to_string().contains("sometimes"),
        "{bad_setting}"
    );
    let bad_channel = Policy::from_toml("[email]\nweather = \"allow\"\n").unwrap_err();
    assert!(bad_channel.to_string().contains("email"), "{bad_channel}");
    let bad_permission = Policy::from_toml("[chat]\n\"a b\" = \"allow\"\n").unwrap_err();
    assert!(
        bad_permission.to_string().contains("`a b`"),
        "{bad_permission}"
    );
}

#[tokio::test]
async fn the_store_loads_and_saves() {
    let dispatcher = widened_builder().build();
    let path = std::env::temp_dir().join(format!("chalie-store-{}.toml", std::process::id()));
    sample().save(&path).unwrap();
    dispatcher.policy().load(&path).unwrap();
    assert_eq!(*dispatcher.policy().snapshot(), sample());
    dispatcher
        .policy()
        .set(Channel::External, "orders", Setting::Deny)
        .unwrap();
    dispatcher.policy().save(&path).unwrap();
    let saved = Policy::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        saved.explicit(Channel::External, "orders"),
        Some(Setting::Deny)
    );
}

#[test]
fn the_surface_lists_every_non_internal_permission() {
    let dispatcher = widened_builder().policy(sample()).build();
    let surface = dispatcher.policy_surface();
    let names: Vec<&str> = surface
        .iter()
        .map(|entry| entry.permission.as_str())
        .collect();
    for expected in [
        "calendar.*",
        "calendar.delete_event",
        "calendar.list_events",
        "lookup",
        "settings.change",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    assert!(!names.contains(&"memo"), "internal abilities are hidden");
    assert!(
        !names.contains(&"tally"),
        "permissions set internal are hidden"
    );
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let delete = surface
        .iter()
        .find(|entry| entry.permission == "calendar.delete_event")
        .unwrap();
    assert_eq!(delete.setting(Channel::Chat), Setting::Ask);
    assert_eq!(delete.setting(Channel::Subconscious), Setting::Deny);
    let list = surface
        .iter()
        .find(|entry| entry.permission == "calendar.list_events")
        .unwrap();
    assert_eq!(
        (list.chat, list.subconscious, list.external),
        (Setting::Allow, Setting::Deny, Setting::Deny)
    );
    // The surface says why: the action is not named, `calendar.*` covers it.
    assert_eq!(list.source(Channel::Chat), SettingSource::EveryAction);
    assert_eq!(list.source(Channel::External), SettingSource::Default);
    assert_eq!(delete.source(Channel::Chat), SettingSource::Explicit);
    let every = surface
        .iter()
        .find(|entry| entry.permission == "calendar.*")
        .unwrap();
    assert!(every.covers_every_action());
    assert_eq!(every.source(Channel::Chat), SettingSource::Explicit);
    assert_eq!(every.setting(Channel::Chat), Setting::Allow);
    // A call of `calendar` always has an action: no row gates nothing.
    assert!(!names.contains(&"calendar"), "{names:?}");
}

/// The gate reads the live policy by the ability's place in the registry:
/// every change through the store (set, remove, replace) governs the very
/// next call, for the tool and for each of its actions.
#[tokio::test]
async fn a_policy_changed_at_run_time_governs_the_next_call() {
    use chalie_core::dispatch::Refusal;

    let dispatcher = widened_builder().build();
    let turn = crate::turn(Channel::External, "live-policy");
    let lookup = || serde_json::json!({ "query": "rust" });
    let refusal = |done: chalie_core::dispatch::Dispatched| done.refusal();

    assert_eq!(
        refusal(crate::call(&dispatcher, &turn, "lookup", lookup()).await),
        None
    );
    dispatcher
        .policy()
        .set(Channel::External, "lookup", Setting::Deny)
        .unwrap();
    assert_eq!(
        refusal(crate::call(&dispatcher, &turn, "lookup", lookup()).await),
        Some(Refusal::Denied)
    );
    // Removed, the setting falls back to `ask`, which a channel without a
    // human cannot answer.
    dispatcher.policy().remove(Channel::External, "lookup");
    assert_ne!(
        refusal(crate::call(&dispatcher, &turn, "lookup", lookup()).await),
        None
    );
    let mut policy = Policy::new();
    policy
        .set(Channel::External, "calendar.*", Setting::Allow)
        .unwrap();
    policy
        .set(Channel::External, "calendar.delete_event", Setting::Deny)
        .unwrap();
    dispatcher.policy().replace(policy);
    let calendar = |action: &str| serde_json::json!({ "action": action, "event_id": "e1" });
    let listed = crate::call(
        &dispatcher,
        &turn,
        "calendar",
        serde_json::json!({ "action": "list_events" }),
    )
    .await;
    assert_eq!(listed.refusal(), None, "{}", listed.envelope);
    assert_eq!(
        refusal(crate::call(&dispatcher, &turn, "calendar", calendar("delete_event")).await),
        Some(Refusal::Denied)
    );
    // `lookup` is not in the replacing policy: `ask` again.
    assert_ne!(
        refusal(crate::call(&dispatcher, &turn, "lookup", lookup()).await),
        None
    );
}

/// Changes made at once from many threads leave the gate reading exactly
/// the policy they leave behind.
#[tokio::test]
async fn concurrent_changes_leave_the_gate_reading_the_last_policy() {
    use chalie_core::dispatch::Refusal;

    let dispatcher = widened_builder().build();
    std::thread::scope(|scope| {
        for (round, tool) in ["lookup", "tally_now", "lookup", "tally_now"]
            .into_iter()
            .enumerate()
        {
            let store = dispatcher.policy();
            scope.spawn(move || {
                for step in 0..200 {
                    let setting = match (round + step) % 2 {
                        0 => Setting::Allow,
                        _ => Setting::Deny,
                    };
                    store.set(Channel::External, tool, setting).unwrap();
                }
            });
        }
    });
    let turn = crate::turn(Channel::External, "concurrent-policy");
    let policy = dispatcher.policy().snapshot();
    for (tool, arguments) in [
        ("lookup", serde_json::json!({ "query": "rust" })),
        ("tally_now", serde_json::json!({})),
    ] {
        let expected = match policy.lookup(Channel::External, tool, None) {
            Setting::Allow => None,
            _ => Some(Refusal::Denied),
        };
        let done = crate::call(&dispatcher, &turn, tool, arguments).await;
        assert_eq!(done.refusal(), expected, "{tool}: {}", done.envelope);
    }
}
