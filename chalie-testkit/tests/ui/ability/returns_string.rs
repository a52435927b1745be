use chalie_core::ability;

/// Gets the weather.
#[ability(examples = ["a one", "a two", "a three", "a four", "a five", "a six"])]
fn weather() -> String {
    String::new()
}

fn main() {}
