use chalie_core::Params;

#[derive(Params)]
struct SearchParams {
    /// What to search for.
    #[param(min = 1)]
    query: String,
}

fn main() {}
