use std::collections::HashMap;

use chalie_core::Params;

#[derive(Params)]
struct LabelParams {
    /// Label name to value.
    labels: HashMap<String, String>,
}

fn main() {}
