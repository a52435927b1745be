//! Input examples in every shape the attribute reads: quoted and bare
//! keys, negative and fractional numbers, `null`, arrays and objects.

use chalie_core::{ParamEnum, Params, ToolResult, ability};

#[derive(Clone, Copy, ParamEnum)]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Params)]
struct Stop {
    /// The stop's city.
    city: String,
}

#[derive(Params)]
struct TripParams {
    /// `plan` a trip or `cancel` one.
    action: String,
    /// The stops, in order.
    #[param(actions = [plan])]
    stops: Option<Vec<Stop>>,
    /// The first stop, when there is one.
    #[param(actions = [plan])]
    start: Option<Stop>,
    /// The trip's id.
    #[param(actions = [cancel])]
    id: Option<String>,
    /// The lowest temperature to plan for.
    #[param(min = -40, max = 50)]
    coldest: Option<f64>,
    /// The temperature unit.
    unit: Option<Unit>,
    /// Whether to book as well.
    book: Option<bool>,
}

/// Plans and cancels trips.
#[ability(
    actions(plan = [stops], cancel = [id]),
    examples = ["a one", "a two", "a three", "a four", "a five", "a six"],
    input_examples = [
        {
            "action": "plan",
            "stops": [{ "city": "Rome" }, { "city": "Oslo" }],
            "start": { "city": "Rome" },
            "coldest": -3.5,
            "unit": "celsius",
            "book": false,
        },
        { action: "cancel", id: "trip-7", unit: null },
    ],
)]
fn trip(params: TripParams) -> ToolResult {
    let _ = (params.stops, params.start, params.id, params.coldest, params.unit.map(|_| ()), params.book);
    ToolResult::success(params.action)
}

fn main() {
    let examples = <trip as chalie_core::Ability>::SPEC.input_examples();
    assert_eq!(examples.len(), 2);
    assert_eq!(
        examples[0].to_json(),
        serde_json::json!({
            "action": "plan",
            "stops": [{ "city": "Rome" }, { "city": "Oslo" }],
            "start": { "city": "Rome" },
            "coldest": -3.5,
            "unit": "celsius",
            "book": false,
        })
    );
}
