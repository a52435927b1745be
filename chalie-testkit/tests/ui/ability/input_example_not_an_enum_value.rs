use chalie_core::{ParamEnum, Params, ToolResult, ability};

#[derive(Clone, Copy, ParamEnum)]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Params)]
struct CalendarParams {
    /// `create` to add an event, `delete` to remove one.
    action: String,
    /// The event's title.
    #[param(actions = [create])]
    title: Option<String>,
    /// The event's id, from a listing.
    #[param(actions = [delete])]
    id: Option<String>,
    /// The unit the event's temperature note uses.
    unit: Option<Unit>,
}

/// Edits the user's calendar.
#[ability(
    actions(create = [title], delete = [id]),
    examples = ["a one", "a two", "a three", "a four", "a five", "a six"],
    input_examples = [{ "action": "create", "title": "Lunch", "unit": "kelvin" }],
)]
fn calendar_edit(params: CalendarParams) -> ToolResult {
    let _ = (params.title, params.id, params.unit.map(|_| ()));
    ToolResult::success(params.action)
}

fn main() {}
