//! Public-API tests of chalie-core: one binary, one module per area.

// A failed unwrap is a failed test, which is what a test should do.
#![allow(clippy::unwrap_used)]

mod abilities;
mod cards;
mod envelope;
mod envelope_fuzz;
mod param_semantics;
mod params;
mod providers;
mod registry;
