//! Signed cursors and pages, caps with continuation, the scratchpad, and
//! retry advice in the envelope.

use std::time::Duration;

use chalie_core::{
    ToolResult, contracts::Cursor, contracts::CursorError, contracts::CursorKey,
    contracts::MAX_PAGE_SIZE, contracts::PageRequest, contracts::Position, contracts::Scratchpad,
    contracts::ScratchpadError, contracts::ScratchpadLimits, contracts::cap_result,
    contracts::cap_text, contracts::read_more, contracts::read_slice, contracts::slice_text,
    envelope::Envelope, envelope::render_envelope, result::Retry,
};
use serde_json::{Value, json};

fn key() -> CursorKey {
    CursorKey::new("a test secret that is long enough!")
}

fn query() -> Value {
    json!({ "tag": "work", "format": "concise" })
}

#[test]
fn a_cursor_round_trips() {
    let cursor = key().issue("list_notes", &query(), Position::After(json!({ "id": 42 })));
    assert!(
        cursor
            .as_str()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    );
    // Key order in the query does not matter.
    let reordered = json!({ "format": "concise", "tag": "work" });
    assert_eq!(
        key().verify(&cursor, "list_notes", &reordered),
        Ok(Position::After(json!({ "id": 42 })))
    );
}

#[test]
fn a_tampered_or_forged_cursor_is_refused() {
    let cursor = key().issue("list_notes", &query(), Position::After(json!(20)));
    let text = cursor.as_str();
    let (payload, tag) = text.split_once('.').unwrap();
    // Flip one character of the payload, then of the tag.
    let flip = |s: &str, at: usize| {
        let mut chars: Vec<char> = s.chars().collect();
        chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
        chars.into_iter().collect::<String>()
    };
    for forged in [
        format!("{}.{tag}", flip(payload, 3)),
        format!("{payload}.{}", flip(tag, 5)),
        format!("{payload}.{tag}x"),
        payload.to_owned(),
        "not a cursor".to_owned(),
        String::new(),
    ] {
        assert_eq!(
            key().verify(&Cursor::from_text(forged), "list_notes", &query()),
            Err(CursorError::Forged)
        );
    }
    // Signed with another secret.
    let other =
        CursorKey::new("another secret").issue("list_notes", &query(), Position::After(json!(20)));
    assert_eq!(
        key().verify(&other, "list_notes", &query()),
        Err(CursorError::Forged)
    );
    // A payload rewritten to skip ahead, re-encoded without the secret.
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let decoded = String::from_utf8(engine.decode(payload).unwrap()).unwrap();
    let skipped = engine.encode(decoded.replace("20", "40"));
    assert_eq!(
        key().verify(
            &Cursor::from_text(format!("{skipped}.{tag}")),
            "list_notes",
            &query()
        ),
        Err(CursorError::Forged)
    );
}

#[test]
fn a_cursor_only_continues_its_own_ability_and_query() {
    let cursor = key().issue("list_notes", &query(), Position::After(json!(20)));
    assert!(matches!(
        key().verify(&cursor, "list_events", &query()),
        Err(CursorError::WrongAbility { issued_by, .. }) if issued_by == "list_notes"
    ));
    assert_eq!(
        key().verify(
            &cursor,
            "list_notes",
            &json!({ "tag": "home", "format": "concise" })
        ),
        Err(CursorError::QueryChanged)
    );
}

#[test]
fn a_stale_cursor_expires() {
    let key = key().with_max_age(Duration::from_secs(60));
    let old = key.issue_aged(
        "list_notes",
        &query(),
        Position::After(json!(20)),
        Duration::from_secs(120),
    );
    assert_eq!(
        key.verify(&old, "list_notes", &query()),
        Err(CursorError::Expired)
    );
    let fresh = key.issue_aged(
        "list_notes",
        &query(),
        Position::After(json!(20)),
        Duration::from_secs(10),
    );
    assert!(key.verify(&fresh, "list_notes", &query()).is_ok());
}

#[test]
fn a_refused_cursor_is_an_invalid_cursor_error_with_a_hint() {
    let envelope = render_envelope(
        "list_notes",
        None,
        &CursorError::QueryChanged.into_tool_result(),
    );
    let parsed = Envelope::parse(&envelope).unwrap();
    assert_eq!(parsed.code(), Some("invalid-cursor"));
    assert!(parsed.hint().unwrap().contains("without `cursor`"));
    assert!(
        envelope.contains("retry: no; change the call"),
        "{envelope}"
    );
}

#[test]
fn pages_walk_every_item_once() {
    let items: Vec<u32> = (1..=45).collect();
    let mut cursor: Option<Cursor> = None;
    let mut seen = Vec::new();
    let mut pages = 0;
    loop {
        let request =
            PageRequest::new(&key(), "list_notes", &query(), cursor.as_ref(), None).unwrap();
        let after = request
            .after()
            .map(|key| key.as_u64().unwrap() as u32)
            .unwrap_or(0);
        let fetched: Vec<u32> = items
            .iter()
            .copied()
            .filter(|id| *id > after)
            .take(request.fetch_limit())
            .collect();
        let page = request.page(&key(), fetched, |id| json!(id));
        seen.extend_from_slice(page.items());
        pages += 1;
        let result = page.clone().into_result();
        let body = result.body().unwrap().render().into_owned();
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["count"], page.items().len());
        assert!(body.get("items").is_some() && body.get("truncated") == Some(&json!(false)));
        match page.next_cursor() {
            Some(next) => {
                assert_eq!(body["next_cursor"], next.as_str());
                cursor = Some(next.clone());
            }
            None => {
                assert_eq!(body["next_cursor"], Value::Null);
                break;
            }
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, items);
}

#[test]
fn page_sizes_are_clamped_with_a_note() {
    let request = PageRequest::new(&key(), "list_notes", &query(), None, Some(500)).unwrap();
    assert_eq!(request.limit(), MAX_PAGE_SIZE);
    assert!(request.clamped());
    let page = request.page(&key(), (0..60).collect::<Vec<u32>>(), |id| json!(id));
    assert_eq!(page.items().len(), 50);
    assert!(page.note().unwrap().contains("500"));
    let body = page.into_result().body().unwrap().render().into_owned();
    assert!(body.contains("\"summary\":\"asked for 500 items"), "{body}");
}

#[test]
fn an_offset_cursor_is_not_a_page_cursor() {
    let pad = Scratchpad::new(ScratchpadLimits::default());
    let capped = cap_text(&"x".repeat(100), 10, "text", &pad, &key());
    let cursor = capped.next_cursor.unwrap();
    assert!(PageRequest::new(&key(), "scratchpad", &Value::Null, Some(&cursor), None).is_err());
}

fn metadata(result: &ToolResult, name: &str) -> Option<String> {
    result
        .metadata()
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.to_string())
}

#[test]
fn slices_cut_at_char_boundaries_and_prefer_line_ends() {
    let text = "héllo wörld ✓✓✓";
    let (slice, end) = slice_text(text, 0, 7);
    assert_eq!((slice, end), ("héllo w", 7));
    let (slice, end) = slice_text(text, 12, 100);
    assert_eq!((slice, end), ("✓✓✓", 15));
    let lines = "first line\nsecond line\nthird line\n";
    let (slice, end) = slice_text(lines, 0, 28);
    assert_eq!(slice, "first line\nsecond line\n");
    assert_eq!(end, 23);
    // A newline too early in the window is not worth the loss.
    let (slice, _) = slice_text("a\nbcdefghijklmnop", 0, 10);
    assert_eq!(slice, "a\nbcdefghi");
}

#[test]
fn a_capped_result_says_so_and_reads_on_to_the_end() {
    let pad = Scratchpad::new(ScratchpadLimits::default());
    let text: String = (0..300).map(|n| format!("line {n} — ünïcode\n")).collect();
    let result = ToolResult::success(text.clone()).with_metadata("source", "log");
    let capped = cap_result(result, 500, "build log", &pad, &key());
    assert_eq!(metadata(&capped, "truncated").as_deref(), Some("true"));
    assert_eq!(metadata(&capped, "source").as_deref(), Some("log"));
    assert_eq!(
        metadata(&capped, "total_chars"),
        Some(text.chars().count().to_string())
    );
    let envelope = render_envelope("read_log", None, &capped);
    assert!(
        envelope.lines().next().unwrap().contains("truncated=true"),
        "{envelope}"
    );

    let mut reassembled = capped.body().unwrap().render().into_owned();
    assert!(reassembled.ends_with('\n'), "cut at a line end");
    let mut cursor = metadata(&capped, "next_cursor").unwrap();
    let mut calls = 0;
    loop {
        let next = read_more(&pad, &key(), &Cursor::from_text(cursor.clone()), 500);
        assert!(next.is_success(), "{next:?}");
        reassembled.push_str(&next.body().unwrap().render());
        calls += 1;
        match metadata(&next, "next_cursor") {
            Some(more) => {
                assert_eq!(metadata(&next, "truncated").as_deref(), Some("true"));
                cursor = more;
            }
            None => {
                assert_eq!(metadata(&next, "truncated").as_deref(), Some("false"));
                break;
            }
        }
    }
    assert_eq!(reassembled, text);
    assert!(calls >= 10, "{calls}");
}

#[test]
fn within_the_cap_or_on_error_nothing_changes() {
    let pad = Scratchpad::new(ScratchpadLimits::default());
    let short = ToolResult::success("short");
    assert_eq!(cap_result(short.clone(), 100, "x", &pad, &key()), short);
    let error = ToolResult::error("too-big", &*"x".repeat(1000), "narrow it");
    assert_eq!(cap_result(error.clone(), 100, "x", &pad, &key()), error);
    assert!(pad.entries().is_empty());
}

#[test]
fn a_text_too_large_to_keep_is_still_cut_loudly() {
    let pad = Scratchpad::new(ScratchpadLimits {
        max_bytes: 100,
        max_entries: 4,
    });
    let capped = cap_result(ToolResult::success("y".repeat(1000)), 50, "x", &pad, &key());
    assert_eq!(metadata(&capped, "truncated").as_deref(), Some("true"));
    assert!(metadata(&capped, "next_cursor").is_none());
    assert!(metadata(&capped, "summary").unwrap().contains("too large"));
}

#[test]
fn a_tampered_continuation_is_refused() {
    let pad = Scratchpad::new(ScratchpadLimits::default());
    let capped = cap_text(&"z".repeat(100), 10, "text", &pad, &key());
    let cursor = capped.next_cursor.unwrap();
    let other = CursorKey::new("someone else");
    let result = read_more(&pad, &other, &cursor, 10);
    assert_eq!(result.as_error().unwrap().code().as_str(), "invalid-cursor");
    // A page cursor is not a continuation.
    let page_cursor = key().issue("scratchpad", &Value::Null, Position::After(json!(1)));
    let result = read_more(&pad, &key(), &page_cursor, 10);
    assert_eq!(result.as_error().unwrap().code().as_str(), "invalid-cursor");
}

#[test]
fn the_scratchpad_stores_reads_and_evicts_oldest_first() {
    let pad = Scratchpad::new(ScratchpadLimits {
        max_bytes: 1000,
        max_entries: 3,
    });
    let first = pad.store("first", &"a".repeat(400)).unwrap();
    let second = pad.store("second", &"b".repeat(400)).unwrap();
    assert_eq!((first.chars, first.bytes), (400, 400));
    assert!(first.read_hint().contains(&first.id));
    assert_eq!(first.to_value()["scratchpad_id"], first.id.as_str());
    let slice = pad.read(&second.id, 390, 50).unwrap();
    assert_eq!(
        (slice.text.len(), slice.end, slice.has_more()),
        (10, 400, false)
    );
    // A third text over the byte budget evicts the oldest.
    let third = pad.store("third", &"c".repeat(400)).unwrap();
    assert_eq!(
        pad.read(&first.id, 0, 10),
        Err(ScratchpadError::Expired(first.id.clone()))
    );
    assert!(pad.bytes() <= 1000);
    // The entry count is bounded too.
    pad.store("d", "d").unwrap();
    pad.store("e", "e").unwrap();
    assert!(pad.read(&second.id, 0, 1).is_err());
    assert_eq!(pad.entries().len(), 3);
    assert!(pad.read(&third.id, 0, 1).is_ok());
    assert!(matches!(
        pad.store("huge", &"h".repeat(2000)),
        Err(ScratchpadError::TooLarge { .. })
    ));

    let expired = read_slice(&pad, &key(), &first.id, 0, 10);
    let envelope = render_envelope("scratchpad", None, &expired);
    assert!(envelope.contains("code=scratchpad-expired"), "{envelope}");
    let past_end = read_slice(&pad, &key(), &third.id, 400, 10);
    assert_eq!(
        past_end.as_error().unwrap().code().as_str(),
        "invalid-offset"
    );
}

#[test]
fn ids_of_another_session_name_nothing_here() {
    let mine = Scratchpad::new(ScratchpadLimits::default());
    let theirs = Scratchpad::new(ScratchpadLimits::default());
    let stub = theirs.store("secret", "their text").unwrap();
    mine.store("mine", "my text").unwrap();
    assert_eq!(
        mine.read(&stub.id, 0, 100),
        Err(ScratchpadError::Expired(stub.id.clone()))
    );
}

#[test]
fn retry_advice_renders_in_the_envelope() {
    let cases = [
        (Retry::Never, "retry: no; change the call"),
        (Retry::Now, "retry: yes"),
        (Retry::After(2.5), "retry: after 2.5s"),
    ];
    for (retry, line) in cases {
        let result =
            ToolResult::error("rate-limited", "too many calls", "wait a moment").with_retry(retry);
        let envelope = render_envelope("search", None, &result);
        assert!(envelope.contains(line), "{envelope}");
        assert_eq!(result.as_error().unwrap().retry(), Some(retry));
    }
}
