//! chalie's first example as a library: its abilities, so tools such as
//! `cargo xtask manifest` and `cargo xtask lint` can link them.

pub mod abilities;
