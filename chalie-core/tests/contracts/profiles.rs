//! Profiles expose what they enable and the core, never more.

use chalie_core::{AbilityEntry, Registry, contracts::ChalieConfig, contracts::Profile};

use crate::catalog::{fetch, find_tools, list_events, search_notes};

fn registry() -> Registry {
    Registry::from_entries([
        AbilityEntry::of::<search_notes>(),
        AbilityEntry::of::<list_events>(),
        AbilityEntry::of::<find_tools>(),
        AbilityEntry::of::<fetch>(),
    ])
    .unwrap()
}

fn exposed(profile: &Profile) -> Vec<&'static str> {
    profile
        .exposed(&registry())
        .iter()
        .map(AbilityEntry::name)
        .collect()
}

#[test]
fn an_empty_profile_exposes_only_the_core() {
    assert_eq!(exposed(&Profile::new()), ["find_tools"]);
    let from_toml: Profile = toml::from_str("").unwrap();
    assert_eq!(from_toml, Profile::new());
    // `find_tools` sits in the `default` toolset, yet is exposed by name.
    assert!(!Profile::new().enables("default"));
}

#[test]
fn a_toolset_exposes_its_abilities_and_no_others() {
    let profile = Profile::new().with_toolset("notes");
    assert_eq!(exposed(&profile), ["find_tools", "search_notes"]);
    assert!(profile.allows(<search_notes as chalie_core::Ability>::SPEC));
    assert!(!profile.allows_name(&registry(), "list_events"));
    assert!(!profile.allows_name(&registry(), "fetch"));
    assert!(!profile.allows_name(&registry(), "no_such_tool"));
}

#[test]
fn the_core_is_configurable() {
    let profile = Profile::new().with_core(Vec::<String>::new());
    assert!(exposed(&profile).is_empty());
    let profile = Profile::new().with_core(["list_events"]);
    assert_eq!(exposed(&profile), ["list_events"]);
}

#[test]
fn profiles_load_from_toml_and_typos_do_not_expose_anything() {
    let config: ChalieConfig = toml::from_str(
        r#"
        namespace = "acme"
        [profiles.assistant]
        toolsets = ["notes", "calendar"]
        [profiles.typo]
        toolsets = ["calender"]
        "#,
    )
    .unwrap();
    let assistant = config.profile("assistant").unwrap();
    assert_eq!(
        exposed(assistant),
        ["find_tools", "list_events", "search_notes"]
    );
    let typo = config.profile("typo").unwrap();
    assert_eq!(exposed(typo), ["find_tools"]);
    assert_eq!(typo.unknown_toolsets(&registry()), ["calender"]);
    // An unknown key is an error, not a silently different profile.
    assert!(toml::from_str::<Profile>("toolset = [\"notes\"]").is_err());
}
