//! The checks a careful reviewer runs on every new ability, in one call.

use std::fmt;

use chalie_core::{
    AbilityEntry, AssembleOptions, Channel, Dispatcher, Envelope, Policy, Profile, Provider,
    Registry, Setting, ToolCall, Turn, assemble,
};
use serde_json::{Map, Value, json};

/// One problem found by [`smoke`].
#[derive(Debug, Clone, PartialEq)]
pub struct SmokeFinding {
    /// The ability.
    pub ability: String,
    /// Which check: `descriptor`, `contract`, `happy-path`, `invalid-input`, `exposure`.
    pub check: &'static str,
    /// What is wrong, and what the model would have seen.
    pub message: String,
}

/// Everything [`smoke`] found.
#[derive(Debug, Clone, Default)]
pub struct SmokeReport {
    /// How many abilities were checked.
    pub checked: usize,
    /// The problems; empty when all is well.
    pub findings: Vec<SmokeFinding>,
}

impl SmokeReport {
    /// Panics listing every finding, unless there are none.
    #[track_caller]
    pub fn assert_clean(&self) {
        assert!(self.findings.is_empty(), "{self}");
    }
}

impl fmt::Display for SmokeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "smoke: {} abilities checked, {} findings",
            self.checked,
            self.findings.len()
        )?;
        for finding in &self.findings {
            writeln!(
                f,
                "- {} [{}]: {}",
                finding.ability, finding.check, finding.message
            )?;
        }
        Ok(())
    }
}

/// Runs the smoke checks over every ability in `registry`:
/// - its descriptor renders valid for every provider (object root,
///   properties present, closed objects, OpenAI strict lists every
///   property as required);
/// - its name, summary and examples meet the contract;
/// - a call with arguments built from its schema does not panic and gives
///   a well-formed envelope;
/// - a call with an unknown field gives the self-correcting
///   `invalid-arguments` error, never a panic;
/// - it is not exposed by a profile that does not enable its toolset.
pub async fn smoke(registry: &Registry) -> SmokeReport {
    let mut report = SmokeReport::default();
    let mut policy = Policy::new();
    for entry in registry.iter() {
        let _ = policy.set(Channel::Chat, entry.name(), Setting::Allow);
        for action in entry.spec().actions() {
            let _ = policy.set(
                Channel::Chat,
                &format!("{}.{}", entry.name(), action.name()),
                Setting::Allow,
            );
        }
    }
    let dispatcher = Dispatcher::builder(registry.clone())
        .policy(policy)
        .without_rate_limit()
        .build();
    for entry in registry.iter() {
        report.checked += 1;
        let mut finding = |check: &'static str, message: String| {
            report.findings.push(SmokeFinding {
                ability: entry.name().to_owned(),
                check,
                message,
            });
        };
        for message in descriptor_problems(entry) {
            finding("descriptor", message);
        }
        for message in contract_problems(entry) {
            finding("contract", message);
        }
        let turn = Turn::builder(Channel::Chat)
            .session_id(format!("smoke-{}", entry.name()))
            .build();
        let arguments = sample_arguments(entry);
        let happy = dispatcher
            .dispatch(&turn, ToolCall::new(entry.name(), arguments.clone()))
            .await;
        match Envelope::parse(&happy.envelope) {
            Err(error) => finding(
                "happy-path",
                format!("the envelope does not parse ({error}):\n{}", happy.envelope),
            ),
            Ok(envelope)
                if matches!(
                    envelope.code(),
                    Some("ability-panicked" | "non-canonical-result" | "invalid-arguments")
                ) =>
            {
                finding(
                    "happy-path",
                    format!(
                        "called with {arguments}, the model read:\n{}",
                        happy.envelope
                    ),
                );
            }
            Ok(_) => {}
        }
        let mut invalid = arguments;
        if let Value::Object(map) = &mut invalid {
            map.insert("smoke_unknown_field".into(), json!(1));
        }
        let bad = dispatcher
            .dispatch(&turn, ToolCall::new(entry.name(), invalid))
            .await;
        let bad_envelope = Envelope::parse(&bad.envelope).ok();
        let self_correcting = bad_envelope.as_ref().is_some_and(|envelope| {
            envelope.code() == Some("invalid-arguments")
                && envelope.content.contains("smoke_unknown_field")
                && envelope.hint().is_some()
        });
        if !self_correcting {
            finding(
                "invalid-input",
                format!(
                    "an unknown field did not give a self-correcting `invalid-arguments` error:\n{}",
                    bad.envelope
                ),
            );
        }
        // Unavailable unless configured: a profile enabling nothing (and no
        // always-on core) must not expose it; one enabling its toolset must.
        let nothing = Profile::new().with_core(Vec::<String>::new());
        if nothing.allows(entry.spec()) {
            finding(
                "exposure",
                format!(
                    "visible in a profile that enables no toolsets (toolset `{}`)",
                    entry.spec().toolset()
                ),
            );
        }
        if !nothing
            .with_toolset(entry.spec().toolset())
            .allows(entry.spec())
        {
            finding(
                "exposure",
                format!(
                    "hidden even by a profile that enables its toolset `{}`",
                    entry.spec().toolset()
                ),
            );
        }
    }
    report
}

/// [`smoke`] over the abilities of one toolset.
pub async fn smoke_toolset(registry: &Registry, toolset: &str) -> SmokeReport {
    smoke(&registry.filter(|entry| entry.spec().toolset() == toolset)).await
}

fn descriptor_problems(entry: &AbilityEntry) -> Vec<String> {
    let mut problems = Vec::new();
    for channel in [Channel::Chat, Channel::Subconscious, Channel::External] {
        let descriptor = assemble(entry, AssembleOptions::for_channel(channel));
        for provider in Provider::ALL {
            let rendered = descriptor.render(provider);
            let schema = match provider {
                Provider::OpenAiChat => &rendered["function"]["parameters"],
                Provider::OpenAiResponses => &rendered["parameters"],
                Provider::Anthropic => &rendered["input_schema"],
                Provider::Gemini => &rendered["parametersJsonSchema"],
                Provider::Mcp => &rendered["inputSchema"],
            };
            let strict = matches!(provider, Provider::OpenAiChat | Provider::OpenAiResponses);
            check_object(schema, strict, &format!("{provider:?}"), &mut problems);
        }
    }
    problems.dedup();
    problems
}

fn check_object(schema: &Value, strict: bool, context: &str, problems: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        problems.push(format!("{context}: a schema is not an object"));
        return;
    };
    let text = schema.to_string();
    if text.contains("$ref") || text.contains("$defs") {
        problems.push(format!(
            "{context}: the schema has references; providers want it inlined"
        ));
    }
    let is_object = map.get("type") == Some(&json!("object"))
        || map
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|kinds| kinds.contains(&json!("object")));
    if is_object {
        let Some(properties) = map.get("properties").and_then(Value::as_object) else {
            problems.push(format!("{context}: an object without `properties`"));
            return;
        };
        if map.get("additionalProperties") != Some(&json!(false)) {
            problems.push(format!(
                "{context}: an object without `additionalProperties: false`"
            ));
        }
        if strict {
            let required: Vec<&str> = map
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if properties
                .keys()
                .any(|key| !required.contains(&key.as_str()))
            {
                problems.push(format!(
                    "{context}: strict mode needs every property in `required`"
                ));
            }
        }
        for property in properties.values() {
            check_object(property, strict, context, problems);
        }
    }
    if let Some(items) = map.get("items") {
        check_object(items, strict, context, problems);
    }
}

fn contract_problems(entry: &AbilityEntry) -> Vec<String> {
    let spec = entry.spec();
    let mut problems = Vec::new();
    if !(6..=8).contains(&spec.examples().len()) {
        problems.push(format!(
            "{} example phrases; the contract is 6 to 8",
            spec.examples().len()
        ));
    }
    if spec.summary().split_whitespace().count() < 5 {
        problems.push(format!(
            "the summary `{}` is too short to say what it does and when to use it",
            spec.summary()
        ));
    }
    let name_ok = spec.name().len() <= 64
        && spec.name().split('_').all(|segment| {
            !segment.is_empty()
                && segment
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
    if !name_ok {
        problems.push(format!(
            "the name `{}` is not snake_case of at most 64 characters",
            spec.name()
        ));
    }
    problems
}

/// Arguments that satisfy the schema: each required field gets a value of
/// its type (the first enum value, the minimum, a short string), and the
/// first declared action with its required fields.
fn sample_arguments(entry: &AbilityEntry) -> Value {
    let schema = entry.parameters();
    let mut arguments = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut wanted: Vec<&str> = required.clone();
    if let Some(action) = entry.spec().actions().first() {
        arguments.insert("action".into(), json!(action.name()));
        wanted.extend(action.required().iter().copied());
    }
    if let Some(properties) = properties {
        for name in wanted {
            if arguments.contains_key(name) {
                continue;
            }
            if let Some(property) = properties.get(name) {
                arguments.insert(name.to_owned(), sample_value(property));
            }
        }
    }
    Value::Object(arguments)
}

fn sample_value(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|values| values.first())
    {
        return first.clone();
    }
    if let Some(default) = schema.get("default") {
        return default.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => json!("example"),
        Some("integer") => json!(schema.get("minimum").and_then(Value::as_i64).unwrap_or(1)),
        Some("number") => json!(schema.get("minimum").and_then(Value::as_f64).unwrap_or(1.0)),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => {
            let mut object = Map::new();
            let properties = schema.get("properties").and_then(Value::as_object);
            for name in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if let Some(property) = properties.and_then(|properties| properties.get(name)) {
                    object.insert(name.to_owned(), sample_value(property));
                }
            }
            Value::Object(object)
        }
        _ => Value::Null,
    }
}
