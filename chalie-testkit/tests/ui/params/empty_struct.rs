use chalie_core::Params;

#[derive(Params)]
struct Nothing {}

fn main() {}
