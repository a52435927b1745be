use chalie_core::ParamEnum;

#[derive(Clone, Copy, ParamEnum)]
enum Format {
    Concise,
    Detailed(u8),
}

fn main() {}
