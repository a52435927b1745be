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

#[tokio::test]
async fn one_sessions_scratchpad_is_not_readable_from_another() {
    let harness = harness();
    let url = "https://example.org/research/tool-discovery-report";
    let dispatcher = harness.dispatcher();
    let on = |session: &str| {
        chalie_core::Turn::builder(chalie_core::Channel::Chat)
            .session_id(session)
            .pin(["web_page"])
            .build()
    };
    let alice = on("scratch-alice");
    let first = dispatcher
        .dispatch(
            &alice,
            chalie_core::ToolCall::new("web_page", json!({ "url": url, "max_chars": 400 })),
        )
        .await;
    let cursor = chalie_core::envelope::Envelope::parse(&first.envelope)
        .unwrap()
        .attribute("next_cursor")
        .unwrap()
        .to_owned();
    let read = |turn: chalie_core::Turn, cursor: String| async move {
        let done = dispatcher
            .dispatch(
                &turn,
                chalie_core::ToolCall::new("scratchpad", json!({ "cursor": cursor })),
            )
            .await;
        chalie_core::envelope::Envelope::parse(&done.envelope).unwrap()
    };
    // Bob holds Alice's cursor, validly signed, and still reads nothing.
    let bob = read(on("scratch-bob"), cursor.clone()).await;
    assert_eq!(bob.code(), Some("scratchpad-expired"), "{bob:?}");
    let again = read(alice, cursor).await;
    assert!(again.is_success(), "{again:?}");
}
