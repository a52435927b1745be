use chalie_core::Params;

#[derive(Params)]
struct AudioParams {
    /// `generate` or `transcribe`.
    action: String,
    /// Beats per minute.
    #[param(actions = [generate])]
    bpm: u32,
}

fn main() {}
