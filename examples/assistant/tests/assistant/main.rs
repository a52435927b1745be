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
mod playbooks;
mod service;
mod session;
mod tasks;
mod users;
mod weather;
mod web;

use assistant::{Host, SAMPLE_USER};
use chalie_core::turn::Principal;
use chalie_testkit::Harness;

/// A harness over every ability, everything allowed, with the sample host,
/// acting as the sample user (who has the sample calendar and tasks).
pub fn harness_with(host: Host) -> Harness {
    Harness::builder()
        .principal(Principal::new(SAMPLE_USER))
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
