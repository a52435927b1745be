use chalie_core::Params;

#[derive(Params)]
struct ListParams {
    /// How many items to return.
    #[param(default = "many")]
    count: u32,
}

fn main() {}
