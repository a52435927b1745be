use chalie_core::Params;

#[derive(Params)]
struct TagParams {
    /// The tags to add.
    #[param(default = "urgent")]
    tags: Vec<String>,
}

fn main() {}
