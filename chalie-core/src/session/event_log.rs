//! A run's event log: every event kept in order, replayed to each
//! subscriber from the start, so a client that connects late misses nothing.

use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use tokio::sync::watch;

use crate::session::event::Event;

/// Where a log's events are copied as they are pushed.
pub(crate) type Mirror = Arc<dyn Fn(&Event) + Send + Sync>;

/// The events of one run, in order. Cheap to clone; clones share.
#[derive(Clone)]
pub struct EventLog {
    events: Arc<Mutex<Vec<Event>>>,
    // How many events there are, and whether the log is closed.
    state: Arc<watch::Sender<(usize, bool)>>,
    mirror: Option<Mirror>,
    // The run's place under the process's limit, given back as the log
    // closes (before any subscriber reads the last event).
    place: Arc<Mutex<Option<tokio::sync::OwnedSemaphorePermit>>>,
}

impl std::fmt::Debug for EventLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventLog")
            .field("events", &self.len())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Default for EventLog {
    fn default() -> Self {
        Self::new()
    }
}

impl EventLog {
    /// An empty, open log.
    pub fn new() -> Self {
        Self {
            events: Arc::new(Mutex::new(Vec::new())),
            state: Arc::new(watch::Sender::new((0, false))),
            mirror: None,
            place: Arc::default(),
        }
    }

    /// An empty, open log that also hands each event to `mirror` (the
    /// store, for replicas that follow the run).
    pub(crate) fn mirrored(mirror: Mirror) -> Self {
        Self {
            mirror: Some(mirror),
            ..Self::new()
        }
    }

    /// Appends an event and wakes the subscribers. After
    /// [`Event::RunSettlementCompleted`] the log is closed.
    pub fn push(&self, event: Event) {
        if let Some(mirror) = &self.mirror {
            mirror(&event);
        }
        let terminal = event.is_terminal();
        if terminal {
            self.give_back_place();
        }
        let len = {
            let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
            events.push(event);
            events.len()
        };
        self.state.send_replace((len, terminal || self.is_closed()));
    }

    /// Closes the log without a settlement (the process is stopping).
    pub fn close(&self) {
        self.give_back_place();
        let len = self.len();
        self.state.send_replace((len, true));
    }

    /// Whether no more events will come.
    pub fn is_closed(&self) -> bool {
        self.state.borrow().1
    }

    /// How many events so far.
    pub fn len(&self) -> usize {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether there is no event yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of every event so far.
    pub fn snapshot(&self) -> Vec<Event> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// A subscriber that reads every event from the first.
    pub fn subscribe(&self) -> EventStream {
        EventStream {
            log: self.clone(),
            next: 0,
            changes: self.state.subscribe(),
        }
    }

    /// Holds `place` (the run's place under the limit of running runs)
    /// until the log closes.
    pub(crate) fn hold(&self, place: tokio::sync::OwnedSemaphorePermit) {
        if self.is_closed() {
            return;
        }
        *self.place.lock().unwrap_or_else(PoisonError::into_inner) = Some(place);
    }

    fn give_back_place(&self) {
        self.place
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }

    /// Waits until the log is closed and returns every event.
    pub async fn collect(&self) -> Vec<Event> {
        let mut changes = self.state.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = changes.wait_for(|(_, closed)| *closed).await;
        self.snapshot()
    }
}

/// Reads a run's events in order; see [`EventLog::subscribe`].
#[derive(Debug)]
pub struct EventStream {
    log: EventLog,
    next: usize,
    changes: watch::Receiver<(usize, bool)>,
}

impl EventStream {
    /// The next event, or `None` once the run is over and every event read.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            // Mark the state seen before reading, so a push after the read
            // is a change `changed()` reports.
            let closed = self.changes.borrow_and_update().1;
            let event = {
                let events = self
                    .log
                    .events
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                events.get(self.next).cloned()
            };
            if let Some(event) = event {
                self.next += 1;
                return Some(event);
            }
            if closed || self.changes.changed().await.is_err() {
                return None;
            }
        }
    }

    /// The events as a [`Stream`], e.g. for an SSE response.
    pub fn into_stream(self) -> impl Stream<Item = Event> + Send + 'static {
        futures::stream::unfold(self, |mut stream| async move {
            stream.next().await.map(|event| (event, stream))
        })
    }
}
