//! Capability contracts: manifests and version bumps, profiles, cursors,
//! caps, the scratchpad and the description lint.

// Tests fail loudly by unwrapping.
#![allow(clippy::unwrap_used)]

mod bumps;
mod catalog;
mod cursors;
mod fragments;
mod lint;
mod manifest;
mod outputs;
mod profiles;
