//! The description lint on a deliberately bad catalog, and on good
//! abilities.

use chalie_core::{
    AbilityEntry, contracts::build::LintFinding, contracts::build::LintOptions,
    contracts::build::LintRule, contracts::build::lint, contracts::build::summary_similarity,
};

use crate::catalog::{
    fetch, find_tools, forecast, list_events, search_notes, send_email, send_mail,
};

fn findings(entries: &[AbilityEntry]) -> Vec<LintFinding> {
    lint(entries.iter(), &LintOptions::default())
}

fn rules_of<'a>(findings: &'a [LintFinding], ability: &str) -> Vec<(LintRule, Option<&'a str>)> {
    findings
        .iter()
        .filter(|finding| finding.ability == ability)
        .map(|finding| (finding.rule, finding.field.as_deref()))
        .collect()
}

#[test]
fn good_abilities_pass() {
    let good = [
        AbilityEntry::of::<search_notes>(),
        AbilityEntry::of::<list_events>(),
        AbilityEntry::of::<find_tools>(),
    ];
    let found = findings(&good);
    assert!(
        found.is_empty(),
        "{}",
        found
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_bad_catalog_is_flagged() {
    let bad = [
        AbilityEntry::of::<fetch>(),
        AbilityEntry::of::<send_email>(),
        AbilityEntry::of::<send_mail>(),
        AbilityEntry::of::<forecast>(),
        AbilityEntry::of::<search_notes>(),
    ];
    let found = findings(&bad);
    let report = found
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");

    let fetch_rules = rules_of(&found, "fetch");
    for expected in [
        (LintRule::SummaryTooShort, None),
        (LintRule::NoWhenToUse, None),
        (LintRule::RestatesName, None),
        (LintRule::DefaultNotMentioned, Some("pages")),
        (LintRule::BoundsNotMentioned, Some("pages")),
        (LintRule::DefaultNotMentioned, Some("follow")),
    ] {
        assert!(
            fetch_rules.contains(&expected),
            "missing {expected:?} in\n{report}"
        );
    }
    assert_eq!(
        rules_of(&found, "forecast"),
        [(LintRule::NoWhenToUse, None)],
        "{report}"
    );

    let similar: Vec<&LintFinding> = found
        .iter()
        .filter(|f| f.rule == LintRule::TooSimilar)
        .collect();
    assert_eq!(similar.len(), 1, "{report}");
    assert_eq!(
        (similar[0].ability.as_str(), similar[0].other.as_deref()),
        ("send_email", Some("send_mail"))
    );
    // The message names both and says what differs.
    let message = similar[0].to_string();
    assert!(
        message.contains("`send_mail`") && message.contains("`send_email`"),
        "{message}"
    );
    assert!(
        message.contains("`somebody`") && message.contains("`someone`"),
        "{message}"
    );

    assert!(rules_of(&found, "search_notes").is_empty(), "{report}");
}

#[test]
fn messages_say_how_to_fix() {
    let found = findings(&[AbilityEntry::of::<fetch>()]);
    let bounds = found
        .iter()
        .find(|f| f.rule == LintRule::BoundsNotMentioned)
        .unwrap();
    assert!(
        bounds.message.contains("minimum 1") && bounds.message.contains("maximum 9"),
        "{bounds}"
    );
    let default = found
        .iter()
        .find(|f| f.field.as_deref() == Some("pages") && f.rule == LintRule::DefaultNotMentioned)
        .unwrap();
    assert!(
        default
            .to_string()
            .starts_with("default-not-mentioned: `fetch` field `pages`: the default is 3"),
        "{default}"
    );
}

#[test]
fn similarity_separates_look_alikes_from_neighbours() {
    let email = <send_email as chalie_core::Ability>::SPEC.summary();
    let mail = <send_mail as chalie_core::Ability>::SPEC.summary();
    let notes = <search_notes as chalie_core::Ability>::SPEC.summary();
    let events = <list_events as chalie_core::Ability>::SPEC.summary();
    assert!(
        summary_similarity(email, mail) > 0.8,
        "{}",
        summary_similarity(email, mail)
    );
    assert!(
        summary_similarity(notes, events) < 0.3,
        "{}",
        summary_similarity(notes, events)
    );
    assert!((summary_similarity(email, email) - 1.0).abs() < 1e-9);
}
