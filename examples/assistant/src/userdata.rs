//! Each user's memories, tasks and calendar events, as typed views over
//! chalie's [`RecordStore`]: the same database as the sessions, keyed by
//! the turn's principal. A call for nobody is refused; another user's id
//! reads as missing; deleting is soft.

use std::sync::Arc;

use chalie_core::session::{Listing, Record, RecordStore, StoreError};
use chalie_core::turn::Principal;
use chalie_core::{ToolResult, Turn};
use chalie_index::Embedder;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The user a per-user call is for, or the error the model reads when the
/// turn runs for nobody (a host call outside any user's session): there is
/// no user whose data it could touch, and guessing one would leak data.
pub(crate) fn owner<'t>(turn: &'t Turn, what: &str) -> Result<&'t Principal, ToolResult> {
    turn.principal().ok_or_else(|| {
        ToolResult::error(
            "no-principal",
            format!("{what} belongs to a user, and this call runs for nobody"),
            "call it in a session opened for a signed-in user (`Sessions::as_principal`), \
             or build the turn with `.principal(...)`",
        )
    })
}

/// The error the model reads when the database failed.
pub(crate) fn store_failed(error: &StoreError) -> ToolResult {
    ToolResult::error(
        "store-failed",
        format!("the user's data could not be read or written: {error}"),
        "try again in a moment; if it keeps failing, the database needs attention",
    )
}

/// `record`'s data as a `T`, with the record's id set by `with_id`.
fn typed<T: serde::de::DeserializeOwned>(
    record: Record,
    with_id: impl FnOnce(&mut T, u64),
) -> Result<T, StoreError> {
    let mut value: T = serde_json::from_value(record.data).map_err(|error| {
        StoreError(format!(
            "record {} is not the shape this assistant writes: {error}",
            record.id
        ))
    })?;
    with_id(&mut value, record.id);
    Ok(value)
}

fn to_data(value: &impl Serialize) -> Result<Value, StoreError> {
    serde_json::to_value(value).map_err(|error| StoreError(error.to_string()))
}

/// What a memory records: a fact about the user's life, or how they want
/// things done (a preference they stated, a correction they made), which
/// `find_skills` returns with the playbooks it applies to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// Something to remember, e.g. a birthday.
    #[default]
    Fact,
    /// How the user wants things done, e.g. "always a window seat".
    Preference,
    /// What the user corrected, e.g. "no, book trains, not flights".
    Correction,
}

impl MemoryKind {
    /// Whether it says how the user wants things done.
    pub fn is_rule(self) -> bool {
        matches!(self, MemoryKind::Preference | MemoryKind::Correction)
    }
}

/// One remembered fact, preference or correction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryItem {
    /// Its id, for `forget`.
    #[serde(default)]
    pub id: u64,
    /// What was remembered.
    pub content: String,
    /// The place it is about, if any.
    pub location: Option<String>,
    /// A fact, a preference or a correction.
    #[serde(default)]
    pub kind: MemoryKind,
    /// The playbook a preference or correction is for, if the user named one.
    #[serde(default)]
    pub skill: Option<String>,
    /// When it was stored.
    pub stored_at: DateTime<Utc>,
    /// Its embedding, once an embedder has read it.
    #[serde(default)]
    pub vector: Option<Vec<f32>>,
}

/// Collection names in the record store.
const MEMORIES: &str = "assistant.memory";
const TASKS: &str = "assistant.tasks";
const EVENTS: &str = "assistant.calendar";

/// What each user asked the assistant to remember, with an optional
/// embedder for recall by meaning as well as by keyword.
pub struct Memory {
    records: Arc<dyn RecordStore>,
    pub(crate) embedder: Option<Arc<dyn Embedder>>,
}

impl Memory {
    /// Memories in `records`; `embedder` adds meaning to keyword recall,
    /// `None` keeps recall to keywords.
    pub fn new(records: Arc<dyn RecordStore>, embedder: Option<Arc<dyn Embedder>>) -> Self {
        Self { records, embedder }
    }

    /// Whether recall also compares meanings.
    pub fn is_semantic(&self) -> bool {
        self.embedder.is_some()
    }

    /// Every memory `owner` kept, oldest first.
    pub fn items(&self, owner: &Principal) -> Result<Vec<MemoryItem>, StoreError> {
        self.records
            .records(owner, MEMORIES, Listing::Live)?
            .into_iter()
            .map(|record| typed(record, |item: &mut MemoryItem, id| item.id = id))
            .collect()
    }

    /// Keeps `item` for `owner` (its `id` is ignored); returns the id it got.
    pub fn store(&self, owner: &Principal, item: &MemoryItem) -> Result<u64, StoreError> {
        Ok(self
            .records
            .insert_record(owner, MEMORIES, &to_data(item)?)?
            .id)
    }

    /// Writes back `item` (e.g. with the vector it lacked); `false` when
    /// `owner` has no such memory.
    pub(crate) fn put(&self, owner: &Principal, item: &MemoryItem) -> Result<bool, StoreError> {
        Ok(self
            .records
            .update_record(owner, MEMORIES, item.id, &to_data(item)?)?
            .is_some())
    }

    /// Forgets (softly) `owner`'s memory `id`; `false` when there is none.
    pub fn forget(&self, owner: &Principal, id: u64) -> Result<bool, StoreError> {
        self.records.delete_record(owner, MEMORIES, id)
    }
}

/// One calendar event. Times are UTC.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    /// Its id, for `delete_event`.
    #[serde(default)]
    pub id: u64,
    /// What it is.
    pub title: String,
    /// When it starts.
    pub start: DateTime<Utc>,
    /// When it ends.
    pub end: DateTime<Utc>,
    /// Where, if anywhere.
    pub location: Option<String>,
    /// Whether the user marked it done (for `overdue`).
    pub done: bool,
}

/// Each user's calendar.
pub struct Calendar {
    records: Arc<dyn RecordStore>,
}

impl Calendar {
    /// The calendars in `records`.
    pub fn new(records: Arc<dyn RecordStore>) -> Self {
        Self { records }
    }

    /// The sample events shipped with the crate (the week of 2 March 2026).
    ///
    /// # Panics
    ///
    /// Only if the crate's own `data/calendar.json` is broken, which its
    /// tests rule out.
    pub fn sample_events() -> Vec<Event> {
        serde_json::from_str(include_str!("../data/calendar.json"))
            .unwrap_or_else(|error| panic!("data/calendar.json is valid: {error}"))
    }

    /// `owner`'s events, in id order.
    pub fn events(&self, owner: &Principal) -> Result<Vec<Event>, StoreError> {
        self.records
            .records(owner, EVENTS, Listing::Live)?
            .into_iter()
            .map(|record| typed(record, |event: &mut Event, id| event.id = id))
            .collect()
    }

    /// Adds `event` to `owner`'s calendar (its `id` is ignored); returns it
    /// with the id it got.
    pub fn add(&self, owner: &Principal, mut event: Event) -> Result<Event, StoreError> {
        event.id = self
            .records
            .insert_record(owner, EVENTS, &to_data(&event)?)?
            .id;
        Ok(event)
    }

    /// Deletes (softly) `owner`'s event `id`; returns it, or `None` when
    /// `owner` has no such event (another user's reads the same).
    pub fn delete(&self, owner: &Principal, id: u64) -> Result<Option<Event>, StoreError> {
        let Some(record) = self.records.record(owner, EVENTS, id)? else {
            return Ok(None);
        };
        let event = typed(record, |event: &mut Event, id| event.id = id)?;
        Ok(self
            .records
            .delete_record(owner, EVENTS, id)?
            .then_some(event))
    }
}

/// A task's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// To do.
    Open,
    /// Completed.
    Done,
    /// Soft-deleted: kept, never listed.
    Deleted,
}

/// One task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Task {
    /// Its id; pages are keyed by it.
    #[serde(default)]
    pub id: u64,
    /// What to do.
    pub title: String,
    /// When it is due, if ever.
    pub due: Option<NaiveDate>,
    /// Open or done; deleted once the store says so.
    pub state: TaskState,
}

/// Each user's tasks.
pub struct Tasks {
    records: Arc<dyn RecordStore>,
}

impl Tasks {
    /// The task lists in `records`.
    pub fn new(records: Arc<dyn RecordStore>) -> Self {
        Self { records }
    }

    /// Forty-five sample tasks, due over the weeks around `now`: enough
    /// for three pages at the default page size.
    pub fn sample_tasks(now: DateTime<Utc>) -> Vec<Task> {
        const CHORES: [&str; 9] = [
            "Renew the car insurance",
            "Book the Rome hotel",
            "Reply to the landlord",
            "Order new running shoes",
            "Pay the electricity bill",
            "Back up the laptop",
            "Call the plumber about the boiler",
            "Buy a birthday present for Maria",
            "Return the library books",
        ];
        (1..=45u64)
            .map(|id| Task {
                id,
                title: format!("{} ({})", CHORES[(id as usize - 1) % CHORES.len()], id),
                due: Some(now.date_naive() + Duration::days((id % 15) as i64 - 5)),
                state: if id % 7 == 0 {
                    TaskState::Done
                } else {
                    TaskState::Open
                },
            })
            .collect()
    }

    /// Every task of `owner`, deleted ones included, in id order.
    pub fn all(&self, owner: &Principal) -> Result<Vec<Task>, StoreError> {
        self.records
            .records(owner, TASKS, Listing::WithDeleted)?
            .into_iter()
            .map(|record| {
                let deleted = record.deleted;
                typed(record, |task: &mut Task, id| {
                    task.id = id;
                    if deleted {
                        task.state = TaskState::Deleted;
                    }
                })
            })
            .collect()
    }

    /// `owner`'s tasks that are not deleted, in id order: what a list shows,
    /// read without the deleted ones a list would throw away.
    pub fn live(&self, owner: &Principal) -> Result<Vec<Task>, StoreError> {
        self.records
            .records(owner, TASKS, Listing::Live)?
            .into_iter()
            .map(|record| typed(record, |task: &mut Task, id| task.id = id))
            .collect()
    }

    /// `owner`'s task `id`, unless it is missing or deleted.
    pub(crate) fn get(&self, owner: &Principal, id: u64) -> Result<Option<Task>, StoreError> {
        self.records
            .record(owner, TASKS, id)?
            .map(|record| typed(record, |task: &mut Task, id| task.id = id))
            .transpose()
    }

    /// Adds `task` to `owner`'s list (its `id` is ignored); returns it with
    /// the id it got.
    pub fn create(&self, owner: &Principal, mut task: Task) -> Result<Task, StoreError> {
        task.id = self
            .records
            .insert_record(owner, TASKS, &to_data(&task)?)?
            .id;
        Ok(task)
    }

    /// Writes back `task`, or deletes it (softly) when its state is
    /// [`TaskState::Deleted`]; `false` when `owner` has no such live task.
    pub(crate) fn put(&self, owner: &Principal, task: &Task) -> Result<bool, StoreError> {
        if task.state == TaskState::Deleted {
            return self.records.delete_record(owner, TASKS, task.id);
        }
        Ok(self
            .records
            .update_record(owner, TASKS, task.id, &to_data(task)?)?
            .is_some())
    }
}
