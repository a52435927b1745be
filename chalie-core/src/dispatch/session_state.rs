//! What the dispatcher keeps per session.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::background::BackgroundCalls;
use super::limits::Window;
use super::reuse::ReuseRuns;

/// One session's state, each part behind its own small lock.
#[derive(Debug, Default)]
pub(crate) struct SessionState {
    pub(crate) window: Mutex<Window>,
    /// The windows of the abilities that declare a rate limit, by name.
    pub(crate) ability_windows: Mutex<HashMap<&'static str, Window>>,
    pub(crate) reuse: Mutex<ReuseRuns>,
    pub(crate) background: BackgroundCalls,
}

/// Locks, taking over a lock poisoned by a panic elsewhere: the state is
/// plain data that stays consistent between statements.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
