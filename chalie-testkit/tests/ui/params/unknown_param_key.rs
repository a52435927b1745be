use chalie_core::Params;

#[derive(Params)]
struct SearchParams {
    /// What to search for.
    #[param(required = true)]
    query: String,
}

fn main() {}
