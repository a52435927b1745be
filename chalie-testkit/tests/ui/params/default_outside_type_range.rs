use chalie_core::Params;

#[derive(Params)]
struct VolumeParams {
    /// The volume, 0 (mute) to 255.
    #[param(default = 300)]
    level: u8,
}

fn main() {}
