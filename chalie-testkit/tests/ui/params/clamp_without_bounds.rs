use chalie_core::Params;

#[derive(Params)]
struct TempoParams {
    /// Beats per minute.
    #[param(clamp)]
    bpm: u32,
}

fn main() {}
