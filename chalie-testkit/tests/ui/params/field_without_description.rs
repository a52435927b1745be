use chalie_core::Params;

#[derive(Params)]
struct ReadParams {
    path: String,
    max_bytes: Option<u64>,
}

fn main() {}
