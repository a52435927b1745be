//! The host's state, handed to abilities as dispatcher extensions: each
//! store is its own type, read back with `turn.require::<T>()`.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use chalie_core::session::{MemoryStore, RecordStore, StoreError};
use chalie_core::{
    contracts::CursorKey, contracts::Scratchpad, contracts::ScratchpadLimits,
    dispatch::DispatcherBuilder, turn::Clock, turn::Principal,
};
use chalie_index::Embedder;

use crate::userdata::{Calendar, Memory, Tasks};

#[cfg(feature = "discovery")]
use chalie_index::Discovery;

/// The instant the sample data is written around: Monday 2 March 2026,
/// 09:00 UTC. The demo and the tests pin their clock to it.
pub const SAMPLE_NOW: &str = "2026-03-02T09:00:00Z";

/// The user [`Host::sample`] holds the sample calendar and tasks for; the
/// demo and the tests act as this user.
pub const SAMPLE_USER: &str = "sample-user";

/// Locks a store; a panic in another call must not take the store down.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
    /// Where each user's memories, tasks and events live: the sessions'
    /// database, so a user's data and sessions stay together.
    pub records: Arc<dyn RecordStore>,
    /// Each user's remembered facts and preferences.
    pub memory: Arc<Memory>,
    /// Each user's events.
    pub calendar: Arc<Calendar>,
    /// Each user's tasks.
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
    /// A host keeping each user's data in `records` (give it the store the
    /// sessions use, e.g. a `SqliteStore` or a `PgStore`), reading the
    /// time from `clock`, with keyword memory, the sample notes and no
    /// discovery index. Nobody's data is written: see
    /// [`seed_sample`](Self::seed_sample).
    pub fn new(clock: Clock, records: Arc<dyn RecordStore>) -> Self {
        Self {
            clock,
            memory: Arc::new(Memory::new(Arc::clone(&records), None)),
            calendar: Arc::new(Calendar::new(Arc::clone(&records))),
            tasks: Arc::new(Tasks::new(Arc::clone(&records))),
            records,
            notes: Arc::new(NotesFolder::sample()),
            scratch: Arc::new(Scratch::new()),
            #[cfg(feature = "discovery")]
            discovery: None,
        }
    }

    /// The sample host: the clock fixed at [`SAMPLE_NOW`], an in-memory
    /// store where [`SAMPLE_USER`] has the sample calendar and tasks,
    /// keyword memory, the sample notes, no discovery index.
    ///
    /// # Panics
    ///
    /// Only if the crate's own sample data is broken (see
    /// [`Calendar::sample_events`]).
    pub fn sample() -> Self {
        let clock = Clock::parse(SAMPLE_NOW).unwrap_or_else(|error| panic!("{error}"));
        let host = Self::new(clock, Arc::new(MemoryStore::new()));
        host.seed_sample(&Principal::new(SAMPLE_USER))
            .unwrap_or_else(|error| panic!("an in-memory store does not fail: {error}"));
        host
    }

    /// Gives `owner` the sample calendar and tasks (around the host's
    /// clock), unless they already have events or tasks: safe to call at
    /// every start.
    pub fn seed_sample(&self, owner: &Principal) -> Result<(), StoreError> {
        if self.calendar.events(owner)?.is_empty() {
            for event in Calendar::sample_events() {
                self.calendar.add(owner, event)?;
            }
        }
        if self.tasks.all(owner)?.is_empty() {
            for task in Tasks::sample_tasks(self.clock.now()) {
                self.tasks.create(owner, task)?;
            }
        }
        Ok(())
    }

    /// The same host keeping each user's data in `records` instead.
    pub fn with_records(self, records: Arc<dyn RecordStore>) -> Self {
        let embedder = self.memory.embedder.clone();
        Self {
            memory: Arc::new(Memory::new(Arc::clone(&records), embedder)),
            calendar: Arc::new(Calendar::new(Arc::clone(&records))),
            tasks: Arc::new(Tasks::new(Arc::clone(&records))),
            records,
            ..self
        }
    }

    /// The same host recalling memories by meaning as well as keywords,
    /// with `embedder`.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.memory = Arc::new(Memory::new(Arc::clone(&self.records), Some(embedder)));
        self
    }

    /// The same host with a discovery index for `find_tools` and
    /// `find_skills`; the playbooks it returns carry each user's
    /// preferences and corrections that apply to them.
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
            // The rules read the memory installed beside them, whichever
            // store and embedder the host ended up with.
            let personal = (**discovery)
                .clone()
                .with_skill_rules(crate::PlaybookRules::new(Arc::clone(&self.memory)));
            return builder.extension(personal);
        }
        builder
    }
}
