use chalie_core::Params;

#[derive(Params)]
struct ListParams {
    /// How many items to return.
    #[param(defualt = 20)]
    count: u32,
}

fn main() {}
