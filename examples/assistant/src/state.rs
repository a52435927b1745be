//! The host's state, handed to abilities as dispatcher extensions: each
//! store is its own type, read back with `turn.require::<T>()`.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use chalie_core::{
    contracts::CursorKey, contracts::Scratchpad, contracts::ScratchpadLimits,
    dispatch::DispatcherBuilder, turn::Clock,
};
use chalie_index::Embedder;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

#[cfg(feature = "discovery")]
use chalie_index::Discovery;

/// The instant the sample data is written around: Monday 2 March 2026,
/// 09:00 UTC. The demo and the tests pin their clock to it.
pub const SAMPLE_NOW: &str = "2026-03-02T09:00:00Z";

/// Locks a store; a panic in another call must not take the store down.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One remembered fact.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryItem {
    /// Its id, for `forget`.
    pub id: u32,
    /// What was remembered.
    pub content: String,
    /// The place it is about, if any.
    pub location: Option<String>,
    /// When it was stored.
    pub stored_at: DateTime<Utc>,
    /// Its embedding, when an embedder was configured.
    #[serde(skip)]
    pub vector: Option<Vec<f32>>,
}

/// What the user asked the assistant to remember, with an optional
/// embedder for semantic recall.
pub struct Memory {
    pub(crate) items: Mutex<Vec<MemoryItem>>,
    pub(crate) embedder: Option<Arc<dyn Embedder>>,
}

impl Memory {
    /// An empty memory; `embedder` enables semantic recall, `None` keeps
    /// recall to keywords.
    pub fn new(embedder: Option<Arc<dyn Embedder>>) -> Self {
        Self {
            items: Mutex::new(Vec::new()),
            embedder,
        }
    }

    /// Whether recall is semantic.
    pub fn is_semantic(&self) -> bool {
        self.embedder.is_some()
    }
}

/// One calendar event. Times are UTC.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Event {
    /// Its id, for `delete_event`.
    #[serde(default)]
    pub id: u32,
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

/// The user's calendar.
pub struct Calendar {
    pub(crate) events: Mutex<Vec<Event>>,
}

impl Calendar {
    /// A calendar holding `events`, numbered from 1 in order.
    pub fn new(mut events: Vec<Event>) -> Self {
        for (index, event) in events.iter_mut().enumerate() {
            event.id = index as u32 + 1;
        }
        Self {
            events: Mutex::new(events),
        }
    }

    /// The sample calendar shipped with the crate (the week of 2 March 2026).
    ///
    /// # Panics
    ///
    /// Only if the crate's own `data/calendar.json` is broken, which its
    /// tests rule out.
    pub fn sample() -> Self {
        let events: Vec<Event> = serde_json::from_str(include_str!("../data/calendar.json"))
            .unwrap_or_else(|error| panic!("data/calendar.json is valid: {error}"));
        Self::new(events)
    }

    /// A copy of every event, in id order.
    pub fn events(&self) -> Vec<Event> {
        lock(&self.events).clone()
    }
}

/// A task's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct Task {
    /// Its id; pages are keyed by it.
    pub id: u32,
    /// What to do.
    pub title: String,
    /// When it is due, if ever.
    pub due: Option<NaiveDate>,
    /// Open, done or deleted.
    pub state: TaskState,
}

/// The user's tasks.
pub struct Tasks {
    pub(crate) tasks: Mutex<Vec<Task>>,
}

impl Tasks {
    /// A task list holding `tasks`.
    pub fn new(tasks: Vec<Task>) -> Self {
        Self {
            tasks: Mutex::new(tasks),
        }
    }

    /// Forty-five sample tasks, due over the weeks around `now`: enough
    /// for three pages at the default page size.
    pub fn sample(now: DateTime<Utc>) -> Self {
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
        let tasks = (1..=45u32)
            .map(|id| Task {
                id,
                title: format!("{} ({})", CHORES[(id as usize - 1) % CHORES.len()], id),
                due: Some(now.date_naive() + Duration::days(i64::from(id % 15) - 5)),
                state: if id % 7 == 0 {
                    TaskState::Done
                } else {
                    TaskState::Open
                },
            })
            .collect();
        Self::new(tasks)
    }

    /// A copy of every task, deleted ones included.
    pub fn all(&self) -> Vec<Task> {
        lock(&self.tasks).clone()
    }
}

/// The folder the notes abilities read; they never leave it.
#[derive(Debug, Clone)]
pub struct NotesFolder {
    pub(crate) root: PathBuf,
}

impl NotesFolder {
    /// The notes in `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The sample notes shipped with the crate.
    pub fn sample() -> Self {
        Self::new(concat!(env!("CARGO_MANIFEST_DIR"), "/data/notes"))
    }
}

/// How many sessions keep a scratchpad at once; the least recently
/// started one is dropped first (its cursors then read as expired).
const SCRATCH_SESSIONS: usize = 256;

/// Where large results go, one scratchpad per session, and the key
/// continuation cursors are signed with.
pub struct Scratch {
    pads: Mutex<ScratchPads>,
    pub(crate) key: CursorKey,
}

#[derive(Default)]
struct ScratchPads {
    by_session: HashMap<String, Arc<Scratchpad>>,
    /// Session ids, oldest first, for eviction.
    order: VecDeque<String>,
}

impl Scratch {
    /// No scratchpads yet, the default limits and this process's key.
    pub fn new() -> Self {
        Self {
            pads: Mutex::new(ScratchPads::default()),
            key: CursorKey::process().clone(),
        }
    }

    /// The scratchpad of the turn's session: what one session stored,
    /// another cannot read, whatever cursor it sends.
    pub(crate) fn pad(&self, turn: &chalie_core::Turn) -> Arc<Scratchpad> {
        let mut pads = lock(&self.pads);
        let session = turn.session_id();
        if let Some(pad) = pads.by_session.get(session) {
            return Arc::clone(pad);
        }
        if pads.order.len() >= SCRATCH_SESSIONS
            && let Some(oldest) = pads.order.pop_front()
        {
            pads.by_session.remove(&oldest);
        }
        let pad = Arc::new(Scratchpad::new(ScratchpadLimits::default()));
        pads.order.push_back(session.to_owned());
        pads.by_session.insert(session.to_owned(), Arc::clone(&pad));
        pad
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

/// Everything the assistant's abilities need from the host.
#[derive(Clone)]
pub struct Host {
    /// What time it is.
    pub clock: Clock,
    /// Remembered facts.
    pub memory: Arc<Memory>,
    /// Events.
    pub calendar: Arc<Calendar>,
    /// Tasks.
    pub tasks: Arc<Tasks>,
    /// The notes folder.
    pub notes: Arc<NotesFolder>,
    /// Large results and cursors.
    pub scratch: Arc<Scratch>,
    /// The discovery index, when one was built.
    #[cfg(feature = "discovery")]
    pub discovery: Option<Arc<Discovery>>,
}

impl Host {
    /// The sample host: the clock fixed at [`SAMPLE_NOW`], the sample
    /// calendar, tasks and notes, keyword memory, no discovery index.
    ///
    /// # Panics
    ///
    /// Only if the crate's own sample data is broken (see
    /// [`Calendar::sample`]).
    pub fn sample() -> Self {
        let clock = Clock::parse(SAMPLE_NOW).unwrap_or_else(|error| panic!("{error}"));
        Self {
            clock,
            memory: Arc::new(Memory::new(None)),
            calendar: Arc::new(Calendar::sample()),
            tasks: Arc::new(Tasks::sample(clock.now())),
            notes: Arc::new(NotesFolder::sample()),
            scratch: Arc::new(Scratch::new()),
            #[cfg(feature = "discovery")]
            discovery: None,
        }
    }

    /// The same host recalling memories semantically with `embedder`.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.memory = Arc::new(Memory::new(Some(embedder)));
        self
    }

    /// The same host with a discovery index for `find_tools`.
    #[cfg(feature = "discovery")]
    pub fn with_discovery(mut self, discovery: Discovery) -> Self {
        self.discovery = Some(Arc::new(discovery));
        self
    }

    /// The same host reading notes from `folder`.
    pub fn with_notes(mut self, folder: NotesFolder) -> Self {
        self.notes = Arc::new(folder);
        self
    }

    /// Hands every store to the dispatcher as an extension.
    pub fn install(&self, builder: DispatcherBuilder) -> DispatcherBuilder {
        let builder = builder
            .extension(self.clock)
            .shared_extension(Arc::clone(&self.memory))
            .shared_extension(Arc::clone(&self.calendar))
            .shared_extension(Arc::clone(&self.tasks))
            .shared_extension(Arc::clone(&self.notes))
            .shared_extension(Arc::clone(&self.scratch));
        #[cfg(feature = "discovery")]
        if let Some(discovery) = &self.discovery {
            return builder.shared_extension(Arc::clone(discovery));
        }
        builder
    }
}
