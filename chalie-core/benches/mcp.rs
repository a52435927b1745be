//! Filled in below.
fn main() {}
