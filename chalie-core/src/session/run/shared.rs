//! What every run of a [`Sessions`](crate::session::Sessions) shares.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::session::event_log::EventLog;
use crate::session::mode::ModeCell;
use crate::session::model::Model;
use crate::session::run::narration::Narration;
use crate::session::store::SessionStore;
use crate::{Channel, Dispatcher};

/// How runs behave.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) approval_timeout: Duration,
    pub(crate) max_iterations: usize,
    pub(crate) pinned: Vec<String>,
    pub(crate) system_prompt: Option<String>,
    pub(crate) channel: Channel,
    pub(crate) narration: Narration,
    /// How long a run's lease lasts unrenewed (see [`SessionStore::claim_run`]).
    pub(crate) lease: Duration,
    /// How many runs may go at once in this process; past it a new one is
    /// refused with [`SessionError::Overloaded`](crate::session::SessionError::Overloaded).
    pub(crate) max_running: usize,
    /// How many event streams the router holds open at once.
    pub(crate) max_streams: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            approval_timeout: crate::dispatch::DEFAULT_APPROVAL_TIMEOUT,
            max_iterations: 8,
            pinned: Vec::new(),
            system_prompt: None,
            channel: Channel::Chat,
            narration: Narration::default(),
            lease: DEFAULT_LEASE,
            max_running: DEFAULT_MAX_RUNNING,
            max_streams: DEFAULT_MAX_STREAMS,
        }
    }
}

/// How many runs a process drives at once unless configured otherwise.
pub(crate) const DEFAULT_MAX_RUNNING: usize = 4096;

/// How many event streams the router holds open unless configured otherwise.
pub(crate) const DEFAULT_MAX_STREAMS: usize = 8192;

/// How long a replica's hold on its runs outlives its last renewal.
pub(crate) const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// A run this process is driving (or drove): its events and its task.
pub(crate) struct LiveRun {
    pub(crate) session_id: String,
    pub(crate) events: EventLog,
    pub(crate) task: Option<JoinHandle<()>>,
    /// When it started: the oldest finished runs are forgotten first.
    pub(crate) started: std::time::Instant,
}

pub(crate) type ApprovalKey = (String, String);

/// The runs waiting on an approval in this process, by run and call id.
#[derive(Default)]
pub(crate) struct Waiters {
    waiting: Mutex<HashMap<ApprovalKey, oneshot::Sender<bool>>>,
}

impl Waiters {
    /// Waits for the answer to `key`.
    pub(crate) fn wait(&self, key: ApprovalKey) -> oneshot::Receiver<bool> {
        let (sender, receiver) = oneshot::channel();
        lock(&self.waiting).insert(key, sender);
        receiver
    }

    /// Wakes the run waiting on `key`, if there is one.
    pub(crate) fn notify(&self, key: &ApprovalKey, approved: bool) -> bool {
        match lock(&self.waiting).remove(key) {
            Some(sender) => sender.send(approved).is_ok(),
            None => false,
        }
    }

    pub(crate) fn forget(&self, key: &ApprovalKey) {
        lock(&self.waiting).remove(key);
    }
}

pub(crate) struct Core {
    pub(crate) dispatcher: Arc<Dispatcher>,
    pub(crate) model: Arc<dyn Model>,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) config: Config,
    pub(crate) modes: Mutex<HashMap<String, ModeCell>>,
    pub(crate) runs: Mutex<HashMap<String, LiveRun>>,
    pub(crate) approvals: Waiters,
    pub(crate) next_run: AtomicU64,
    /// Makes this `Sessions`' run ids unique among all sharing the store,
    /// and names it as the replica holding its runs' leases.
    pub(crate) run_prefix: String,
    /// Renews this replica's leases while it lives.
    pub(crate) heartbeat: Mutex<Option<JoinHandle<()>>>,
    /// One permit per run going, `config.max_running` in all.
    pub(crate) running: Arc<tokio::sync::Semaphore>,
    /// Held across keeping a policy change and applying it (or applying
    /// every kept one), so the live policy ends as the store does whatever
    /// changes race.
    pub(crate) policy_changes: Mutex<()>,
}

/// Locks, taking over a lock poisoned by a panic elsewhere: the maps stay
/// consistent between statements.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
