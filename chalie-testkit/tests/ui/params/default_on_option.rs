use chalie_core::Params;

#[derive(Params)]
struct ListParams {
    /// Items per page.
    #[param(default = 20)]
    limit: Option<u32>,
}

fn main() {}
