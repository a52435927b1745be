use chalie_core::Params;

#[derive(Params)]
struct SaveParams {
    /// What to save.
    extra: serde_json::Value,
}

fn main() {}
