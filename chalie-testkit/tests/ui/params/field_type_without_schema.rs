use chalie_core::Params;

#[derive(Params)]
struct OpenParams {
    /// The file to open.
    file: std::fs::File,
}

fn main() {}
