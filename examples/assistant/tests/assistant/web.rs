use serde_json::{Value, json};

use crate::harness;

#[tokio::test]
async fn web_search_reads_the_local_corpus() {
    let found: Value = harness()
        .call("web_search", json!({ "query": "Trastevere food" }))
        .await
        .assert_success()
        .body()
        .unwrap();
    assert_eq!(
        found["items"][0]["url"],
        "https://example.org/food/trastevere-guide"
    );
}

#[tokio::test]
async fn a_long_page_is_truncated_and_the_scratchpad_reads_on() {
    let harness = harness();
    let url = "https://example.org/research/tool-discovery-report";
    let first = harness
        .call("web_page", json!({ "url": url, "max_chars": 1500 }))
        .await;
    first.assert_success();
    assert_eq!(first.metadata("truncated"), Some("true"));
    assert!(first.envelope.content.chars().count() <= 1500);
    let cursor = first.metadata("next_cursor").unwrap().to_owned();
    let more = harness
        .call(
            "scratchpad",
            json!({ "cursor": cursor, "max_chars": 20000 }),
        )
        .await;
    more.assert_success();
    assert_eq!(more.metadata("truncated"), Some("false"));
    let whole = format!("{}{}", first.envelope.content, more.envelope.content);
    assert!(
        whole.contains("6. Limitations"),
        "the two slices make the whole page"
    );
    harness
        .call("scratchpad", json!({ "cursor": "not-a-cursor" }))
        .await
        .assert_error("invalid-cursor");
    harness
        .call("web_page", json!({ "url": "https://example.org/nope" }))
        .await
        .assert_error("unknown-page");
}
