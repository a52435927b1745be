//! Clamped fields and fields that belong to some actions only, through the
//! schema, every provider's rendering and the dispatcher.

use chalie_core::{
    Channel, Dispatcher, Params, ToolCall, ToolResult, Turn, descriptor::AbilityExt,
    descriptor::AssembleOptions, descriptor::Provider, dispatch::Policy, dispatch::Setting,
    envelope::render_envelope, registry, result::Body,
};
use serde_json::{Value, json};

use super::abilities::{AudioAction, AudioParams, audio};

fn dispatcher() -> Dispatcher {
    let mut policy = Policy::new();
    policy
        .set(Channel::Chat, "audio.*", Setting::Allow)
        .unwrap();
    Dispatcher::builder(registry().unwrap().clone())
        .policy(policy)
        .pin(Channel::Chat, ["audio"])
        .build()
}

async fn call(arguments: Value) -> ToolResult {
    let turn = Turn::builder(Channel::Chat).build();
    dispatcher()
        .dispatch(&turn, ToolCall::new("audio", arguments))
        .await
        .result
}

/// The body of a successful call, as the ability returned it.
async fn body(arguments: Value) -> Value {
    let result = call(arguments).await;
    match result.body() {
        Some(Body::Json(body)) => body.clone(),
        other => panic!("expected a JSON body, got {other:?}"),
    }
}

#[test]
fn the_schema_tells_the_model_what_is_clamped_and_for_which_action() {
    let properties = &AudioParams::schema()["properties"];
    assert_eq!(
        properties["bpm"]["description"],
        "Beats per minute of the composed clip. Clamped to 40–220. Only for action `generate`."
    );
    assert_eq!(
        properties["duration_seconds"]["description"],
        "Length of the clip in seconds; ignored if 0 or less. Clamped to at most 30."
    );
    assert_eq!(
        properties["language"]["description"],
        "The spoken language, e.g. `it`. Only for action `transcribe`."
    );
    // A value outside the range is accepted, so no validating client may
    // reject it on the schema's word.
    for field in ["bpm", "duration_seconds"] {
        let property = properties[field].as_object().unwrap();
        assert!(!property.contains_key("minimum"), "{property:?}");
        assert!(!property.contains_key("maximum"), "{property:?}");
    }
    assert_eq!(
        AudioParams::schema()["required"],
        json!(["action", "prompt"])
    );
}

#[test]
fn every_provider_schema_carries_the_sentences() {
    let descriptor = audio::descriptor(AssembleOptions::default());
    for provider in Provider::ALL {
        let rendered = descriptor.render(provider);
        let parameters = match provider {
            Provider::OpenAiChat => &rendered["function"]["parameters"],
            Provider::OpenAiResponses => &rendered["parameters"],
            Provider::Anthropic => &rendered["input_schema"],
            Provider::Gemini => &rendered["parametersJsonSchema"],
            Provider::Mcp => &rendered["inputSchema"],
        };
        let bpm = parameters["properties"]["bpm"]["description"]
            .as_str()
            .unwrap();
        assert!(
            bpm.contains("Clamped to 40–220.") && bpm.contains("Only for action `generate`."),
            "{provider:?}: {bpm}"
        );
        let language = parameters["properties"]["language"]["description"]
            .as_str()
            .unwrap();
        assert!(
            language.contains("Only for action `transcribe`."),
            "{provider:?}: {language}"
        );
    }
}

#[tokio::test]
async fn out_of_range_numbers_are_clamped_not_rejected() {
    let generated = body(
        json!({ "action": "generate", "prompt": "drums", "bpm": 300, "duration_seconds": 90 }),
    )
    .await;
    assert_eq!(
        (&generated["bpm"], &generated["duration_seconds"]),
        (&json!(220), &json!(30.0))
    );
    let slow = body(json!({ "action": "generate", "prompt": "drums", "bpm": 10 })).await;
    assert_eq!(slow["bpm"], 40);
    // Inside the range a value is kept as sent, fractions included.
    let kept = body(
        json!({ "action": "generate", "prompt": "drums", "bpm": 128, "duration_seconds": 12.5 }),
    )
    .await;
    assert_eq!(
        (&kept["bpm"], &kept["duration_seconds"]),
        (&json!(128), &json!(12.5))
    );
    // Beyond what a `u32` holds is still a number to clamp.
    let huge = body(json!({ "action": "generate", "prompt": "drums", "bpm": 1e12 })).await;
    assert_eq!(huge["bpm"], 220);
    // Below the field's (absent) lower bound nothing is clamped; the
    // ability ignores it, as its description says.
    let ignored =
        body(json!({ "action": "generate", "prompt": "drums", "duration_seconds": -5 })).await;
    assert_eq!(ignored["duration_seconds"], Value::Null);
}

#[tokio::test]
async fn a_clamped_field_still_rejects_what_is_not_a_number() {
    let result = call(json!({ "action": "generate", "prompt": "drums", "bpm": "fast" })).await;
    let error = result.as_error().unwrap();
    assert_eq!(error.code().as_str(), "invalid-arguments");
    assert_eq!(
        error.message(),
        "`bpm` must be an integer, not the string `fast`"
    );
}

#[tokio::test]
async fn a_field_sent_with_another_action_names_the_action_it_belongs_to() {
    let result = call(json!({ "action": "transcribe", "prompt": "memo.ogg", "bpm": 120 })).await;
    assert_eq!(
        render_envelope("audio", Some("transcribe"), &result),
        "[audio(status=error, code=invalid-arguments, action=transcribe)]\n\
         `bpm` is only for action `generate`, not `transcribe`\n\
         hint: leave `bpm` out of action `transcribe`, or call action `generate` if that is what you meant\n\
         [end:audio]"
    );
    // Every misplaced field at once, with one hint naming them all.
    let result =
        call(json!({ "action": "generate", "prompt": "drums", "bpm": 90, "language": "it" })).await;
    let error = result.as_error().unwrap();
    assert_eq!(
        error.message(),
        "`language` is only for action `transcribe`, not `generate`"
    );
    let result = call(json!({ "action": "transcribe", "prompt": "memo.ogg", "bpm": 90, "duration_seconds": "long" })).await;
    let error = result.as_error().unwrap();
    assert_eq!(
        error.message(),
        "`bpm` is only for action `generate`, not `transcribe`\n`duration_seconds` must be a number, not the string `long`"
    );
    assert_eq!(
        error.hint(),
        "fix the fields named above and call again with the same tool"
    );
}

#[tokio::test]
async fn a_field_left_out_or_null_belongs_to_every_action() {
    // Strict providers send `null` for every field the model leaves out.
    let transcribed = body(
        json!({ "action": "transcribe", "prompt": "memo.ogg", "bpm": null, "language": "it" }),
    )
    .await;
    assert_eq!(
        (
            &transcribed["action"],
            &transcribed["bpm"],
            &transcribed["language"]
        ),
        (&json!("Transcribe"), &Value::Null, &json!("it"))
    );
    let generated =
        body(json!({ "action": "generate", "prompt": "drums", "bpm": 90, "language": null })).await;
    assert_eq!(generated["bpm"], 90);
}

#[test]
fn the_parser_checks_the_action_without_the_dispatcher() {
    let error = AudioParams::from_arguments(
        &json!({ "action": "transcribe", "prompt": "x", "bpm": 100, "language": "it" }),
    )
    .err()
    .unwrap();
    assert_eq!(
        error.into_tool_result().as_error().unwrap().hint(),
        "leave `bpm` out of action `transcribe`, or call action `generate` if that is what you meant"
    );
    // An unknown action is the action field's own error, not the bpm's.
    let error =
        AudioParams::from_arguments(&json!({ "action": "remix", "prompt": "x", "bpm": 100 }))
            .err()
            .unwrap();
    assert_eq!(
        error.to_string(),
        "`action` must be one of `generate`, `transcribe`, not `remix`"
    );
}

/// `AudioParams`' `bpm` and `action`, with the action declared last.
#[derive(Params)]
pub struct ActionLastParams {
    /// Beats per minute of the composed clip.
    #[param(min = 40, max = 220, actions = [generate])]
    pub bpm: Option<u32>,
    /// `generate` or `transcribe`.
    pub action: AudioAction,
}

#[test]
fn a_field_is_checked_against_an_action_declared_after_it() {
    let parsed = ActionLastParams::from_arguments(&json!({ "bpm": 100, "action": "generate" }))
        .expect("bpm belongs to generate");
    assert_eq!(
        (parsed.bpm, parsed.action),
        (Some(100), AudioAction::Generate)
    );

    let error = ActionLastParams::from_arguments(&json!({ "bpm": 100, "action": "transcribe" }))
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "`bpm` is only for action `generate`, not `transcribe`"
    );
    // An action the field does not accept is its own one error, and the
    // bpm is then read as if it belonged.
    let error = ActionLastParams::from_arguments(&json!({ "bpm": 100, "action": "remix" }))
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "`action` must be one of `generate`, `transcribe`, not `remix`"
    );
    let error = ActionLastParams::from_arguments(&json!({ "bpm": 10, "action": "remix" }))
        .err()
        .unwrap();
    assert_eq!(
        error.to_string(),
        "`bpm` must be between 40 and 220, not the number `10`\n`action` must be one of `generate`, `transcribe`, not `remix`"
    );
}

/// Every field sent, in the schema's order (the order the reader takes
/// each key without looking for it): each value lands in its own field,
/// clamped where declared, and a field of another action in the middle
/// of the list does not shift the fields after it.
#[tokio::test]
async fn every_field_sent_in_order_reads_each_into_its_own_field() {
    let sent = body(json!({
        "action": "generate", "prompt": "drums", "bpm": 300, "duration_seconds": 50, "language": null,
    }))
    .await;
    assert_eq!(
        sent,
        json!({
            "action": "Generate", "prompt": "drums", "bpm": 220, "duration_seconds": 30.0, "language": null,
        })
    );
    let result = call(json!({
        "action": "transcribe", "prompt": "memo.ogg", "bpm": 90, "duration_seconds": "long", "language": "it",
    }))
    .await;
    assert_eq!(
        result.as_error().unwrap().message(),
        "`bpm` is only for action `generate`, not `transcribe`\n`duration_seconds` must be a number, not the string `long`"
    );
    let sent = body(json!({
        "action": "transcribe", "prompt": "memo.ogg", "bpm": null, "duration_seconds": 12, "language": "it",
    }))
    .await;
    assert_eq!(sent["duration_seconds"], 12.0);
    assert_eq!(sent["language"], "it");
    assert_eq!(sent["prompt"], "memo.ogg");
}
