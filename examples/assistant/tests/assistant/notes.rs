use serde_json::{Value, json};

use crate::harness;

#[tokio::test]
async fn search_then_outline_then_read_one_section() {
    let harness = harness();
    let found: Value = harness
        .call("note_search", json!({ "query": "embeddings model" }))
        .await
        .assert_success()
        .body()
        .unwrap();
    assert_eq!(found["items"][0]["note"], "index-design");
    assert_eq!(found["items"][0]["heading"], "Embeddings");
    let section = found["items"][0]["section"].as_u64().unwrap();
    let outline: Value = harness
        .call("note_outline", json!({ "note": "index-design" }))
        .await
        .body()
        .unwrap();
    assert_eq!(
        outline["items"][section as usize - 1]["heading"],
        "Embeddings"
    );
    let read = harness
        .call(
            "note_read",
            json!({ "note": "index-design", "section": section }),
        )
        .await;
    read.assert_success();
    assert!(
        read.envelope.content.starts_with("## Embeddings\n"),
        "{}",
        read.text
    );
    assert!(!read.envelope.content.contains("## Open questions"));
    assert_eq!(read.metadata("truncated"), Some("false"));
}

#[tokio::test]
async fn a_long_note_is_read_in_slices_with_a_cursor() {
    let harness = harness();
    let first = harness
        .call("note_read", json!({ "note": "journal", "max_chars": 1000 }))
        .await;
    first.assert_success();
    assert!(first.envelope.content.chars().count() <= 1000);
    assert_eq!(first.metadata("truncated"), Some("true"));
    let cursor = first.metadata("next_cursor").unwrap().to_owned();
    let second = harness
        .call(
            "note_read",
            json!({ "note": "journal", "max_chars": 1000, "cursor": cursor }),
        )
        .await;
    second.assert_success();
    assert_eq!(
        second.metadata("offset"),
        Some(first.envelope.content.chars().count().to_string().as_str())
    );
    // The cursor continues this note only.
    harness
        .call(
            "note_read",
            json!({ "note": "rate-limits", "cursor": cursor }),
        )
        .await
        .assert_error("invalid-cursor");
}

#[tokio::test]
async fn paths_that_leave_the_folder_are_refused() {
    let harness = harness();
    for escape in [
        "../Cargo.toml",
        "../../README",
        "/etc/passwd",
        "..",
        ".hidden",
        "sub/note",
        "C:\\notes",
    ] {
        harness
            .call("note_read", json!({ "note": escape }))
            .await
            .assert_error("path-outside-notes");
        harness
            .call("note_outline", json!({ "note": escape }))
            .await
            .assert_error("path-outside-notes");
    }
    let unknown = harness
        .call("note_read", json!({ "note": "shopping" }))
        .await;
    unknown.assert_error("unknown-note");
    assert!(unknown.text.contains("journal"), "{}", unknown.text);
    harness
        .call("note_read", json!({ "note": "journal", "section": 99 }))
        .await
        .assert_error("unknown-section");
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_out_of_the_folder_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.md"), "# Secret\n").unwrap();
    std::fs::write(folder.path().join("ok.md"), "# Fine\ntext\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        folder.path().join("link.md"),
    )
    .unwrap();
    let host = assistant::Host::sample().with_notes(assistant::NotesFolder::new(folder.path()));
    let harness = crate::harness_with(host);
    harness
        .call("note_read", json!({ "note": "ok" }))
        .await
        .assert_success();
    harness
        .call("note_read", json!({ "note": "link" }))
        .await
        .assert_error("path-outside-notes");
}
