use chalie_core::Params;

#[derive(Params)]
struct ListParams {
    /// How many items to return.
    #[param(default = 100, min = 1, max = 50)]
    count: u32,
}

fn main() {}
