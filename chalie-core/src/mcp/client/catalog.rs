//! A server's tools as chalie sees them: qualified names, effects, input
//! validators, and descriptors as data for the discovery index.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::Tool;
use serde_json::{Value, json};

use crate::mcp::names::{NameCollision, SOURCE_SEPARATOR, map_tool_names};
use crate::{Effect, dispatch::ExternalTool, params::ParamErrors, params::Problem};

/// One remote tool: what the call needs.
pub(crate) struct Remote {
    /// The server's own name for it, used for the call.
    pub(crate) original: String,
    validator: Result<Arc<jsonschema::Validator>, String>,
}

/// Everything one listing of a server gave.
#[derive(Default)]
pub(crate) struct Catalog {
    pub(crate) tools: Vec<ExternalTool>,
    pub(crate) remote: HashMap<String, Remote>,
    pub(crate) collisions: Vec<NameCollision>,
}

impl Catalog {
    /// Maps a server's listing; sorted by qualified name.
    pub(crate) fn build(server: &str, listed: Vec<Tool>) -> Self {
        let (mapping, collisions) =
            map_tool_names(server, listed.iter().map(|tool| tool.name.as_ref()));
        let by_original: HashMap<&str, &Tool> = listed
            .iter()
            .map(|tool| (tool.name.as_ref(), tool))
            .collect();
        let mut catalog = Catalog {
            collisions,
            ..Catalog::default()
        };
        for (qualified, original) in mapping {
            let Some(tool) = by_original.get(original.as_str()) else {
                continue;
            };
            let schema = Value::Object((*tool.input_schema).clone());
            let effect = match tool.annotations.as_ref().and_then(|a| a.read_only_hint) {
                Some(true) => Effect::Read,
                // Unknown tools may write: the gate treats them as writes.
                _ => Effect::Write,
            };
            let description = tool
                .description
                .as_deref()
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| format!("`{original}` from the MCP server `{server}`."));
            let validator = jsonschema::validator_for(&schema)
                .map(Arc::new)
                .map_err(|error| error.to_string());
            catalog.tools.push(ExternalTool {
                name: qualified.clone(),
                description,
                input_schema: schema,
                effect,
            });
            catalog.remote.insert(
                qualified,
                Remote {
                    original: original.clone(),
                    validator,
                },
            );
        }
        catalog
    }
}

impl Remote {
    /// Checks arguments against the server's input schema.
    pub(crate) fn validate(&self, arguments: &Value) -> Result<(), ParamErrors> {
        let mut problems = ParamErrors::new();
        match &self.validator {
            Ok(validator) => {
                for error in validator.iter_errors(arguments) {
                    let path = error.instance_path().to_string();
                    let field = path.trim_start_matches('/').replace('/', ".");
                    problems.push(field, Problem::Invalid(error.to_string()));
                }
            }
            Err(schema_error) => problems.push(
                String::new(),
                Problem::Invalid(format!(
                    "the server's input schema is invalid ({schema_error}); this tool cannot be called until the server fixes it"
                )),
            ),
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// One tool as descriptor data for the discovery index: the entry
/// `cargo xtask index --external FILE.json` reads (`server`, the name
/// after `server__`, `summary`, `input_schema`), which the index qualifies
/// back to the same `server__name` and hands to `find_tools` with its
/// schema.
pub(crate) fn descriptor(server: &str, tool: &ExternalTool) -> Value {
    let prefix = format!("{server}{SOURCE_SEPARATOR}");
    let name = tool.name.strip_prefix(&prefix).unwrap_or(&tool.name);
    json!({
        "server": server,
        "name": name,
        "summary": tool.description,
        "examples": [],
        "toolset": server,
        "discoverable": true,
        "input_schema": tool.input_schema,
    })
}
