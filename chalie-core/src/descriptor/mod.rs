//! The sealed assembler: the one place that builds what the model sees.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::ability::{Ability, Effect};
use crate::dispatch::ExternalTool;
use crate::registry::AbilityEntry;

// The per-provider rendering of a descriptor, kept beside it.
mod providers;

pub use providers::{Provider, strict_schema};

/// The parameter every call may carry: a short line shown to the user.
pub const ACT_SUMMARY_FIELD: &str = "act_summary";
/// The parameter a call sets to run in the background, where allowed.
pub const ASYNC_FIELD: &str = "async";

/// What the assembled descriptor depends on besides the ability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AssembleOptions {
    /// Whether the channel allows background calls, which adds `async`.
    pub background_calls: bool,
}

impl AssembleOptions {
    /// The options for `channel`.
    pub fn for_channel(channel: crate::Channel) -> Self {
        Self {
            background_calls: channel.allows_background_calls(),
        }
    }
}

/// The full tool definition the model sees, in a provider-neutral form.
/// Render it for a provider with [`ToolDescriptor::render`].
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    name: Cow<'static, str>,
    description: String,
    parameters: Value,
    effect: Effect,
    /// Whether the schema keeps its meaning in OpenAI's strict dialect: an
    /// ability's does (its reader takes `null` for an absent optional
    /// field), an external tool's need not (its server may refuse `null`).
    strict: bool,
    /// The ability's input examples, rendered for Anthropic only.
    input_examples: Vec<Value>,
}

impl ToolDescriptor {
    /// The tool name: an ability's, or an external tool's qualified
    /// `server__tool`.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The description (the ability's summary).
    pub fn description(&self) -> &str {
        &self.description
    }
    /// The parameters' JSON Schema, with the framework fields injected.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }
    /// Read or write.
    pub fn effect(&self) -> Effect {
        self.effect
    }
    /// Whether providers with a strict mode (OpenAI) may be asked to hold
    /// the model to the schema: `false` for an external tool, whose schema
    /// chalie did not write and cannot rewrite without changing what its
    /// server accepts.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// The ability's input examples (`#[ability(input_examples = [...])]`),
    /// as the arguments of whole calls; rendered for Anthropic only.
    pub fn input_examples(&self) -> &[Value] {
        &self.input_examples
    }
}

/// Assembles the descriptor of `entry`. Deterministic: the same input gives
/// the same bytes, with or without a live request.
pub fn assemble(entry: &AbilityEntry, options: AssembleOptions) -> ToolDescriptor {
    let spec = entry.spec();
    let mut parameters = entry.parameters().clone();
    let object = match &mut parameters {
        Value::Object(object) => object,
        other => {
            *other = json!({ "type": "object", "properties": {}, "required": [], "additionalProperties": false });
            other.as_object_mut().expect("just set to an object")
        }
    };
    let properties = object
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        if !spec.actions().is_empty() {
            constrain_action(
                properties,
                spec.actions().iter().map(|action| action.name()).collect(),
            );
        }
        // Internal tools (discovery, memory, the scratchpad) answer at once,
        // unasked: there is no wait to narrate (the session shows their
        // tooltip), and a receipt would only delay an effect needed in the
        // same turn. The framework fields cost tokens on every request, so
        // they appear only where they act.
        if !spec.internal() {
            insert_framework_fields(properties, options);
        }
    }
    ToolDescriptor {
        name: Cow::Borrowed(spec.name()),
        description: spec.summary().to_owned(),
        parameters,
        effect: spec.effect(),
        input_examples: spec
            .input_examples()
            .iter()
            .map(|example| example.to_json())
            .collect(),
        strict: true,
    }
}

/// Assembles the descriptor of an external tool (an MCP server's, say)
/// the way a session offers it: its server's input schema, plus the
/// framework fields every non-internal call may carry (`act_summary`, and
/// `async` where the channel runs calls in the background), which the
/// dispatcher takes off before the server's schema is checked. Rendered
/// without strict mode (see [`ToolDescriptor::strict`]).
pub fn assemble_external(tool: &ExternalTool, options: AssembleOptions) -> ToolDescriptor {
    let mut parameters = tool.input_schema.clone();
    if !parameters.is_object() {
        parameters = json!({ "type": "object", "properties": {} });
    }
    if let Value::Object(object) = &mut parameters {
        let properties = object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(properties) = properties {
            insert_framework_fields(properties, options);
        }
    }
    ToolDescriptor {
        name: Cow::Owned(tool.name.clone()),
        description: tool.description.clone(),
        parameters,
        effect: tool.effect,
        strict: false,
        input_examples: Vec::new(),
    }
}

/// `act_summary`, and `async` where the channel allows background calls.
fn insert_framework_fields(properties: &mut Map<String, Value>, options: AssembleOptions) {
    properties.insert(
        ACT_SUMMARY_FIELD.into(),
        json!({
            "type": "string",
            "description": "A short line shown to the user while this runs, in their language."
        }),
    );
    if options.background_calls {
        properties.insert(
            ASYNC_FIELD.into(),
            json!({
                "type": "boolean",
                "description": "true: run in the background; the result comes later."
            }),
        );
    }
}

/// A string `action` field gets the declared actions as its `enum`.
fn constrain_action(properties: &mut Map<String, Value>, actions: Vec<&str>) {
    if let Some(Value::Object(action)) = properties.get_mut("action")
        && action.get("type").and_then(Value::as_str) == Some("string")
        && !action.contains_key("enum")
    {
        action.insert("enum".into(), json!(actions));
    }
}

/// The assembled descriptor of an ability type. Implemented for every
/// [`Ability`] by a blanket impl, so no ability can supply its own: a
/// hand-written impl is a coherence error.
pub trait AbilityExt: Ability + Sized {
    /// The descriptor the model sees for this ability.
    fn descriptor(options: AssembleOptions) -> ToolDescriptor {
        assemble(&AbilityEntry::of::<Self>(), options)
    }
}

impl<T: Ability> AbilityExt for T {}
