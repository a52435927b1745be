//! Following a run another replica drives: its events, as the store keeps
//! them, replayed into a local log a client can subscribe to.

use std::sync::Arc;
use std::time::Duration;

use crate::session::event_log::{EventLog, Mirror};
use crate::session::store::{RunStatus, SessionStore};

/// How often a follower reads the events kept since it last looked.
const POLL: Duration = Duration::from_millis(50);

/// A log the run's events are copied to, for a store that keeps them.
pub(crate) fn mirrored_log(store: &Arc<dyn SessionStore>, run_id: &str) -> EventLog {
    let store = Arc::clone(store);
    let run_id = run_id.to_owned();
    let mirror: Mirror = Arc::new(move |event| {
        // A copy that fails leaves followers one event short; the run and
        // its own log go on.
        let _ = store.put_event(&run_id, event);
    });
    EventLog::mirrored(mirror)
}

/// A log replaying `run_id`'s kept events from the first, filled in the
/// background until the run settles; `None` when the store keeps no
/// events (a store one process opens) or there is no runtime.
pub(crate) fn follow(store: &Arc<dyn SessionStore>, run_id: &str) -> Option<EventLog> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    let first = store.run_events(run_id, 0).ok()??;
    let log = EventLog::new();
    let (store, run_id, filled) = (Arc::clone(store), run_id.to_owned(), log.clone());
    handle.spawn(async move {
        let mut batch = first;
        let mut read = 0u64;
        loop {
            for event in batch {
                read += 1;
                let terminal = event.is_terminal();
                filled.push(event);
                if terminal {
                    return;
                }
            }
            // Settled without its last event reaching the store (or by a
            // replica that died with nobody to resume it): nothing more comes.
            let settled = !matches!(
                store.run(&run_id),
                Ok(Some(run)) if run.status == RunStatus::Running
            );
            tokio::time::sleep(POLL).await;
            batch = match store.run_events(&run_id, read) {
                Ok(Some(batch)) => batch,
                _ => Vec::new(),
            };
            if settled && batch.is_empty() {
                filled.close();
                return;
            }
        }
    });
    Some(log)
}
