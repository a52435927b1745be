//! The linkme registry: what is linked, descriptors, duplicates, calls.

use chalie_core::{
    Ability, AbilityEntry, Channel, Dispatcher, Effect, Registry, RegistryError, ToolCall, Turn,
    dispatch::Policy, dispatch::Setting, envelope::render_envelope, registry,
};
use serde_json::json;

use super::abilities::{clock, memory, weather};

#[test]
fn every_ability_in_the_binary_is_registered_sorted() {
    let names: Vec<&str> = registry().unwrap().iter().map(AbilityEntry::name).collect();
    assert_eq!(names, ["audio", "clock", "memory", "weather"]);
}

#[test]
fn the_five_descriptors_are_static_and_defaulted() {
    assert_eq!(weather::name(), "weather");
    assert_eq!(
        weather::summary(),
        "Current weather for a city. Use it when the user asks about the weather now."
    );
    assert_eq!(weather::examples().len(), 6);
    assert_eq!(weather::tooltip(), "Current weather for a city");
    assert_eq!(weather::parameters()["required"], json!(["location"]));
    let spec = memory::SPEC;
    assert!(spec.internal());
    assert_eq!(spec.effect(), Effect::Write);
    assert_eq!(spec.version(), "2.1.0");
    assert_eq!(spec.toolset(), "memory");
    assert_eq!(spec.action("store").unwrap().required(), ["content"]);
    assert!(spec.location().module_path().ends_with("abilities"));
    assert!(!clock::SPEC.discoverable());
    assert_eq!(clock::SPEC.toolset(), "default");
    assert_eq!(clock::SPEC.version(), "1.0.0");
    assert_eq!(clock::parameters()["properties"], json!({}));
}

#[test]
fn duplicate_names_are_an_error_naming_both_definitions() {
    let entry = AbilityEntry::of::<weather>();
    let error = Registry::from_entries([entry, AbilityEntry::of::<clock>(), entry]).unwrap_err();
    let RegistryError::DuplicateName {
        name,
        first,
        second,
    } = &error
    else {
        panic!("expected a duplicate name, got {error}");
    };
    assert_eq!(*name, "weather");
    assert_eq!(first, second);
    let message = error.to_string();
    assert!(
        message.contains("two abilities are named `weather`"),
        "{message}"
    );
    assert!(message.contains("abilities.rs"), "{message}");
}

#[tokio::test]
async fn calls_parse_then_run_with_the_turn() {
    let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&reports);
    let turn = Turn::builder(Channel::Chat)
        .progress(std::sync::Arc::new(move |progress| {
            sink.lock().unwrap().push(progress)
        }))
        .build();
    // Abilities run only through the dispatcher; `clock` is kept out of
    // discovery, so this chat is offered it by a pin.
    let mut policy = Policy::new();
    policy.set(Channel::Chat, "clock", Setting::Allow).unwrap();
    let dispatcher = Dispatcher::builder(registry().unwrap().clone())
        .policy(policy)
        .pin(Channel::Chat, ["clock"])
        .build();
    let recall = ToolCall::new("memory", json!({ "action": "recall" })).with_id("c1");
    let result = dispatcher.dispatch(&turn, recall).await.result;
    assert_eq!(
        render_envelope("memory", Some("recall"), &result),
        "[memory(status=error, code=no-query-or-location, action=recall)]\nrecall requires either a query or a location.\nhint: pass query= to search by topic, or location= to filter by place.\n[end:memory]"
    );
    {
        let reports = reports.lock().unwrap();
        assert_eq!(reports.len(), 1);
        assert_eq!(
            (
                reports[0].call_id.as_str(),
                reports[0].tool.as_str(),
                reports[0].message.as_str()
            ),
            ("c1", "memory", "searching")
        );
    }

    let result = dispatcher
        .dispatch(&turn, ToolCall::new("clock", json!({})))
        .await
        .result;
    assert_eq!(
        render_envelope("clock", None, &result),
        "[clock(status=success, zone=UTC)]\n12:00\n[end:clock]"
    );
    let bad = dispatcher
        .dispatch(&turn, ToolCall::new("clock", json!({ "zone": "CET" })))
        .await
        .result;
    assert_eq!(
        bad.as_error().unwrap().message(),
        "unknown field `zone`; this tool takes no parameters"
    );
}

#[test]
fn error_codes_built_at_run_time_stay_kebab_case() {
    assert_eq!(
        chalie_core::result::ErrorCode::new("NotFound").as_str(),
        "not-found"
    );
    assert_eq!(
        chalie_core::result::ErrorCode::new("rate limited!").as_str(),
        "rate-limited"
    );
    assert!(chalie_core::result::ErrorCode::parse("no_such").is_err());
    assert!(chalie_core::result::is_kebab_case("index-stale"));
    // What `#[ability]` would have suggested for the literal.
    assert_eq!(
        chalie_core::result::ErrorCode::new("404NotFound").as_str(),
        "not-found-404"
    );
    assert_eq!(
        chalie_core::result::ErrorCode::new("404").as_str(),
        "tool-error"
    );
}

proptest::proptest! {
    /// Whatever literal a code is built from, the result passes the rule
    /// `#[ability]` checks at compile time and `ErrorCode::parse` accepts.
    #[test]
    fn a_normalised_code_passes_the_kebab_rule(raw in "[a-zA-Z0-9 _.!-]{0,40}") {
        let raw: &'static str = Box::leak(raw.into_boxed_str());
        let code = chalie_core::result::ErrorCode::new(raw);
        proptest::prop_assert!(chalie_core::result::is_kebab_case(code.as_str()), "{raw:?} -> {code}");
        proptest::prop_assert!(chalie_core::result::ErrorCode::parse(code.as_str()).is_ok());
        if chalie_core::result::is_kebab_case(raw) {
            proptest::prop_assert_eq!(code.as_str(), raw);
        }
    }
}
