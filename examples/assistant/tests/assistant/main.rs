//! The example assistant's abilities, called through the real dispatcher
//! with `chalie_testkit::Harness`, the smoke suite over the whole catalog,
//! and the demo's transcript.

// A failed unwrap is a failed test, with its line.
#![allow(clippy::unwrap_used)]

chalie_core::link_abilities!(assistant);

mod calendar;
mod catalog;
mod demo;
mod index;
mod memory;
mod notes;
mod service;
mod session;
mod tasks;
mod weather;
mod web;

use assistant::Host;
use chalie_testkit::Harness;

/// A harness over every ability, everything allowed, with the sample host.
pub fn harness_with(host: Host) -> Harness {
    Harness::builder()
        // These tests are about each ability's behaviour; reachability and
        // the gate are attacked in chalie-core's isolation tests.
        .pin_every_ability()
        .allow_all()
        .configure(move |builder| host.install(builder))
        .build()
        .expect("unique ability names")
}

/// [`harness_with`] the sample host.
pub fn harness() -> Harness {
    harness_with(Host::sample())
}
