//! `ToolResult::with_card`: what a UI's card may show is made safe once,
//! where the ability declares it, and the model never reads it.

use chalie_core::ToolResult;
use chalie_core::envelope::render_envelope;
use chalie_core::result::CARD_MAX_BYTES;
use serde_json::json;

#[test]
fn strings_lose_control_characters_and_bidi_overrides_everywhere_in_the_card() {
    let result = ToolResult::success("ok").with_card(json!({
        "title\u{0}": "Rent\u{1b}[2J due\u{7}",
        "lines": ["first\nsecond\tcolumn", "\u{202E}gnp.exe\u{2066}"],
        "nested": { "note": "\u{8}\u{7f}fine" },
        "count": 3,
        "done": false,
    }));
    assert_eq!(
        result.card(),
        Some(&json!({
            "title": "Rent[2J due",
            "lines": ["first\nsecond\tcolumn", "gnp.exe"],
            "nested": { "note": "fine" },
            "count": 3,
            "done": false,
        }))
    );
}

#[test]
fn a_card_over_the_limit_is_replaced_by_a_note_saying_why() {
    let fits = "x".repeat(CARD_MAX_BYTES - r#"{"text":""}"#.len());
    let kept = ToolResult::success("ok").with_card(json!({ "text": fits }));
    assert_eq!(kept.card(), Some(&json!({ "text": fits })));

    let over = format!("{fits}x");
    let dropped = ToolResult::success("ok").with_card(json!({ "text": over }));
    assert_eq!(
        dropped.card(),
        Some(&json!({
            "omitted": "card-too-large",
            "bytes": CARD_MAX_BYTES + 1,
            "limit": CARD_MAX_BYTES,
        }))
    );
}

#[test]
fn only_a_success_carries_a_card_and_the_model_never_reads_it() {
    let failed = ToolResult::error("not-found", "no such task", "list the tasks first")
        .with_card(json!({ "title": "Task 7" }));
    assert_eq!(failed.card(), None);
    assert_eq!(ToolResult::success("ok").card(), None);

    let result = ToolResult::success("3 tasks").with_card(json!({ "secret_title": "Task 7" }));
    let envelope = render_envelope("list_tasks", None, &result);
    assert!(!envelope.contains("secret_title"), "{envelope}");
}
