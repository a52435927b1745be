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

/// What `act_summary` is for, told to the model.
const ACT_SUMMARY_DESCRIPTION: &str =
    "A short line shown to the user while this runs, in their language.";
/// What `async` does, told to the model.
const ASYNC_DESCRIPTION: &str = "true: run in the background; the result comes later.";

/// What the assembled descriptor depends on besides the ability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AssembleOptions {
    /// Whether the channel allows background calls, which adds `async`.
    pub background_calls: bool,
    /// Whether the framework fields are explained once for every tool,
    /// by [`framework_fields_note`] (an MCP server's `instructions`), so
    /// that each schema carries only their types. A listing of 150 tools
    /// would otherwise repeat the same sentences 150 times: about 12 KB on
    /// the wire and as many tokens in a client that shows every tool.
    pub fields_explained_once: bool,
}

impl AssembleOptions {
    /// The options for `channel`, each field explained in every schema.
    pub fn for_channel(channel: crate::Channel) -> Self {
        Self {
            background_calls: channel.allows_background_calls(),
            fields_explained_once: false,
        }
    }
}

/// The one explanation of the framework fields that descriptors assembled
/// with [`AssembleOptions::fields_explained_once`] leave out: the same
/// sentences they would carry, for a server's instructions.
pub fn framework_fields_note(options: AssembleOptions) -> String {
    let mut note = format!(
        "Every tool that is not internal also takes an optional `{ACT_SUMMARY_FIELD}` (string): {ACT_SUMMARY_DESCRIPTION}"
    );
    if options.background_calls {
        note.push_str(&format!(
            " And an optional `{ASYNC_FIELD}` (boolean): {ASYNC_DESCRIPTION}"
        ));
    }
    note
}

/// The full tool definition the model sees, in a provider-neutral form.
/// Render it for a provider with [`ToolDescriptor::render`].
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    // Borrowed for an ability, whose name and summary are linked in: a
    // listing built from descriptors then copies no text per tool.
    name: Cow<'static, str>,
    description: Cow<'static, str>,
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
    /// The name and description as held: borrowed from the linked
    /// ability, so cloning them allocates nothing.
    #[cfg(feature = "mcp")]
    pub(crate) fn texts(&self) -> (Cow<'static, str>, Cow<'static, str>) {
        (self.name.clone(), self.description.clone())
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
        description: Cow::Borrowed(spec.summary()),
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
        description: Cow::Owned(tool.description.clone()),
        parameters,
        effect: tool.effect,
        strict: false,
        input_examples: Vec::new(),
    }
}

/// `act_summary`, and `async` where the channel allows background calls;
/// each with its explanation unless that is given once elsewhere.
fn insert_framework_fields(properties: &mut Map<String, Value>, options: AssembleOptions) {
    let field = |kind: &str, description: &str| match options.fields_explained_once {
        true => json!({ "type": kind }),
        false => json!({ "type": kind, "description": description }),
    };
    properties.insert(
        ACT_SUMMARY_FIELD.into(),
        field("string", ACT_SUMMARY_DESCRIPTION),
    );
    if options.background_calls {
        properties.insert(ASYNC_FIELD.into(), field("boolean", ASYNC_DESCRIPTION));
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
