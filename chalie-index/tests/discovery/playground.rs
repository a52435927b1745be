//! The console's discovery playground (`Index::explain`, `Discover` for
//! `Discovery`): each rung laid out, and the activations `find` itself gives.

use std::sync::Arc;

use chalie_core::session::Discover;
use chalie_index::{Discovery, FindOptions};

use crate::support::{build, catalog, entries};

#[test]
fn the_report_activates_what_find_activates_and_shows_each_rung() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &catalog());
    let options = FindOptions::default();
    for query in [
        "web_search",
        "search",
        "weather forecast for a city",
        "xylophone",
    ] {
        let report = index.explain(query, &options).expect("explain");
        let outcome = index.find(&entries(&[query]), &options).expect("find");
        let injected: Vec<String> = outcome.injected.iter().map(|h| h.name.clone()).collect();
        assert_eq!(report.activated, injected, "{query}");
        let rungs: Vec<&str> = report.rungs.iter().map(|r| r.rung.as_str()).collect();
        assert_eq!(rungs, ["exact", "keyword", "vector"]);
        for candidate in report.rungs.iter().flat_map(|r| &r.candidates) {
            assert_eq!(
                candidate.activated,
                injected.contains(&candidate.name),
                "{query}: {candidate:?}"
            );
        }
    }

    let exact = index.explain("web_search", &options).expect("explain");
    assert_eq!(exact.rungs[0].candidates[0].name, "web_search");
    let near = index
        .explain("weather forecast for a city", &options)
        .expect("explain");
    let vector = &near.rungs[2].candidates;
    assert!(!vector.is_empty(), "the ranking is shown");
    assert!(
        vector
            .iter()
            .all(|c| c.score.is_some() && c.ceiling.is_some())
    );
    assert!(
        vector.windows(2).all(|w| w[0].score <= w[1].score),
        "best first: {vector:?}"
    );
    assert!(
        vector.iter().all(|c| c.name != "secret_admin"),
        "never what discovery hides"
    );

    let discovery = Discovery::new(Arc::new(index));
    let through_seam = discovery
        .discover("weather forecast for a city")
        .expect("discover");
    assert_eq!(through_seam.activated, near.activated);
}
