use std::sync::Arc;

use assistant::Host;
use chalie_index::HashingEmbedder;
use serde_json::{Value, json};

use crate::{harness, harness_with};

#[tokio::test]
async fn recall_by_keyword_finds_what_was_stored_and_filters_by_place() {
    let harness = harness();
    for (content, location) in [
        ("my sister's birthday is in May", None),
        ("I prefer window seats on flights", None),
        ("the best carbonara is at Da Enzo", Some("Rome")),
    ] {
        harness
            .call(
                "memory",
                json!({ "action": "store", "content": content, "location": location }),
            )
            .await
            .assert_success();
    }
    let seats: Value = harness
        .call(
            "memory",
            json!({ "action": "recall", "query": "window seat" }),
        )
        .await
        .assert_success()
        .body()
        .unwrap();
    assert_eq!(seats["method"], "keyword");
    assert_eq!(
        seats["items"][0]["content"],
        "I prefer window seats on flights"
    );
    let rome: Value = harness
        .call("memory", json!({ "action": "recall", "location": "rome" }))
        .await
        .body()
        .unwrap();
    assert_eq!(rome["count"], 1);
    assert_eq!(rome["items"][0]["location"], "Rome");
}

#[tokio::test]
async fn recall_without_query_or_place_says_how_to_recover() {
    let outcome = harness()
        .call("memory", json!({ "action": "recall" }))
        .await;
    outcome.assert_error("no-query-or-location");
    assert!(
        outcome.text.contains("hint: pass query"),
        "{}",
        outcome.text
    );
}

#[tokio::test]
async fn forget_drops_one_memory_and_an_unknown_id_is_an_error() {
    let harness = harness();
    harness
        .call(
            "memory",
            json!({ "action": "store", "content": "dentist is Dr Borg" }),
        )
        .await
        .assert_success();
    harness
        .call("memory", json!({ "action": "forget", "id": 1 }))
        .await
        .assert_success();
    let after: Value = harness
        .call("memory", json!({ "action": "recall", "query": "dentist" }))
        .await
        .body()
        .unwrap();
    assert_eq!(after["count"], 0);
    harness
        .call("memory", json!({ "action": "forget", "id": 1 }))
        .await
        .assert_error("unknown-memory");
    // `forget` requires `id`: the dispatcher bounces it before the ability runs.
    harness
        .call("memory", json!({ "action": "forget" }))
        .await
        .assert_error("invalid-arguments");
}

#[tokio::test]
async fn with_an_embedder_recall_is_semantic() {
    let host = Host::sample().with_embedder(Arc::new(HashingEmbedder::default()));
    let harness = harness_with(host);
    harness
        .call(
            "memory",
            json!({ "action": "store", "content": "the car is due for a service in April" }),
        )
        .await
        .assert_success();
    harness
        .call(
            "memory",
            json!({ "action": "store", "content": "Maria likes lemon cake" }),
        )
        .await
        .assert_success();
    let found: Value = harness
        .call(
            "memory",
            json!({ "action": "recall", "query": "when is the car service" }),
        )
        .await
        .assert_success()
        .body()
        .unwrap();
    assert_eq!(found["method"], "hybrid");
    assert_eq!(
        found["items"][0]["content"],
        "the car is due for a service in April"
    );
    assert_eq!(
        found["count"], 1,
        "the unrelated memory is under the similarity floor: {found}"
    );
}

/// With the real MiniLM model, recall finds a memory that shares no word
/// with the query; keyword recall cannot.
#[tokio::test]
async fn minilm_recalls_by_meaning_where_keywords_find_nothing() {
    let dir = chalie_index::MiniLm::default_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    );
    let minilm =
        chalie_index::MiniLm::load(&dir).expect("model files; run `cargo xtask fetch-model` first");
    let facts = [
        "my sister's birthday is in May",
        "I prefer window seats on planes",
    ];
    let query = json!({ "action": "recall", "query": "when was my sibling born" });

    let semantic = harness_with(Host::sample().with_embedder(Arc::new(minilm)));
    let keyword = harness();
    for harness in [&semantic, &keyword] {
        for fact in facts {
            harness
                .call("memory", json!({ "action": "store", "content": fact }))
                .await
                .assert_success();
        }
    }
    let found: Value = semantic.call("memory", query.clone()).await.body().unwrap();
    assert_eq!(found["method"], "hybrid");
    assert_eq!(found["items"][0]["content"], facts[0], "{found}");
    assert_eq!(
        found["count"], 1,
        "window seats is under the similarity floor: {found}"
    );
    let missed: Value = keyword.call("memory", query).await.body().unwrap();
    assert_eq!(
        (missed["method"].as_str(), missed["count"].as_u64()),
        (Some("keyword"), Some(0))
    );
}

/// Memories kept before the host had an embedder are found by keywords
/// alone; once it has one, recall embeds them and ranks by meaning and
/// keywords together, so a memory that shares no word with the question
/// but means it comes first.
#[tokio::test]
async fn recall_is_keyword_before_embeddings_exist_and_hybrid_after() {
    let dir = chalie_index::MiniLm::default_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    );
    let minilm =
        chalie_index::MiniLm::load(&dir).expect("model files; run `cargo xtask fetch-model` first");
    let meaning = "my sister's birthday is in May";
    let words_only = "book the Borneo rainforest tour";
    let question = json!({ "action": "recall", "query": "when was my sibling born" });

    // One store, as a service keeps it across a restart with a new embedder.
    let store = Arc::new(chalie_core::session::MemoryStore::new());
    let clock = chalie_core::turn::Clock::parse(assistant::SAMPLE_NOW).unwrap();
    let before = harness_with(Host::new(clock, store.clone()));
    for fact in [meaning, words_only] {
        before
            .call("memory", json!({ "action": "store", "content": fact }))
            .await
            .assert_success();
    }
    let by_words: Value = before
        .call("memory", question.clone())
        .await
        .body()
        .unwrap();
    assert_eq!(by_words["method"], "keyword", "{by_words}");
    assert_eq!(by_words["items"][0]["content"], words_only, "{by_words}");
    assert_eq!(by_words["count"], 1, "{by_words}");

    let after = harness_with(Host::new(clock, store).with_embedder(Arc::new(minilm)));
    let by_both: Value = after.call("memory", question).await.body().unwrap();
    assert_eq!(by_both["method"], "hybrid", "{by_both}");
    assert_eq!(by_both["items"][0]["content"], meaning, "{by_both}");
}
