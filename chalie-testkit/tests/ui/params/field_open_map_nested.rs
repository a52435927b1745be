use chalie_core::Params;
use chalie_core::params::Schemars;

#[derive(Params)]
struct LabelParams {
    /// Label name to value, for each item.
    labels: Option<Vec<Schemars<std::collections::BTreeMap<String, String>>>>,
}

fn main() {}
