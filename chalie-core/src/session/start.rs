//! When a call's `tool.started` goes out: once the call runs, after any
//! approval, and never for a call the human rejected.
//!
//! The run prepares each call's `tool.started` before dispatching it; the
//! session's gate hook sends it when the gate lets the call through
//! ([`GateHook::running`](crate::dispatch::GateHook)) or captures it as a
//! plan step, holds it while the human is asked, and drops it when the
//! answer is no. A call refused before the gate (an unknown tool, bad
//! arguments, a denial, `plan` mode's block) is started when its outcome
//! arrives, so every card that opens also closes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::core::lock;
use super::event::Event;
use super::stream::EventLog;

/// Where one call's `tool.started` is.
enum Start {
    /// Prepared; goes out when the call runs or its outcome arrives.
    Pending(Event),
    /// The human is being asked: goes out only if the answer is yes.
    Held(Event),
}

/// The `tool.started` events of a run's calls not sent yet, by call id.
/// Cheap to clone; clones share.
#[derive(Clone, Default)]
pub(crate) struct Starts {
    calls: Arc<Mutex<HashMap<String, Start>>>,
}

impl Starts {
    /// Keeps `started` for `call_id` until the call runs.
    pub(crate) fn prepare(&self, call_id: &str, started: Event) {
        lock(&self.calls).insert(call_id.to_owned(), Start::Pending(started));
    }

    /// The call runs (or was captured as a plan step): its `tool.started`
    /// goes out now, once.
    pub(crate) fn send(&self, call_id: &str, events: &EventLog) {
        let start = lock(&self.calls).remove(call_id);
        if let Some(Start::Pending(started) | Start::Held(started)) = start {
            events.push(started);
        }
    }

    /// The human is asked about the call: its `tool.started` waits for
    /// the answer.
    pub(crate) fn hold(&self, call_id: &str) {
        let mut calls = lock(&self.calls);
        if let Some(Start::Pending(started)) = calls.remove(call_id) {
            calls.insert(call_id.to_owned(), Start::Held(started));
        }
    }

    /// The human said no (or nothing in time): the call never starts.
    pub(crate) fn discard(&self, call_id: &str) {
        lock(&self.calls).remove(call_id);
    }

    /// The call's outcome is here: a call the gate never let through nor
    /// asked about (refused before it) is started now, just before its
    /// outcome; one still held (the asking failed) is not.
    pub(crate) fn settle(&self, call_id: &str, events: &EventLog) {
        let start = lock(&self.calls).remove(call_id);
        if let Some(Start::Pending(started)) = start {
            events.push(started);
        }
    }
}
