//! The example assistant's demo.
chalie_core::link_abilities!(assistant);

fn main() {}
