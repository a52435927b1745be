use chalie_core::Params;

#[derive(Params)]
struct TempoParams {
    /// Beats per minute.
    #[param(min = 40, max = 300, clamp)]
    bpm: Option<u8>,
}

fn main() {}
