use chalie_core::Params;

#[derive(Params)]
struct Location(String);

fn main() {}
