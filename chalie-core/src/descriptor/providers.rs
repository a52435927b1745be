//! One descriptor, rendered for each provider's tool API.

use serde_json::{Map, Value, json};

use crate::ability::Effect;
use crate::contracts::build::states_default;
use crate::descriptor::ToolDescriptor;

/// A model API whose tool definitions chalie renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI chat completions, `strict: true`.
    OpenAiChat,
    /// OpenAI responses, `strict: true`.
    OpenAiResponses,
    /// Anthropic messages (`input_schema`, and `input_examples` when the
    /// ability declares them).
    Anthropic,
    /// Gemini (`parametersJsonSchema`).
    Gemini,
    /// Model Context Protocol (`inputSchema`).
    Mcp,
}

impl Provider {
    /// Every provider, for tests and smoke checks.
    pub const ALL: [Provider; 5] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Mcp,
    ];
}

impl ToolDescriptor {
    /// The tool definition as `provider` expects it.
    ///
    /// Input examples are Anthropic's field alone: OpenAI's strict mode
    /// rejects a definition with fields it does not know, and Gemini and
    /// MCP have no such field, so they are left out there.
    pub fn render(&self, provider: Provider) -> Value {
        let name = self.name();
        let description = self.description();
        // An external tool's schema goes as its server wrote it: strict mode
        // would make its optional fields nullable, and its server may refuse
        // the `null`s a model then sends.
        let (parameters, strict) = if self.strict() {
            (strict_schema(self.parameters()), true)
        } else {
            (self.parameters().clone(), false)
        };
        match provider {
            Provider::OpenAiChat => json!({
                "type": "function",
                "function": {
                    "name": name,
                    "description": description,
                    "parameters": parameters,
                    "strict": strict,
                }
            }),
            Provider::OpenAiResponses => json!({
                "type": "function",
                "name": name,
                "description": description,
                "parameters": parameters,
                "strict": strict,
            }),
            Provider::Anthropic => {
                let mut tool = json!({
                    "name": name,
                    "description": description,
                    "input_schema": self.parameters(),
                });
                if !self.input_examples().is_empty()
                    && let Value::Object(tool) = &mut tool
                {
                    tool.insert(
                        "input_examples".into(),
                        Value::Array(self.input_examples().to_vec()),
                    );
                }
                tool
            }
            Provider::Gemini => json!({
                "name": name,
                "description": description,
                "parametersJsonSchema": self.parameters(),
            }),
            Provider::Mcp => json!({
                "name": name,
                "description": description,
                "inputSchema": self.parameters(),
                "annotations": {
                    "readOnlyHint": self.effect() == Effect::Read,
                    "destructiveHint": self.effect() == Effect::Write,
                },
            }),
        }
    }
}

/// The schema in OpenAI's strict dialect: every object lists all its
/// properties in `required` with `additionalProperties: false`; a property
/// that was optional accepts `null` instead; `default`, which strict mode
/// rejects, moves into the description unless the description states it.
pub fn strict_schema(schema: &Value) -> Value {
    let mut schema = schema.clone();
    make_strict(&mut schema);
    schema
}

fn make_strict(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(default) = map.remove("default") {
        let sentence = format!("Default: {default}.");
        let description = match map.get("description").and_then(Value::as_str) {
            Some(text) if states_default(text, &default) => None,
            Some(text) if !text.is_empty() => Some(format!("{text} {sentence}")),
            _ => Some(sentence),
        };
        if let Some(description) = description {
            map.insert("description".into(), Value::String(description));
        }
    }
    if let Some(items) = map.get_mut("items") {
        make_strict(items);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(variants)) = map.get_mut(key) {
            variants.iter_mut().for_each(make_strict);
        }
    }
    if map.get("type").and_then(Value::as_str) != Some("object") {
        return;
    }
    let originally_required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let mut all = Vec::new();
    if let Value::Object(properties) = properties {
        for (name, property) in properties.iter_mut() {
            make_strict(property);
            if !originally_required.contains(name) {
                make_nullable(property);
            }
            all.push(Value::String(name.clone()));
        }
    }
    map.insert("required".into(), Value::Array(all));
    map.insert("additionalProperties".into(), Value::Bool(false));
}

fn make_nullable(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match map.get_mut("type") {
        Some(Value::String(kind)) => {
            let kind = std::mem::take(kind);
            map.insert("type".into(), json!([kind, "null"]));
        }
        Some(Value::Array(kinds)) => {
            if !kinds.contains(&json!("null")) {
                kinds.push(json!("null"));
            }
        }
        _ => {
            let description = map.remove("description");
            let inner = Value::Object(std::mem::take(map));
            map.insert("anyOf".into(), json!([inner, { "type": "null" }]));
            if let Some(description) = description {
                map.insert("description".into(), description);
            }
        }
    }
}
