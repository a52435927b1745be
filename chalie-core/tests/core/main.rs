//! Public-API tests of chalie-core: one binary, one module per area.

mod abilities;
mod envelope;
mod params;
mod providers;
mod registry;
