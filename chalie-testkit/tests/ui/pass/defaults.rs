use chalie_core::{ParamEnum, Params};

#[derive(Clone, Copy, Debug, PartialEq, ParamEnum)]
enum Speed {
    Fast,
    Slow,
}

#[derive(Params)]
struct CopyParams {
    /// How fast to copy.
    #[param(default = "slow")]
    speed: Speed,
    /// How many copies.
    #[param(default = 3, min = 1, max = 50)]
    count: u32,
    /// The offset, may be negative.
    #[param(default = -2)]
    offset: i8,
    /// A scale factor.
    #[param(default = 1)]
    scale: f64,
    /// A label.
    #[param(default = "copy")]
    label: String,
    /// Whether to overwrite.
    #[param(default = false)]
    overwrite: bool,
}

fn main() {
    let params = CopyParams::from_arguments(&serde_json::json!({})).expect("every default parses");
    assert_eq!(params.speed, Speed::Slow);
    assert_eq!((params.count, params.offset, params.label.as_str()), (3, -2, "copy"));
    assert!(params.scale == 1.0 && !params.overwrite);
}
