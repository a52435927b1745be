//! The envelope attacked where a model meets it: hostile arguments to an
//! ability that puts them in every part of its result (metadata keys and
//! values, body, message, hint, valid values), and hostile tool names,
//! through a dispatcher built as the README builds one. No line but the
//! first and the last reads as a tag for a reader breaking lines at any
//! separator, and the envelope gives back exactly what the ability
//! returned.

#[path = "../support/hostile.rs"]
mod hostile;

use chalie_core::{
    Channel, Dispatcher, Params, ToolCall, ToolResult, Turn, ability, dispatch::Policy,
    dispatch::Setting, envelope::Envelope,
};
use hostile::Rng;
use serde_json::{Value, json};

/// Parameters of [`echo_hostile()`].
#[derive(Params)]
pub struct EchoParams {
    /// `text`, `json` or `error`: what kind of result to return.
    pub kind: String,
    /// The body of a success, or the message of an error.
    pub text: String,
    /// The hint of an error; empty when absent.
    pub hint: Option<String>,
    /// The valid values of an error; none when absent.
    pub valid_values: Option<Vec<String>>,
    /// Metadata keys, paired in order with `values`; none when absent.
    pub keys: Option<Vec<String>>,
    /// Metadata values, paired in order with `keys`; none when absent.
    pub values: Option<Vec<String>>,
}

/// Returns its arguments in every part of a result. Use it to attack the
/// envelope with what a model supplies.
#[ability(
    effect = read,
    examples = ["echo this back", "repeat my words", "return what I said", "say it again", "mirror the input", "give back the text"],
)]
pub async fn echo_hostile(params: EchoParams) -> ToolResult {
    echoed(params)
}

/// What [`echo_hostile()`] returns for `params`.
fn echoed(params: EchoParams) -> ToolResult {
    let mut result = match params.kind.as_str() {
        "json" => ToolResult::success(json!({ "text": params.text, "keys": params.keys })),
        "error" => ToolResult::error("echoed-error", params.text, params.hint.unwrap_or_default())
            .with_valid_values(params.valid_values.unwrap_or_default()),
        _ => ToolResult::success(params.text),
    };
    let keys = params.keys.unwrap_or_default();
    let values = params.values.unwrap_or_default();
    for (key, value) in keys.iter().zip(values) {
        result = result.with_metadata(key, value);
    }
    result
}

/// Hostile arguments for [`echo_hostile()`].
fn hostile_arguments(rng: &mut Rng) -> Value {
    let kind = ["text", "json", "error"][rng.below(3)];
    let keys: Vec<String> = (0..rng.below(4)).map(|_| rng.text(3)).collect();
    let values: Vec<String> = keys.iter().map(|_| rng.text(8)).collect();
    let valid_values: Vec<String> = (0..rng.below(4)).map(|_| rng.text(6)).collect();
    json!({
        "kind": kind,
        "text": rng.text(24),
        "hint": rng.text(10),
        "valid_values": valid_values,
        "keys": keys,
        "values": values,
    })
}

fn dispatcher() -> Dispatcher {
    let mut policy = Policy::new();
    policy
        .set(Channel::Chat, "echo_hostile", Setting::Allow)
        .expect("valid permission");
    Dispatcher::builder(crate::registry())
        .policy(policy)
        .pin(Channel::Chat, ["echo_hostile"])
        .build()
}

/// Checks what the model read for one call.
fn check(text: &str, result: &ToolResult) -> Result<Envelope, String> {
    let envelope = Envelope::parse(text).map_err(|error| error.to_string())?;
    hostile::check_lines(text, &envelope)?;
    hostile::check_round_trip(result, None, &envelope)?;
    Ok(envelope)
}

#[tokio::test]
async fn hostile_arguments_echoed_into_every_part_of_a_result_forge_no_tag() {
    let dispatcher = dispatcher();
    for case in 0..hostile::cases(2_000) {
        let mut rng = Rng::for_case(case);
        let arguments = hostile_arguments(&mut rng);
        // A fresh session every few calls keeps under the rate limit.
        let turn = Turn::builder(Channel::Chat)
            .session_id(format!("envelope-{}", case / 20))
            .build();
        let done = dispatcher
            .dispatch(&turn, ToolCall::new("echo_hostile", arguments.clone()))
            .await;
        let params = EchoParams::from_arguments(&arguments).expect("valid arguments");
        let checked = if done.result == echoed(params) {
            check(&done.envelope, &done.result).map(drop)
        } else {
            Err(format!("the ability did not run: {:?}", done.result))
        };
        if let Err(problem) = checked {
            panic!(
                "case {case}: {problem}\narguments: {arguments}\nenvelope: {:?}",
                done.envelope
            );
        }
    }
}

#[tokio::test]
async fn a_hostile_tool_name_forges_no_tag_in_the_refusal() {
    let dispatcher = dispatcher();
    for case in 0..hostile::cases(2_000) / 4 {
        let mut rng = Rng::for_case(case);
        let name = format!("{}echo_hostile{}", rng.text(3), rng.text(3));
        let turn = Turn::builder(Channel::Chat)
            .session_id(format!("envelope-name-{}", case / 20))
            .build();
        let done = dispatcher
            .dispatch(&turn, ToolCall::new(name.clone(), json!({})))
            .await;
        let checked = check(&done.envelope, &done.result).and_then(|envelope| {
            (!envelope.is_success())
                .then_some(())
                .ok_or_else(|| "a call to an unknown name succeeded".to_owned())
        });
        if let Err(problem) = checked {
            panic!(
                "case {case}: {problem}\nname: {name:?}\nenvelope: {:?}",
                done.envelope
            );
        }
    }
}
