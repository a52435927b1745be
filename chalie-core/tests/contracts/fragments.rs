//! Standard parameters: defaults, bounds, shapes; and real derived
//! schemas through the bump rules.

use chalie_core::{
    Params, contracts::Cursor, contracts::Fields, contracts::Format, contracts::MaxChars,
    contracts::MaxItems, contracts::TopK, contracts::build::Bump, contracts::build::Side,
    contracts::build::diff_schemas, contracts::build::required_bump,
};
use serde_json::json;

/// A Params struct made only of standard fragments.
#[derive(Debug, Params)]
#[allow(dead_code)]
struct Standard {
    /// What to search for.
    query: String,
    /// How many results; default 10, 1 to 50.
    top_k: TopK,
    /// Items per page; default 20, 1 to 50.
    max_items: MaxItems,
    /// Longest body in characters; default 4000, 200 to 20000.
    max_chars: MaxChars,
    /// `concise` or `detailed`; default `concise`.
    format: Format,
    /// Keys of each item to keep; all when absent.
    fields: Option<Fields>,
    /// The previous result's `next_cursor`.
    cursor: Option<Cursor>,
}

#[test]
fn fragments_take_their_defaults() {
    let parsed = Standard::from_arguments(&json!({ "query": "boiler" })).unwrap();
    assert_eq!(parsed.top_k, TopK(10));
    assert_eq!(parsed.max_items.get(), 20);
    assert_eq!(parsed.max_chars, MaxChars(4000));
    assert_eq!(parsed.format, Format::Concise);
    assert!(parsed.fields.is_none() && parsed.cursor.is_none());
    let schema = <Standard as Params>::schema();
    assert_eq!(schema["required"], json!(["query"]));
    assert_eq!(schema["properties"]["top_k"]["maximum"], 50);
    assert_eq!(
        schema["properties"]["format"]["enum"],
        json!(["concise", "detailed"])
    );
    assert_eq!(schema["properties"]["cursor"]["type"], "string");
}

#[test]
fn fragments_reject_out_of_range_values_with_the_usual_error() {
    let error =
        Standard::from_arguments(&json!({ "query": "x", "top_k": 80, "format": "verbose" }))
            .unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("`top_k` must be between 1 and 50, not 80"),
        "{text}"
    );
    assert!(
        text.contains("`format` must be one of `concise`, `detailed`"),
        "{text}"
    );
    let parsed = Standard::from_arguments(&json!({
        "query": "x", "top_k": 5.0, "format": "detailed", "fields": ["id"], "cursor": "abc.def"
    }))
    .unwrap();
    assert_eq!((parsed.top_k, parsed.format), (TopK(5), Format::Detailed));
    assert_eq!(parsed.cursor.unwrap().as_str(), "abc.def");
    let fields = parsed.fields.unwrap();
    assert_eq!(
        fields.project(&json!({ "id": 1, "body": "long" })),
        json!({ "id": 1 })
    );
    assert!(Standard::from_arguments(&json!({ "query": "x", "cursor": "" })).is_err());
}

/// Version 1 of a tool's parameters.
#[derive(Params)]
#[allow(dead_code)]
struct V1 {
    /// The city.
    city: String,
    /// Days ahead, 1 to 7.
    #[param(min = 1, max = 7)]
    days: Option<f64>,
}

/// Version 2: `days` became a required integer with a tighter bound.
#[derive(Params)]
#[allow(dead_code)]
struct V2 {
    /// The city.
    city: String,
    /// Days ahead, 1 to 5.
    #[param(min = 1, max = 5)]
    days: u8,
    /// The unit, optional.
    unit: Option<String>,
}

#[test]
fn derived_schemas_go_through_the_bump_rules() {
    let changes = diff_schemas(
        <V1 as Params>::schema(),
        <V2 as Params>::schema(),
        Side::Input,
    );
    assert_eq!(required_bump(&changes), Bump::Major);
    let described: Vec<String> = changes.iter().map(ToString::to_string).collect();
    let all = described.join("\n");
    assert!(
        all.contains("input field `days`: optional field became required (a major bump)"),
        "{all}"
    );
    assert!(
        all.contains(
            "input field `days`: type changed from number to integer (narrowed) (a major bump)"
        ),
        "{all}"
    );
    assert!(all.contains("`maximum` tightened from 7 to 5"), "{all}");
    assert!(
        all.contains("input field `unit`: new optional field (a minor bump)"),
        "{all}"
    );
}
