//! A per-session store for large artifacts: the model gets a stub with an
//! id and reads slices on demand instead of the whole text.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::{ToolResult, result::Retry};

/// How much one session's scratchpad may hold; the oldest entries are
/// evicted first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchpadLimits {
    /// Total bytes of text kept (default 4 MiB).
    pub max_bytes: usize,
    /// Entries kept (default 64).
    pub max_entries: usize,
}

impl Default for ScratchpadLimits {
    fn default() -> Self {
        Self {
            max_bytes: 4 * 1024 * 1024,
            max_entries: 64,
        }
    }
}

/// What the model is shown instead of a large text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchpadStub {
    /// The id to read it by.
    pub id: String,
    /// What it is, in a few words.
    pub label: String,
    /// Its length in characters.
    pub chars: usize,
    /// Its size in bytes.
    pub bytes: usize,
}

impl ScratchpadStub {
    /// How to read a slice, in one line.
    pub fn read_hint(&self) -> String {
        format!(
            "read it with scratchpad(id=\"{}\", offset=0, limit=4000); offsets count characters, {} in all",
            self.id, self.chars
        )
    }

    /// The stub as a result body: `scratchpad_id`, `label`, `chars`,
    /// `bytes` and `summary` (the read hint).
    pub fn to_value(&self) -> Value {
        json!({
            "scratchpad_id": self.id,
            "label": self.label,
            "chars": self.chars,
            "bytes": self.bytes,
            "summary": self.read_hint(),
        })
    }
}

/// A slice read from the scratchpad.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScratchpadSlice {
    /// The entry's id.
    pub id: String,
    /// The text of the slice.
    pub text: String,
    /// Its first character's offset.
    pub offset: usize,
    /// The offset just past it: where the next slice starts.
    pub end: usize,
    /// The entry's length in characters.
    pub total_chars: usize,
}

impl ScratchpadSlice {
    /// Whether text remains after this slice.
    pub fn has_more(&self) -> bool {
        self.end < self.total_chars
    }
}

/// Why the scratchpad could not store or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScratchpadError {
    /// The entry was evicted (or never existed in this session).
    #[error(
        "scratchpad entry `{0}` is gone: it was evicted to make room, or belongs to another session"
    )]
    Expired(String),
    /// One text larger than the whole scratchpad.
    #[error("the text is {bytes} bytes, more than the scratchpad holds ({max_bytes})")]
    TooLarge {
        /// The text's size.
        bytes: usize,
        /// The scratchpad's limit.
        max_bytes: usize,
    },
    /// An offset past the end.
    #[error("offset {offset} is past the end of `{id}`, which has {total_chars} characters")]
    OffsetPastEnd {
        /// The entry.
        id: String,
        /// The offset asked for.
        offset: usize,
        /// Its length.
        total_chars: usize,
    },
}

impl ScratchpadError {
    /// The error result the model reads: `scratchpad-expired`,
    /// `scratchpad-too-large` or `invalid-offset`.
    pub fn into_tool_result(self) -> ToolResult {
        let (code, hint) = match &self {
            ScratchpadError::Expired(_) => (
                "scratchpad-expired",
                "call the tool that produced it again to get a fresh copy",
            ),
            ScratchpadError::TooLarge { .. } => (
                "scratchpad-too-large",
                "ask for less: narrow the query or request fewer items",
            ),
            ScratchpadError::OffsetPastEnd { .. } => {
                ("invalid-offset", "pass an offset below the entry's length")
            }
        };
        ToolResult::error(code, self.to_string(), hint).with_retry(Retry::Never)
    }
}

struct Entry {
    id: String,
    label: String,
    text: Arc<str>,
}

struct Inner {
    next: u64,
    bytes: usize,
    entries: VecDeque<Entry>,
}

/// One session's scratchpad: full texts kept by id, bounded in memory.
///
/// ```
/// use chalie_core::{contracts::Scratchpad, contracts::ScratchpadLimits};
///
/// let pad = Scratchpad::new(ScratchpadLimits::default());
/// let stub = pad.store("build log", &"line\n".repeat(10_000)).unwrap();
/// assert_eq!(stub.chars, 50_000);
/// let slice = pad.read(&stub.id, 0, 12).unwrap();
/// assert_eq!(slice.text, "line\nline\n");
/// assert!(slice.has_more());
/// ```
pub struct Scratchpad {
    limits: ScratchpadLimits,
    instance: String,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Scratchpad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratchpad")
            .field("limits", &self.limits)
            .field("instance", &self.instance)
            .finish_non_exhaustive()
    }
}

/// A token unique to one scratchpad, so an id from another session never
/// names an entry here.
fn instance_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("{:08x}", hasher.finish() as u32)
}

impl Scratchpad {
    /// An empty scratchpad.
    pub fn new(limits: ScratchpadLimits) -> Self {
        Self {
            limits,
            instance: instance_token(),
            inner: Mutex::new(Inner {
                next: 1,
                bytes: 0,
                entries: VecDeque::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data behind:
        // every update is a single push or pop.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Keeps `text`, evicting the oldest entries as needed, and returns
    /// the stub to show instead.
    pub fn store(&self, label: &str, text: &str) -> Result<ScratchpadStub, ScratchpadError> {
        let bytes = text.len();
        if bytes > self.limits.max_bytes {
            return Err(ScratchpadError::TooLarge {
                bytes,
                max_bytes: self.limits.max_bytes,
            });
        }
        let mut inner = self.lock();
        while !inner.entries.is_empty()
            && (inner.entries.len() >= self.limits.max_entries.max(1)
                || inner.bytes + bytes > self.limits.max_bytes)
        {
            if let Some(evicted) = inner.entries.pop_front() {
                inner.bytes -= evicted.text.len();
            }
        }
        let id = format!("sp-{}-{}", self.instance, inner.next);
        inner.next += 1;
        inner.bytes += bytes;
        inner.entries.push_back(Entry {
            id: id.clone(),
            label: label.to_owned(),
            text: Arc::from(text),
        });
        Ok(ScratchpadStub {
            id,
            label: label.to_owned(),
            chars: text.chars().count(),
            bytes,
        })
    }

    /// Up to `limit` characters of entry `id` from character `offset`,
    /// cut at a line end when one is near.
    pub fn read(
        &self,
        id: &str,
        offset: usize,
        limit: usize,
    ) -> Result<ScratchpadSlice, ScratchpadError> {
        let text = {
            let inner = self.lock();
            let entry = inner
                .entries
                .iter()
                .find(|entry| entry.id == id)
                .ok_or_else(|| ScratchpadError::Expired(id.to_owned()))?;
            Arc::clone(&entry.text)
        };
        let total_chars = text.chars().count();
        if offset > total_chars || (offset == total_chars && total_chars > 0) {
            return Err(ScratchpadError::OffsetPastEnd {
                id: id.to_owned(),
                offset,
                total_chars,
            });
        }
        let (slice, end) = slice_text(&text, offset, limit.max(1));
        Ok(ScratchpadSlice {
            id: id.to_owned(),
            text: slice.to_owned(),
            offset,
            end,
            total_chars,
        })
    }

    /// The stubs of the entries kept, oldest first.
    pub fn entries(&self) -> Vec<ScratchpadStub> {
        self.lock()
            .entries
            .iter()
            .map(|entry| ScratchpadStub {
                id: entry.id.clone(),
                label: entry.label.clone(),
                chars: entry.text.chars().count(),
                bytes: entry.text.len(),
            })
            .collect()
    }

    /// Bytes of text kept.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

/// Up to `max_chars` characters of `text` from character `offset`, and the
/// character offset just past them.
///
/// The cut falls on a character boundary, and on a line end when one lies
/// in the second half of the window, so the model rarely sees half a line.
pub fn slice_text(text: &str, offset: usize, max_chars: usize) -> (&str, usize) {
    let start = text
        .char_indices()
        .nth(offset)
        .map_or(text.len(), |(index, _)| index);
    let rest = &text[start..];
    let Some((window_end, _)) = rest.char_indices().nth(max_chars) else {
        return (rest, offset + rest.chars().count());
    };
    let window = &rest[..window_end];
    let cut = match window.rfind('\n') {
        Some(newline) if window[..newline].chars().count() >= max_chars / 2 => newline + 1,
        _ => window_end,
    };
    let slice = &rest[..cut];
    (slice, offset + slice.chars().count())
}
