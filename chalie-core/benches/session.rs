//! Session benches.
fn main() {}
