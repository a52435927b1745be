use chalie_core::Params;

#[derive(Params)]
struct AudioParams {
    /// What to compose.
    prompt: String,
    /// Beats per minute.
    #[param(actions = [generate])]
    bpm: Option<u32>,
}

fn main() {}
