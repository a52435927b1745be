//! When a call's `tool.started` goes out: once the call runs, after any
//! approval, and never for a call the human rejected.
//!
//! The run prepares each call's `tool.started` before dispatching it; the
//! session's gate hook sends it when the gate lets the call through
//! ([`GateHook::running`](crate::dispatch::GateHook)) or captures it as a
//! plan step, and drops it when the human's answer is no (or none came).
//! While the human is asked, the gate has not let the call through, so
//! the start waits. A call refused before the gate (an unknown tool, bad
//! arguments, a denial, `plan` mode's block) is started when its outcome
//! arrives, so every card that opens also closes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::session::event::Event;
use crate::session::event_log::EventLog;
use crate::session::run::shared::lock;

/// The `tool.started` events of a run's calls not sent yet, by call id.
/// Cheap to clone; clones share.
#[derive(Clone, Default)]
pub(crate) struct Starts {
    calls: Arc<Mutex<HashMap<String, Event>>>,
}

impl Starts {
    /// Keeps `started` for `call_id` until the call runs.
    pub(crate) fn prepare(&self, call_id: &str, started: Event) {
        lock(&self.calls).insert(call_id.to_owned(), started);
    }

    /// The call runs (or was captured as a plan step): its `tool.started`
    /// goes out now, once.
    pub(crate) fn send(&self, call_id: &str, events: &EventLog) {
        if let Some(started) = lock(&self.calls).remove(call_id) {
            events.push(started);
        }
    }

    /// The human said no (or nothing in time), or the asking failed: the
    /// call never starts.
    pub(crate) fn discard(&self, call_id: &str) {
        lock(&self.calls).remove(call_id);
    }

    /// The call's outcome is here: a call neither let through nor asked
    /// about (refused before the gate) is started now, just before its
    /// outcome, so its card opens and closes.
    pub(crate) fn settle(&self, call_id: &str, events: &EventLog) {
        self.send(call_id, events);
    }
}
