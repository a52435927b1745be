//! The cascade rules, with the deterministic test embedder.

use chalie_index::{Ceiling, FindOptions, KeepRule, Rung};

use crate::support::{build, catalog, entries, local};

#[test]
fn exact_name_is_pinned_after_normalisation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &catalog());
    let outcome = index
        .find(&entries(&["Web-Search"]), &FindOptions::default())
        .expect("find");
    assert_eq!(outcome.injected.len(), 1);
    assert_eq!(outcome.injected[0].name, "web_search");
    assert_eq!(outcome.injected[0].rung, Rung::Exact);
}

#[test]
fn keyword_matches_whole_segments() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &catalog());
    let outcome = index
        .find(&entries(&["search"]), &FindOptions::default())
        .expect("find");
    assert_eq!(outcome.injected[0].name, "web_search");
    assert_eq!(outcome.injected[0].rung, Rung::Keyword);
}

#[test]
fn keyword_rejects_incidental_substrings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &catalog());
    let options = FindOptions {
        keep: KeepRule::Within(Ceiling::Absolute(0.0)),
        ..FindOptions::default()
    };
    let outcome = index.find(&entries(&["all"]), &options).expect("find");
    assert!(
        outcome
            .injected
            .iter()
            .all(|hit| hit.name != "review_tool_calls"),
        "{outcome:?}"
    );
    assert_eq!(outcome.not_found, entries(&["all"]));
}

#[test]
fn bare_name_of_two_sources_is_ambiguous() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &catalog());
    let outcome = index
        .find(&entries(&["read_file"]), &FindOptions::default())
        .expect("find");
    assert!(outcome.injected.is_empty());
    assert_eq!(outcome.ambiguous.len(), 1);
    let mut candidates = outcome.ambiguous[0].candidates.clone();
    candidates.sort();
    assert_eq!(candidates, entries(&["github__read_file", "read_file"]));
    let pinned = index
        .find(&entries(&["github__read_file"]), &FindOptions::default())
        .expect("find");
    assert_eq!(pinned.injected[0].name, "github__read_file");
}

#[test]
fn non_discoverable_never_surfaces() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &catalog());
    let options = FindOptions {
        keep: KeepRule::Within(Ceiling::Absolute(2.0)),
        per_entry: 100,
        ..FindOptions::default()
    };
    let outcome = index
        .find(
            &entries(&["secret_admin", "admin", "deletes every user account"]),
            &options,
        )
        .expect("find");
    assert!(
        outcome
            .injected
            .iter()
            .all(|hit| hit.name != "secret_admin"),
        "{outcome:?}"
    );
    let manifest = std::fs::read_to_string(dir.path().join("descriptors.json")).expect("read");
    assert!(!manifest.contains("secret_admin"));
}

#[test]
fn vector_rung_and_union_over_entries() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &catalog());
    let options = FindOptions {
        keep: KeepRule::Within(Ceiling::Absolute(0.9)),
        ..FindOptions::default()
    };
    let outcome = index
        .find(
            &entries(&["forecast for my city", "weather", "nothing matches zzz"]),
            &options,
        )
        .expect("find");
    assert_eq!(
        outcome
            .injected
            .iter()
            .filter(|hit| hit.name == "weather")
            .count(),
        1
    );
    assert_eq!(outcome.injected[0].rung, Rung::Vector);
    assert_eq!(outcome.not_found, entries(&["nothing matches zzz"]));
}

#[test]
fn several_close_examples_outrank_one_lucky_match() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut reserve = crate::support::local("reserve_restaurant", "Reserves restaurants");
    reserve.examples = entries(&[
        "book a table for lunch",
        "book a table for two",
        "book a table for brunch",
    ]);
    let mut order = crate::support::local("order_delivery", "Orders food delivery");
    order.examples = entries(&["book a table for dinner tonight please"]);
    let index = build(dir.path(), &[reserve, order]);
    let outcome = index
        .find(
            &entries(&["book a table for dinner"]),
            &FindOptions::default(),
        )
        .expect("find");
    let names: Vec<&str> = outcome.injected.iter().map(|h| h.name.as_str()).collect();
    // Max-sim alone would put `order_delivery` first: its one example is the closest vector.
    assert_eq!(
        names,
        ["reserve_restaurant", "order_delivery"],
        "{outcome:?}"
    );
    let [reserve, order] = [&outcome.injected[0], &outcome.injected[1]];
    assert!(order.distance < reserve.distance, "{outcome:?}");
}

#[test]
fn a_descriptor_with_two_examples_or_more_also_gets_a_centroid_vector() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut weather = local("weather", "Current weather and forecast for a city");
    weather.examples = entries(&["is it raining in london", "do I need an umbrella"]);
    let mut read_file = local("read_file", "Read a file from disk");
    read_file.examples = entries(&["open my notes file"]);
    let lone = local("web_search", "Search the web for pages about a topic");
    let index = build(dir.path(), &[weather, read_file, lone]);
    // weather: summary + 2 examples + centroid; read_file: summary + 1; web_search: 1.
    assert_eq!(index.manifest().vector_count, 4 + 2 + 1);
    let found = index
        .find(
            &entries(&["do I need an umbrella"]),
            &FindOptions::default(),
        )
        .expect("find");
    assert_eq!(
        found.injected.first().map(|hit| hit.name.as_str()),
        Some("weather")
    );
}

/// A catalog of both kinds: `chat` with example phrases, `send_email` with a summary alone.
fn mixed() -> Vec<chalie_index::Descriptor> {
    let mut chat = local("chat", "Chat with a colleague");
    chat.examples = entries(&[
        "send bob a message about lunch",
        "send a message to bob about lunch",
        "tell bob about lunch",
        "ping bob about the meeting",
    ]);
    let email = local("send_email", "Send an email to someone about something");
    vec![chat, email]
}

fn names(outcome: &chalie_index::FindOutcome) -> Vec<&str> {
    outcome.injected.iter().map(|h| h.name.as_str()).collect()
}

#[test]
fn a_summary_alone_is_not_crowded_out_by_example_phrases() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &mixed());
    let query = entries(&["send an email to bob about lunch"]);
    let keep_all = FindOptions {
        keep: KeepRule::Within(Ceiling::Absolute(2.0)),
        ..FindOptions::default()
    };
    let credited = index.find(&query, &keep_all).expect("find");
    let uncredited = FindOptions {
        summary_only_credit: 0.0,
        ..keep_all
    };
    let crowded = index.find(&query, &uncredited).expect("find");
    assert_eq!(names(&credited), ["send_email", "chat"], "{credited:?}");
    assert_eq!(names(&crowded), ["chat", "send_email"], "{crowded:?}");
}

#[test]
fn each_kind_of_descriptor_meets_its_own_ceiling() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &mixed());
    let query = entries(&["send an email to bob about lunch"]);
    let only = |with_examples, without_examples| {
        let options = FindOptions {
            keep: KeepRule::Within(Ceiling::PerKind {
                with_examples,
                without_examples,
            }),
            ..FindOptions::default()
        };
        let outcome = index.find(&query, &options).expect("find");
        names(&outcome)
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(only(2.0, 0.0), ["chat"]);
    assert_eq!(only(0.0, 2.0), ["send_email"]);
}
