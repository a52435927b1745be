//! `#[derive(Params)]`: the schema's shape and the parser's errors.

use chalie_core::{ParamEnum, Params, params::Problem, params::Schemars};
use serde_json::json;

#[derive(Clone, Copy, Debug, PartialEq, ParamEnum)]
enum Format {
    Concise,
    #[param(rename = "full")]
    Detailed,
}

#[allow(dead_code)]
#[derive(Params, Debug)]
struct Stop {
    /// The city.
    city: String,
    /// Nights to stay.
    #[param(min = 1, max = 30)]
    nights: u32,
}

#[derive(schemars::JsonSchema, serde::Deserialize, Debug, PartialEq)]
struct Window {
    start: String,
    end: Option<String>,
}

#[allow(dead_code)]
#[derive(Params, Debug)]
struct TripParams {
    /// Where the trip starts.
    origin: String,
    /// The stops, in order.
    stops: Vec<Stop>,
    /// How much detail to return.
    #[param(default = "concise")]
    format: Format,
    /// Results per page.
    #[param(default = 20, min = 1, max = 50)]
    top_k: u8,
    /// A budget in euros.
    budget: Option<f64>,
    /// When to travel.
    window: Option<Schemars<Window>>,
}

#[test]
fn schema_is_object_rooted_inlined_and_closed() {
    let schema = TripParams::schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], json!(["origin", "stops"]));
    assert_eq!(
        schema["properties"]["format"],
        json!({ "description": "How much detail to return.", "type": "string", "enum": ["concise", "full"], "default": "concise" })
    );
    assert_eq!(schema["properties"]["top_k"]["minimum"], 1);
    assert_eq!(schema["properties"]["top_k"]["maximum"], 50);
    assert_eq!(schema["properties"]["top_k"]["default"], 20);
    let stop = &schema["properties"]["stops"]["items"];
    assert_eq!(stop["additionalProperties"], false);
    assert_eq!(stop["required"], json!(["city", "nights"]));
    let window = &schema["properties"]["window"];
    assert_eq!(window["additionalProperties"], false);
    assert!(window["properties"]["start"].is_object());
    let text = schema.to_string();
    for forbidden in ["$ref", "$defs", "$schema", "definitions"] {
        assert!(!text.contains(forbidden), "{forbidden} in {text}");
    }
    assert!(jsonschema::draft202012::meta::validate(schema).is_ok());
}

#[test]
fn field_order_is_declaration_order() {
    let keys: Vec<&String> = TripParams::schema()["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        keys,
        ["origin", "stops", "format", "top_k", "budget", "window"]
    );
    assert_eq!(
        TripParams::FIELDS,
        ["origin", "stops", "format", "top_k", "budget", "window"]
    );
}

#[test]
fn defaults_apply_when_absent_or_null() {
    let parsed =
        TripParams::from_arguments(&json!({ "origin": "Rome", "stops": [], "top_k": null }))
            .unwrap();
    assert_eq!(parsed.format, Format::Concise);
    assert_eq!(parsed.top_k, 20);
    assert_eq!(parsed.budget, None);
    let parsed = TripParams::from_arguments(&json!({
        "origin": "Rome",
        "stops": [{ "city": "Oslo", "nights": 2 }],
        "format": "full",
        "top_k": 5.0,
        "window": { "start": "2026-12-24", "end": null },
    }))
    .unwrap();
    assert_eq!(parsed.format, Format::Detailed);
    assert_eq!(parsed.top_k, 5);
    assert_eq!(parsed.stops[0].city, "Oslo");
    assert_eq!(
        parsed.window.unwrap().0,
        Window {
            start: "2026-12-24".into(),
            end: None
        }
    );
}

/// Fields are read in declaration order, trying the next key sent first:
/// keys sent in any other order, or with some left out, read the same.
#[test]
fn keys_in_any_order_parse_the_same() {
    let in_order = TripParams::from_arguments(&json!({
        "origin": "Rome", "stops": [{ "city": "Oslo", "nights": 2 }], "format": "full", "top_k": 5, "budget": 90.5,
    }))
    .unwrap();
    let shuffled = TripParams::from_arguments(&json!({
        "budget": 90.5, "top_k": 5, "stops": [{ "nights": 2, "city": "Oslo" }], "origin": "Rome", "format": "full",
    }))
    .unwrap();
    let gaps = TripParams::from_arguments(&json!({
        "origin": "Rome", "top_k": 5, "stops": [{ "city": "Oslo", "nights": 2 }], "budget": 90.5, "format": "full",
    }))
    .unwrap();
    for parsed in [&in_order, &shuffled, &gaps] {
        assert_eq!(parsed.origin, "Rome");
        assert_eq!(parsed.stops[0].city, "Oslo");
        assert_eq!(parsed.stops[0].nights, 2);
        assert_eq!(parsed.format, Format::Detailed);
        assert_eq!(parsed.top_k, 5);
        assert_eq!(parsed.budget, Some(90.5));
    }
    let unknown = TripParams::from_arguments(&json!({
        "origin": "Rome", "stops": [], "format": "full", "colour": "red",
    }))
    .unwrap_err();
    assert_eq!(unknown.errors().len(), 1);
    assert!(matches!(
        unknown.errors()[0].problem,
        Problem::UnknownField { .. }
    ));
}

#[test]
fn every_problem_is_reported_with_its_path() {
    let errors = TripParams::from_arguments(&json!({
        "stops": [{ "city": 3, "nights": 0 }, { "city": "Oslo" }],
        "format": "verbose",
        "top_k": 500,
        "risk": "low",
    }))
    .unwrap_err();
    let messages: Vec<String> = errors.errors().iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "unknown field `risk`; valid fields are `origin`, `stops`, `format`, `top_k`, `budget`, `window`",
            "`origin` is required (a string)",
            "`stops[0].city` must be a string, not the number `3`",
            "`stops[0].nights` must be between 1 and 30, not the number `0`",
            "`stops[1].nights` is required (an integer)",
            "`format` must be one of `concise`, `full`, not `verbose`",
            "`top_k` must be between 1 and 50, not the number `500`",
        ]
    );
}

#[test]
fn errors_become_a_self_correcting_tool_result() {
    let errors =
        TripParams::from_arguments(&json!({ "origin": "Rome", "stops": [], "format": "verbose" }))
            .unwrap_err();
    assert!(matches!(
        errors.errors()[0].problem,
        Problem::NotOneOf { .. }
    ));
    let result = errors.into_tool_result();
    let error = result.as_error().unwrap();
    assert_eq!(error.code().as_str(), "invalid-arguments");
    assert_eq!(error.valid_values(), ["concise", "full"]);
    assert!(!error.hint().is_empty());
}

#[test]
fn non_objects_and_out_of_range_integers_are_named() {
    let errors = TripParams::from_arguments(&json!("Rome")).unwrap_err();
    assert_eq!(
        errors.to_string(),
        "the arguments must be a JSON object, not a string"
    );
    let errors =
        TripParams::from_arguments(&json!({ "origin": "Rome", "stops": [], "top_k": 3.5 }))
            .unwrap_err();
    assert_eq!(
        errors.to_string(),
        "`top_k` must be a whole number, not the number `3.5`"
    );
    let errors = TripParams::from_arguments(&json!({ "origin": "Rome", "stops": [], "top_k": -1 }))
        .unwrap_err();
    assert_eq!(
        errors.to_string(),
        "`top_k` must be between 1 and 50, not the number `-1`"
    );
}

#[test]
fn valid_arguments_validate_against_the_schema() {
    let validator = jsonschema::draft202012::new(TripParams::schema()).unwrap();
    let good =
        json!({ "origin": "Rome", "stops": [{ "city": "Oslo", "nights": 2 }], "format": "full" });
    assert!(validator.is_valid(&good));
    assert!(TripParams::from_arguments(&good).is_ok());
    let bad = json!({ "origin": "Rome", "stops": [], "extra": 1 });
    assert!(!validator.is_valid(&bad));
    assert!(TripParams::from_arguments(&bad).is_err());
}

/// A tree of named nodes: a struct that contains itself through another
/// (`#[derive(Params)]` refuses `Vec<Self>` at the type; the registry
/// refuses this one, see the `refused` tests).
#[derive(Params)]
struct TreeParams {
    /// The node's name.
    name: String,
    /// The node's branches.
    children: Vec<Branch>,
}

#[derive(Params)]
struct Branch {
    /// The subtree on this branch.
    tree: TreeParams,
}

#[test]
fn a_struct_that_contains_itself_has_a_finite_schema_marked_open_and_parses_at_depth() {
    let schema = <TreeParams as Params>::schema();
    let recurring = &schema["properties"]["children"]["items"]["properties"]["tree"];
    assert_eq!(recurring["type"], "object");
    assert!(recurring.get("properties").is_none(), "{recurring}");
    let open = chalie_core::params::find_open_object(schema).expect("the recursion is open");
    assert_eq!(open.path, "children[].tree");
    assert_eq!(open.shape, chalie_core::params::OpenShape::Recursive);
    let tree = TreeParams::from_arguments(&json!({
        "name": "root",
        "children": [{ "tree": { "name": "leaf", "children": [{ "tree": { "name": "deeper", "children": [] } }] } }]
    }))
    .expect("a finite tree parses");
    assert_eq!(tree.children[0].tree.children[0].tree.name, "deeper");
    // Checked in full at every depth.
    let error = TreeParams::from_arguments(
        &json!({ "name": "root", "children": [{ "tree": { "children": [] } }] }),
    )
    .err()
    .unwrap();
    assert!(
        error.to_string().contains("children[0].tree.name"),
        "{error}"
    );
}

/// A ratio bounded at a value an `f32` cannot hold exactly.
#[derive(Params)]
struct RatioParams {
    /// The share, at most 0.1.
    #[param(max = 0.1)]
    share: f32,
}

#[test]
fn bounds_are_checked_on_the_number_sent() {
    // 0.1 as an `f32` is 0.100000001…: checked on the parsed value it
    // would break the bound the schema states.
    let at_bound =
        RatioParams::from_arguments(&json!({ "share": 0.1 })).expect("0.1 is at most 0.1");
    assert!((at_bound.share - 0.1).abs() < f32::EPSILON);
    let error = RatioParams::from_arguments(&json!({ "share": 0.2 }))
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "`share` must be at most 0.1, not the number `0.2`"
    );
}
