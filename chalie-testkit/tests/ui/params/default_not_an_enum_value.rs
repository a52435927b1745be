use chalie_core::{ParamEnum, Params};

#[derive(Clone, Copy, ParamEnum)]
enum Speed {
    Fast,
    Slow,
}

#[derive(Params)]
struct CopyParams {
    /// How fast to copy.
    #[param(default = "quick")]
    speed: Speed,
}

fn main() {}
