use chalie_core::Params;

#[derive(Params)]
struct ReadParams {
    path: String,
    /// The most bytes to read.
    max_bytes: Option<u64>,
}

fn main() {}
