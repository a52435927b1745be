//! Notes in one folder the abilities may not leave: search finds a
//! section, the outline lists a note's sections, the reader returns one
//! section a slice at a time, so the model navigates before it ingests.

mod folder;

use chalie_core::{
    Params, ToolResult, Turn, ability, contracts::Cursor, contracts::Fields, contracts::Format,
    contracts::ItemShape, contracts::MaxChars, contracts::Position, contracts::TopK,
    contracts::keys as result_keys, contracts::list_body, contracts::slice_text,
};
use serde_json::{Value, json};

use crate::state::{NotesFolder, Scratch};
use crate::text::{keyword_score, words};
use folder::{note_names, read, resolve, sections};

/// Parameters of [`note_search()`].
#[derive(Params)]
pub struct NoteSearchParams {
    /// Words to look for, e.g. `embeddings model`.
    pub query: String,
    /// How many sections to return, 1 to 50; default 10.
    pub top_k: TopK,
    /// `concise` (`note`, `section`, `heading`) or `detailed` (also `score`, `snippet`); default `concise`.
    pub format: Format,
    /// Only these keys of each section, e.g. `["note", "section"]`; default the format's keys.
    pub fields: Option<Fields>,
}

/// A found section's keys, and those `format: concise` keeps.
const SECTION_SHAPE: ItemShape = ItemShape::new(
    &["note", "section", "heading", "score", "snippet"],
    &["note", "section", "heading"],
);

/// Searches the user's notes for sections about a topic. Use it first
/// whenever the user asks what their notes say, then read one section with
/// `note_read`. Returns `items` (`note`, `section`, `heading`; `score` and
/// `snippet` when `detailed`), best first; an empty list means the notes
/// do not cover it.
/// Reads only the notes folder.
#[ability(
    version = "1.1.0",
    effect = read,
    toolset = "notes",
    tooltip = "Find note sections about a topic",
    examples = [
        "what do my notes say about embeddings",
        "find my notes on rate limits",
        "search my journal for running",
        "did I write anything about the kitchen",
        "look up the index design notes",
        "where did I note the tiler's visit",
    ],
)]
pub async fn note_search(params: NoteSearchParams, turn: &Turn) -> ToolResult {
    let folder = match turn.require::<NotesFolder>() {
        Ok(folder) => folder,
        Err(not_configured) => return not_configured,
    };
    let query_words = words(&params.query);
    let mut hits: Vec<(f32, Value)> = Vec::new();
    for name in note_names(folder) {
        let Ok((_, path)) = resolve(folder, &name) else {
            continue;
        };
        let Ok(text) = read(&path) else { continue };
        for (index, section) in sections(&name, &text).iter().enumerate() {
            let score = keyword_score(&query_words, &section.text);
            if score <= 0.0 {
                continue;
            }
            let snippet = section
                .text
                .lines()
                .find(|line| keyword_score(&query_words, line) > 0.0)
                .unwrap_or_default();
            let snippet: String = snippet.chars().take(160).collect();
            hits.push((
                score,
                json!({ "note": name, "section": index + 1, "heading": section.heading,
                        "score": (score * 100.0).round() / 100.0, "snippet": snippet }),
            ));
        }
    }
    // Stable order: best score first, then the note and section order.
    hits.sort_by(|a, b| b.0.total_cmp(&a.0));
    hits.truncate(params.top_k.get());
    let items: Vec<Value> = hits.into_iter().map(|(_, item)| item).collect();
    let items = match SECTION_SHAPE.apply(params.format, params.fields.as_ref(), items) {
        Ok(items) => items,
        Err(invalid) => return invalid,
    };
    let count = items.len();
    let summary = if count == 0 {
        "no note covers this"
    } else {
        "read a section with note_read"
    };
    ToolResult::success(list_body(items, None, false, Some(summary))).with_metadata("count", count)
}

/// Parameters of [`note_outline()`].
#[derive(Params)]
pub struct NoteOutlineParams {
    /// The note's name as `note_search` shows it, e.g. `journal`.
    pub note: String,
}

/// The outline of one note: its sections with their number, heading and
/// length in characters. Use it before reading a long note, to pick the
/// one section worth reading with `note_read`. A name that is not a note
/// of the notes folder (a path, `..`) is refused with `path-outside-notes`.
#[ability(
    effect = read,
    toolset = "notes",
    tooltip = "List the sections of a note",
    examples = [
        "what's in my journal note",
        "show the headings of the index design note",
        "how is the rate limits note organised",
        "outline my February journal",
        "which sections does that note have",
        "give me the table of contents of my notes on discovery",
    ],
)]
pub async fn note_outline(params: NoteOutlineParams, turn: &Turn) -> ToolResult {
    let folder = match turn.require::<NotesFolder>() {
        Ok(folder) => folder,
        Err(not_configured) => return not_configured,
    };
    let (name, path) = match resolve(folder, &params.note) {
        Ok(found) => found,
        Err(refused) => return refused,
    };
    let text = match read(&path) {
        Ok(text) => text,
        Err(unreadable) => return unreadable,
    };
    let items: Vec<Value> = sections(&name, &text)
        .iter()
        .enumerate()
        .map(|(index, section)| {
            json!({ "section": index + 1, "heading": section.heading, "chars": section.text.chars().count() })
        })
        .collect();
    let count = items.len();
    let mut body = list_body(items, None, false, Some("read one section with note_read"));
    body["note"] = json!(name);
    ToolResult::success(body).with_metadata("count", count)
}

/// Parameters of [`note_read()`].
#[derive(Params)]
pub struct NoteReadParams {
    /// The note's name, e.g. `journal`.
    pub note: String,
    /// The section number from `note_outline`; absent, the whole note.
    pub section: Option<u32>,
    /// The most characters to return, 200 to 20000; default 4000.
    pub max_chars: MaxChars,
    /// The `next_cursor` of the previous read, to continue the same section.
    pub cursor: Option<Cursor>,
}

/// Reads one section of a note (or the whole note), at most `max_chars`
/// characters at a time. Use it after `note_search` or `note_outline`.
/// Returns the text; when more remains the header says `truncated=true`
/// and gives `next_cursor` to pass back as `cursor`. Only notes inside the
/// notes folder can be read; paths and `..` are refused.
#[ability(
    effect = read,
    toolset = "notes",
    tooltip = "Read a section of a note",
    examples = [
        "read me the embeddings section",
        "open my journal for week 2",
        "what exactly did I write about the cascade",
        "show the rest of that note",
        "read the rate limits note",
        "continue reading",
    ],
)]
pub async fn note_read(params: NoteReadParams, turn: &Turn) -> ToolResult {
    let (folder, scratch) = match (turn.require::<NotesFolder>(), turn.require::<Scratch>()) {
        (Ok(folder), Ok(scratch)) => (folder, scratch),
        (Err(not_configured), _) | (_, Err(not_configured)) => return not_configured,
    };
    let (name, path) = match resolve(folder, &params.note) {
        Ok(found) => found,
        Err(refused) => return refused,
    };
    let text = match read(&path) {
        Ok(text) => text,
        Err(unreadable) => return unreadable,
    };
    let text = match params.section {
        None => text,
        Some(number) => {
            let all = sections(&name, &text);
            match all.into_iter().nth((number as usize).wrapping_sub(1)) {
                Some(section) => section.text,
                None => {
                    return ToolResult::error(
                        "unknown-section",
                        format!("note `{name}` has no section {number}"),
                        "call note_outline and pass one of its section numbers",
                    );
                }
            }
        }
    };
    // A cursor continues exactly this note and section.
    let query = json!({ "note": name, "section": params.section });
    let offset = match &params.cursor {
        None => 0,
        Some(cursor) => match scratch.key.verify(cursor, "note_read", &query) {
            Ok(Position::Offset(offset)) => offset,
            Ok(_) => return chalie_core::contracts::CursorError::WrongKind.into_tool_result(),
            Err(invalid) => return invalid.into_tool_result(),
        },
    };
    let total = text.chars().count();
    let (shown, end) = slice_text(&text, offset, params.max_chars.get());
    let result = ToolResult::success(shown.to_owned())
        .with_metadata("offset", offset)
        .with_metadata("total_chars", total)
        .with_metadata(result_keys::TRUNCATED, end < total);
    if end < total {
        let next = scratch
            .key
            .issue("note_read", &query, Position::Offset(end));
        result.with_metadata(result_keys::NEXT_CURSOR, next.to_string())
    } else {
        result
    }
}
