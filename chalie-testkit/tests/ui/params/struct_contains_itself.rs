use chalie_core::Params;

#[derive(Params)]
struct OutlineParams {
    /// The heading.
    heading: String,
    /// The sections under it, each an outline itself.
    sections: Vec<Self>,
}

fn main() {}
