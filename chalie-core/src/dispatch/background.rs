//! Background calls: a receipt now, the final envelope when it is ready.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

use super::call::Dispatched;

type Slot = watch::Receiver<Option<Arc<Dispatched>>>;

/// The background calls of one session: poll or await each final result.
/// Cheap to clone; clones share.
///
/// Finished results stay until [`BackgroundCalls::take_finished`] or
/// [`BackgroundCalls::forget`] removes them, or the session ends
/// ([`Dispatcher::end_session`](crate::Dispatcher::end_session)).
#[derive(Debug, Clone, Default)]
pub struct BackgroundCalls {
    slots: Arc<Mutex<HashMap<String, Slot>>>,
}

/// The sending half a background task completes.
pub(crate) struct Completion {
    sender: watch::Sender<Option<Arc<Dispatched>>>,
}

impl Completion {
    pub(crate) fn complete(self, dispatched: Dispatched) {
        // Nobody listening is fine: the slot may have been forgotten.
        let _ = self.sender.send(Some(Arc::new(dispatched)));
    }
}

impl BackgroundCalls {
    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn start(&self, call_id: &str) -> Completion {
        let (sender, receiver) = watch::channel(None);
        self.slots().insert(call_id.to_owned(), receiver);
        Completion { sender }
    }

    /// The final result of `call_id`, if it has finished.
    pub fn poll(&self, call_id: &str) -> Option<Dispatched> {
        let slots = self.slots();
        let done = slots.get(call_id)?.borrow().clone();
        done.map(|dispatched| Dispatched::clone(&dispatched))
    }

    /// Waits for the final result of `call_id`; `None` when there is no
    /// such call or its task was lost (the runtime shut down).
    pub async fn wait(&self, call_id: &str) -> Option<Dispatched> {
        let mut receiver = self.slots().get(call_id)?.clone();
        let done = receiver.wait_for(Option::is_some).await.ok()?.clone();
        done.map(|dispatched| Dispatched::clone(&dispatched))
    }

    /// The ids of calls still running.
    pub fn pending(&self) -> Vec<String> {
        let mut pending: Vec<String> = self
            .slots()
            .iter()
            .filter(|(_, slot)| slot.borrow().is_none())
            .map(|(id, _)| id.clone())
            .collect();
        pending.sort();
        pending
    }

    /// Removes and returns every finished result, e.g. to add them to the
    /// next model request.
    pub fn take_finished(&self) -> Vec<Dispatched> {
        let mut slots = self.slots();
        let finished: Vec<String> = slots
            .iter()
            .filter(|(_, slot)| slot.borrow().is_some())
            .map(|(id, _)| id.clone())
            .collect();
        let mut results: Vec<Dispatched> = finished
            .iter()
            .filter_map(|id| slots.remove(id))
            .filter_map(|slot| slot.borrow().as_deref().cloned())
            .collect();
        results.sort_by(|a, b| a.call_id().cmp(b.call_id()));
        results
    }

    /// Stops tracking `call_id`; the call still runs and is still recorded.
    pub fn forget(&self, call_id: &str) {
        self.slots().remove(call_id);
    }
}
