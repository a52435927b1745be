//! Pages of results with signed keyset cursors, and the result keys every
//! list-shaped tool uses.

use serde::Serialize;
use serde_json::{Map, Value};

use super::cursor::{Cursor, CursorError, CursorKey, Position};
use super::fragments::{Fields, Format, ItemShape};
use crate::ToolResult;

/// The result keys of a list-shaped body.
pub mod keys {
    /// The items of this page.
    pub const ITEMS: &str = "items";
    /// How many items this page has.
    pub const COUNT: &str = "count";
    /// The cursor to pass back for the next page; `null` on the last.
    pub const NEXT_CURSOR: &str = "next_cursor";
    /// Whether the body was cut to fit a cap.
    pub const TRUNCATED: &str = "truncated";
    /// One line about the result: notes, what to do next.
    pub const SUMMARY: &str = "summary";
}

/// Items per page when the call does not say.
pub const DEFAULT_PAGE_SIZE: usize = 20;
/// The most items per page; a larger request is clamped, with a note.
pub const MAX_PAGE_SIZE: usize = 50;

/// The standard body of a list result: `items`, `count`, `next_cursor`,
/// `truncated` and, when given, `summary`.
///
/// ```
/// let body = chalie_core::contracts::list_body(vec![serde_json::json!("a")], None, false, Some("1 match"));
/// assert_eq!(body.to_string(), r#"{"items":["a"],"count":1,"next_cursor":null,"truncated":false,"summary":"1 match"}"#);
/// ```
pub fn list_body(
    items: Vec<Value>,
    next_cursor: Option<&Cursor>,
    truncated: bool,
    summary: Option<&str>,
) -> Value {
    let mut body = Map::new();
    let count = items.len();
    body.insert(keys::ITEMS.into(), Value::Array(items));
    body.insert(keys::COUNT.into(), Value::from(count));
    body.insert(
        keys::NEXT_CURSOR.into(),
        next_cursor.map_or(Value::Null, |cursor| Value::String(cursor.to_string())),
    );
    body.insert(keys::TRUNCATED.into(), Value::Bool(truncated));
    if let Some(summary) = summary {
        body.insert(keys::SUMMARY.into(), Value::String(summary.to_owned()));
    }
    Value::Object(body)
}

/// A validated request for one page: where to start and how many.
///
/// ```
/// use chalie_core::{contracts::CursorKey, contracts::PageRequest};
/// use serde_json::json;
///
/// let key = CursorKey::new("a configured secret of enough bytes!");
/// let query = json!({ "tag": "work" });
/// let notes: Vec<u32> = (1..=45).collect();
///
/// let request = PageRequest::new(&key, "list_notes", &query, None, None).unwrap();
/// let fetched = notes.iter().copied().take(request.fetch_limit()).collect();
/// let first = request.page(&key, fetched, |id| json!(id));
/// assert_eq!(first.items().len(), 20);
///
/// let cursor = first.next_cursor().unwrap().clone();
/// let request = PageRequest::new(&key, "list_notes", &query, Some(&cursor), None).unwrap();
/// let after = request.after().and_then(|key| key.as_u64()).unwrap() as u32;
/// assert_eq!(after, 20);
/// // Another query cannot reuse the cursor.
/// assert!(PageRequest::new(&key, "list_notes", &json!({ "tag": "home" }), Some(&cursor), None).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct PageRequest {
    ability: String,
    query: Value,
    after: Option<Value>,
    limit: usize,
    requested: usize,
}

impl PageRequest {
    /// Verifies `cursor` (if any) for `ability` and this `query` (the
    /// parameters that shape the result set, without cursor and page
    /// size), and settles the page size: `limit`, default
    /// [`DEFAULT_PAGE_SIZE`], clamped to 1..=[`MAX_PAGE_SIZE`].
    pub fn new(
        key: &CursorKey,
        ability: &str,
        query: &Value,
        cursor: Option<&Cursor>,
        limit: Option<usize>,
    ) -> Result<Self, CursorError> {
        let after = match cursor {
            None => None,
            Some(cursor) => match key.verify(cursor, ability, query)? {
                Position::After(last) => Some(last),
                Position::Offset(_) | Position::Slice { .. } => return Err(CursorError::WrongKind),
            },
        };
        let requested = limit.unwrap_or(DEFAULT_PAGE_SIZE);
        Ok(Self {
            ability: ability.to_owned(),
            query: query.clone(),
            after,
            limit: requested.clamp(1, MAX_PAGE_SIZE),
            requested,
        })
    }

    /// The key of the last item already shown: fetch items after it.
    pub fn after(&self) -> Option<&Value> {
        self.after.as_ref()
    }

    /// How many items this page holds.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// How many items to fetch: one more than the page, to know whether
    /// there is a next page.
    pub fn fetch_limit(&self) -> usize {
        self.limit + 1
    }

    /// Whether the requested size was clamped.
    pub fn clamped(&self) -> bool {
        self.requested != self.limit
    }

    /// The page of `fetched` (items after [`after`](Self::after), in key
    /// order, up to [`fetch_limit`](Self::fetch_limit)); `key_of` gives an
    /// item's key, put in the next cursor.
    pub fn page<T>(
        self,
        key: &CursorKey,
        mut fetched: Vec<T>,
        key_of: impl Fn(&T) -> Value,
    ) -> Page<T> {
        let more = fetched.len() > self.limit;
        fetched.truncate(self.limit);
        let next_cursor = match fetched.last() {
            Some(last) if more => {
                Some(key.issue(&self.ability, &self.query, Position::After(key_of(last))))
            }
            _ => None,
        };
        let note = self.clamped().then(|| {
            format!(
                "asked for {} items; pages hold 1 to {MAX_PAGE_SIZE}, so this one holds {}",
                self.requested, self.limit
            )
        });
        Page {
            items: fetched,
            next_cursor,
            note,
        }
    }
}

/// One page of results and the cursor to the next.
#[derive(Debug, Clone)]
pub struct Page<T> {
    items: Vec<T>,
    next_cursor: Option<Cursor>,
    note: Option<String>,
}

impl<T> Page<T> {
    /// The items.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// The cursor to the next page; `None` on the last.
    pub fn next_cursor(&self) -> Option<&Cursor> {
        self.next_cursor.as_ref()
    }

    /// A note for the model, e.g. that the page size was clamped.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
}

impl<T: Serialize> Page<T> {
    /// The success result: a [`list_body`], with `count` in the header
    /// too.
    pub fn into_result(self) -> ToolResult {
        let items = self.values();
        self.render(items)
    }

    /// [`into_result`](Self::into_result) with each item shaped as the
    /// call's standard `format` and `fields` ask (see [`ItemShape`]); an
    /// unknown field is the error that lists the valid ones.
    pub fn into_shaped_result(
        self,
        shape: &ItemShape,
        format: Format,
        fields: Option<&Fields>,
    ) -> ToolResult {
        match shape.apply(format, fields, self.values()) {
            Ok(items) => self.render(items),
            Err(invalid) => invalid,
        }
    }

    fn values(&self) -> Vec<Value> {
        self.items
            .iter()
            .map(|item| serde_json::to_value(item).unwrap_or(Value::Null))
            .collect()
    }

    fn render(self, items: Vec<Value>) -> ToolResult {
        let count = items.len();
        let summary = match (&self.note, &self.next_cursor) {
            (Some(note), _) => Some(note.clone()),
            (None, Some(_)) => Some("more results: pass next_cursor as cursor".to_owned()),
            (None, None) => None,
        };
        let body = list_body(items, self.next_cursor.as_ref(), false, summary.as_deref());
        ToolResult::success(body).with_metadata(keys::COUNT, count)
    }
}
