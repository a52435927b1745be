//! What `tools/list` carries: built once per server, so it never varies
//! per connection or as a side effect of other requests.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::{
    AbilityEntry, Channel, Effect, Registry, contracts::OutputSchemas, descriptor::AssembleOptions,
    descriptor::assemble, descriptor::framework_fields_note, dispatch::ExternalTool,
};

/// The name of the call proxy in `on_demand` mode.
pub const CALL_PROXY: &str = "call_tool";

/// One listed tool and what a call of it needs.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub(crate) tool: Tool,
    /// Whether `structuredContent` is sent with a success.
    pub(crate) structured: bool,
}

/// How a listing assembles abilities: the external channel's fields, each
/// explained once in the server's instructions ([`fields_note`]) rather
/// than in every listed schema.
pub(crate) fn listing_options() -> AssembleOptions {
    AssembleOptions {
        fields_explained_once: true,
        ..AssembleOptions::for_channel(Channel::External)
    }
}

/// The sentence the server's instructions carry for the framework fields
/// the listed schemas name without explaining.
pub(crate) fn fields_note() -> String {
    framework_fields_note(listing_options())
}

/// The MCP tool of a chalie ability, as the external channel sees it.
pub(crate) fn ability_tool(entry: &AbilityEntry, outputs: &OutputSchemas) -> Listed {
    let descriptor = assemble(entry, listing_options());
    let annotations = annotations(descriptor.effect());
    // Borrowed texts: every `tools/list` clones each tool, and an owned
    // name and description would be two allocations per tool per listing.
    let (name, description) = descriptor.texts();
    let mut tool = Tool::new(
        name,
        description,
        Arc::new(as_object(descriptor.parameters().clone())),
    )
    .with_annotations(annotations);
    // MCP requires an object schema for `outputSchema` and an object for
    // `structuredContent`; other declared outputs stay text only.
    let output = outputs
        .get(entry.name())
        .filter(|schema| schema.get("type").and_then(Value::as_str) == Some("object"));
    if let Some(schema) = output {
        tool = tool.with_raw_output_schema(Arc::new(as_object(schema.clone())));
    }
    Listed {
        tool,
        structured: output.is_some(),
    }
}

/// The MCP tool of an external tool served onwards.
pub(crate) fn external_tool(tool: &ExternalTool) -> Listed {
    Listed {
        tool: Tool::new(
            tool.name.clone(),
            tool.description.clone(),
            Arc::new(as_object(tool.input_schema.clone())),
        )
        .with_annotations(annotations(tool.effect)),
        structured: false,
    }
}

/// The call proxy: any discoverable ability by the name `find_tools`
/// returned, with the arguments its descriptor describes.
pub(crate) fn proxy_tool() -> Listed {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": "The exact tool name a `find_tools` result gave."
            },
            "arguments": {
                "type": "object",
                "description": "The tool's arguments, matching the input schema `find_tools` returned for it."
            }
        },
        "required": ["name"],
        "additionalProperties": false
    });
    Listed {
        tool: Tool::new(
            CALL_PROXY,
            "Calls a tool found with `find_tools` by its exact name, with arguments matching the input schema `find_tools` returned. Find first; do not guess names.",
            Arc::new(as_object(schema)),
        )
        // The proxied tool decides the effect; the hints must not promise
        // more than the worst of them.
        .with_annotations(ToolAnnotations::new().read_only(false)),
        structured: false,
    }
}

/// `effect = read` is `readOnlyHint`; a write is declared destructive,
/// since chalie cannot tell an additive write from a destructive one.
fn annotations(effect: Effect) -> ToolAnnotations {
    match effect {
        Effect::Read => ToolAnnotations::new().read_only(true).destructive(false),
        Effect::Write => ToolAnnotations::new().read_only(false).destructive(true),
    }
}

fn as_object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

/// Every discoverable ability, sorted by name. Internal ones (discovery,
/// memory) are listed too: `internal` skips the gate, it does not hide.
pub(crate) fn exposed(registry: &Registry) -> Vec<&AbilityEntry> {
    let mut entries: Vec<&AbilityEntry> = registry
        .iter()
        .filter(|entry| entry.spec().discoverable())
        .collect();
    entries.sort_by_key(|entry| entry.name());
    entries
}
