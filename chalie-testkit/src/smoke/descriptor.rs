//! Static checks: the descriptor every provider receives, and the naming
//! and description contract.

use chalie_core::{
    AbilityEntry, Channel, descriptor::AssembleOptions, descriptor::Provider, descriptor::assemble,
};
use serde_json::{Value, json};

pub(super) fn descriptor_problems(entry: &AbilityEntry) -> Vec<String> {
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

pub(super) fn contract_problems(entry: &AbilityEntry) -> Vec<String> {
    let spec = entry.spec();
    let mut problems = Vec::new();
    if !chalie_rules::examples_ok(spec.examples().len()) {
        problems.push(format!(
            "{} example phrases; the contract is {} to {}",
            spec.examples().len(),
            chalie_rules::EXAMPLES_MIN,
            chalie_rules::EXAMPLES_MAX
        ));
    }
    if spec.summary().split_whitespace().count() < 5 {
        problems.push(format!(
            "the summary `{}` is too short to say what it does and when to use it",
            spec.summary()
        ));
    }
    problems.extend(name_problem(spec.name()));
    problems
}

/// The naming contract, the rule `#[ability]` enforces (a registry may
/// hold entries that did not come through the macro).
fn name_problem(name: &str) -> Option<String> {
    (!chalie_rules::is_valid_name(name)).then(|| {
        format!(
            "the name `{name}` is not snake_case of at most {} characters",
            chalie_rules::MAX_NAME_LEN
        )
    })
}

#[cfg(test)]
mod tests {
    /// The smoke check flags exactly the names the macros reject (it once
    /// let a leading digit through).
    #[test]
    fn the_name_check_is_the_macro_rule() {
        for (name, valid) in chalie_rules::NAME_CASES {
            assert_eq!(super::name_problem(name).is_none(), *valid, "{name}");
        }
        assert!(super::name_problem(&"a".repeat(65)).is_some());
    }
}
