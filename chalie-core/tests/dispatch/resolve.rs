//! Unknown names and external tools behind a prefix.

use std::sync::Arc;

use chalie_core::{
    BoxFuture, Channel, Effect, ToolResult, Turn, dispatch::ExternalOutput, dispatch::ExternalTool,
    dispatch::ExternalTools, dispatch::Setting, params::ParamErrors, params::Problem,
    turn::GateDecision,
};
use serde_json::{Value, json};

use crate::{call, envelope, turn, widened_builder};

#[tokio::test]
async fn an_unknown_name_suggests_the_closest() {
    let dispatcher = widened_builder().build();
    let turn = turn(Channel::Chat, "resolve-unknown");
    let done = call(&dispatcher, &turn, "calender", json!({})).await;
    let parsed = envelope(&done);
    assert_eq!(parsed.code(), Some("unknown-tool"));
    assert!(parsed.content.contains("no tool is named `calender`"));
    let valid = done.result.as_error().unwrap().valid_values().to_vec();
    assert_eq!(
        valid.first().map(String::as_str),
        Some("calendar"),
        "{valid:?}"
    );
    let by_segment = call(&dispatcher, &turn, "lookup_notes", json!({})).await;
    assert!(
        by_segment
            .result
            .as_error()
            .unwrap()
            .valid_values()
            .contains(&"lookup".to_owned())
    );
    assert_eq!(done.record().decision, GateDecision::NotReached);
    assert_eq!(turn.trail().len(), 2);
}

/// A test double for an external proxy: one well-behaved tool and one
/// that returns plain JSON.
pub struct FakeProxy;

impl ExternalTools for FakeProxy {
    fn prefix(&self) -> &str {
        "ext__"
    }

    fn tools(&self) -> Vec<ExternalTool> {
        let schema = json!({
            "type": "object",
            "properties": { "q": { "type": "string" } },
            "required": ["q"],
            "additionalProperties": false
        });
        vec![
            ExternalTool {
                name: "ext__search".into(),
                description: "Searches elsewhere.".into(),
                input_schema: schema.clone(),
                effect: Effect::Read,
            },
            ExternalTool {
                name: "ext__raw".into(),
                description: "Returns plain JSON.".into(),
                input_schema: schema,
                effect: Effect::Write,
            },
        ]
    }

    fn validate(&self, tool: &ExternalTool, arguments: &Value) -> Result<(), ParamErrors> {
        let validator = jsonschema::validator_for(&tool.input_schema).expect("a valid schema");
        let mut problems = ParamErrors::new();
        for error in validator.iter_errors(arguments) {
            problems.push(
                error.instance_path().to_string(),
                Problem::Invalid(error.to_string()),
            );
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }

    fn call(
        &self,
        tool: &ExternalTool,
        arguments: Value,
        _turn: Turn,
    ) -> BoxFuture<'static, ExternalOutput> {
        let name = tool.name.clone();
        Box::pin(async move {
            match name.as_str() {
                "ext__search" => {
                    ExternalOutput::Result(ToolResult::success(json!({ "found": arguments["q"] })))
                }
                _ => ExternalOutput::Raw(json!({ "anything": true })),
            }
        })
    }
}

#[tokio::test]
async fn prefixed_names_go_through_the_proxy_and_the_same_path() {
    // External tools are reached like abilities: pinned here.
    let dispatcher = widened_builder()
        .external_tools(Arc::new(FakeProxy))
        .pin(Channel::Chat, ["ext__search", "ext__raw"])
        .build();
    dispatcher
        .policy()
        .set(Channel::Chat, "ext__search", Setting::Allow)
        .unwrap();
    dispatcher
        .policy()
        .set(Channel::Chat, "ext__raw", Setting::Allow)
        .unwrap();
    let turn = turn(Channel::Chat, "resolve-external");

    let found = call(
        &dispatcher,
        &turn,
        "ext__search",
        json!({ "q": "rust", "act_summary": "searching" }),
    )
    .await;
    assert_eq!(
        found.envelope,
        "[ext__search(status=success)]\n{\"found\":\"rust\"}\n[end:ext__search]"
    );
    assert_eq!(found.record().decision, GateDecision::Allowed);
    assert!(
        call(&dispatcher, &turn, "ext__search", json!({ "q": "rust" }))
            .await
            .record()
            .reused
    );

    let invalid = call(&dispatcher, &turn, "ext__search", json!({ "q": 1 })).await;
    assert_eq!(envelope(&invalid).code(), Some("invalid-arguments"));

    let raw = call(&dispatcher, &turn, "ext__raw", json!({ "q": "x" })).await;
    assert_eq!(envelope(&raw).code(), Some("non-canonical-result"));

    let unknown = call(&dispatcher, &turn, "ext__serch", json!({})).await;
    assert_eq!(
        unknown.result.as_error().unwrap().valid_values(),
        ["ext__search"]
    );

    dispatcher
        .policy()
        .set(Channel::Chat, "ext__search", Setting::Deny)
        .unwrap();
    let denied = call(&dispatcher, &turn, "ext__search", json!({ "q": "again" })).await;
    assert_eq!(denied.record().decision, GateDecision::Denied);
    assert!(
        dispatcher
            .policy_surface()
            .iter()
            .any(|entry| entry.permission == "ext__raw")
    );
}
