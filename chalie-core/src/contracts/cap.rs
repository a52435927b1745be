//! Hard caps on what one result puts into the model's context: never a
//! silent cut, always a way to read on.

use serde_json::Value;

use super::cursor::{Cursor, CursorError, CursorKey, Position};
use super::page::keys;
use super::scratchpad::{Scratchpad, ScratchpadSlice, slice_text};
use crate::ToolResult;

/// The ability name continuation cursors are issued for: the scratchpad
/// reader holds the full text.
pub const SCRATCHPAD_ABILITY: &str = "scratchpad";

/// A text fitted under a cap.
#[derive(Debug, Clone, PartialEq)]
pub struct Capped {
    /// What to show now.
    pub text: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// The cursor to read on from (`None` when nothing was cut, or the
    /// full text was too large to keep).
    pub next_cursor: Option<Cursor>,
    /// Characters shown.
    pub shown_chars: usize,
    /// Characters in the full text.
    pub total_chars: usize,
}

/// Fits `text` under `max_chars`. Over the cap, the full text goes into
/// `scratchpad` and the result carries a continuation cursor for
/// [`read_more`] (signed with `key`).
pub fn cap_text(
    text: &str,
    max_chars: usize,
    label: &str,
    scratchpad: &Scratchpad,
    key: &CursorKey,
) -> Capped {
    let total_chars = text.chars().count();
    if total_chars <= max_chars {
        return Capped {
            text: text.to_owned(),
            truncated: false,
            next_cursor: None,
            shown_chars: total_chars,
            total_chars,
        };
    }
    let (shown, end) = slice_text(text, 0, max_chars);
    let next_cursor = scratchpad.store(label, text).ok().map(|stub| {
        key.issue(
            SCRATCHPAD_ABILITY,
            &Value::Null,
            Position::Slice {
                id: stub.id,
                offset: end,
            },
        )
    });
    Capped {
        text: shown.to_owned(),
        truncated: true,
        next_cursor,
        shown_chars: end,
        total_chars,
    }
}

fn with_cap_metadata(
    result: ToolResult,
    shown: usize,
    total: usize,
    cursor: Option<&Cursor>,
) -> ToolResult {
    let result = result
        .with_metadata(keys::TRUNCATED, true)
        .with_metadata("shown_chars", shown)
        .with_metadata("total_chars", total);
    match cursor {
        Some(cursor) => result.with_metadata(keys::NEXT_CURSOR, cursor.to_string()),
        None => result.with_metadata(
            keys::SUMMARY,
            "cut to fit; the full text was too large to keep, so ask for less",
        ),
    }
}

/// Applies a cap of `max_chars` to the rendered body of a success.
///
/// Within the cap, or for an error, `result` is returned as it is. Over
/// it, the body is cut (see [`slice_text`]) and the header says so:
/// `truncated=true`, `shown_chars`, `total_chars` and `next_cursor`, the
/// cursor to pass to [`read_more`]. Metadata and media are kept.
///
/// ```
/// use chalie_core::{contracts::CursorKey, contracts::Scratchpad, contracts::ScratchpadLimits, ToolResult, contracts::cap_result, contracts::read_more};
///
/// let key = CursorKey::new("a configured secret of enough bytes!");
/// let pad = Scratchpad::new(ScratchpadLimits::default());
/// let long = "0123456789\n".repeat(100);
/// let capped = cap_result(ToolResult::success(long.clone()), 200, "log", &pad, &key);
/// let cursor = capped.metadata().iter().find(|(key, _)| key == "next_cursor").unwrap().1.to_string();
/// let next = read_more(&pad, &key, &chalie_core::contracts::Cursor::from_text(cursor), 200);
/// assert!(next.body().unwrap().render().starts_with("0123456789"));
/// ```
pub fn cap_result(
    result: ToolResult,
    max_chars: usize,
    label: &str,
    scratchpad: &Scratchpad,
    key: &CursorKey,
) -> ToolResult {
    let Some(body) = result.body() else {
        return result;
    };
    let rendered = body.render().into_owned();
    let capped = cap_text(&rendered, max_chars, label, scratchpad, key);
    if !capped.truncated {
        return result;
    }
    let mut rebuilt = ToolResult::success(capped.text);
    if let Some(media) = result.media() {
        rebuilt = rebuilt.with_media(media.clone());
    }
    for (name, value) in result.metadata() {
        rebuilt = rebuilt.with_metadata(name, value.clone());
    }
    with_cap_metadata(
        rebuilt,
        capped.shown_chars,
        capped.total_chars,
        capped.next_cursor.as_ref(),
    )
}

/// The continuation call: the next `max_chars` characters after a
/// [`cap_result`] cut, with the next cursor while text remains.
///
/// A forged or altered cursor is `invalid-cursor`; one whose text was
/// evicted is `scratchpad-expired`.
pub fn read_more(
    scratchpad: &Scratchpad,
    key: &CursorKey,
    cursor: &Cursor,
    max_chars: usize,
) -> ToolResult {
    let (id, offset) = match key.verify(cursor, SCRATCHPAD_ABILITY, &Value::Null) {
        Ok(Position::Slice { id, offset }) => (id, offset),
        Ok(_) => return CursorError::WrongKind.into_tool_result(),
        Err(error) => return error.into_tool_result(),
    };
    match scratchpad.read(&id, offset, max_chars) {
        Ok(slice) => slice_result(slice, key),
        Err(error) => error.into_tool_result(),
    }
}

/// A slice as a result: its text, with `offset`, `total_chars` and, while
/// text remains, `truncated=true` and `next_cursor`.
pub fn slice_result(slice: ScratchpadSlice, key: &CursorKey) -> ToolResult {
    let more = slice.has_more();
    let next_cursor = more.then(|| {
        key.issue(
            SCRATCHPAD_ABILITY,
            &Value::Null,
            Position::Slice {
                id: slice.id.clone(),
                offset: slice.end,
            },
        )
    });
    let result = ToolResult::success(slice.text)
        .with_metadata("offset", slice.offset)
        .with_metadata("total_chars", slice.total_chars)
        .with_metadata(keys::TRUNCATED, more);
    match next_cursor {
        Some(cursor) => result.with_metadata(keys::NEXT_CURSOR, cursor.to_string()),
        None => result,
    }
}

/// Reads `limit` characters of scratchpad entry `id` from `offset`: the
/// by-id form of the `scratchpad` read.
pub fn read_slice(
    scratchpad: &Scratchpad,
    key: &CursorKey,
    id: &str,
    offset: usize,
    limit: usize,
) -> ToolResult {
    match scratchpad.read(id, offset, limit) {
        Ok(slice) => slice_result(slice, key),
        Err(error) => error.into_tool_result(),
    }
}
