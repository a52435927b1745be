//! `--script FILE`: a scripted model's replies, from JSON, for demos and
//! tests. The file is an array of replies, played in order across every
//! session; each reply has any of `text`, `toolCalls` and `error`:
//!
//! ```json
//! [
//!   { "toolCalls": [{ "name": "find_tools", "arguments": { "query": ["add an event"] } }] },
//!   { "toolCalls": [{ "name": "calendar_edit", "arguments": { "action": "add_event", "title": "Gym", "start": "2026-03-07T09:00" } }] },
//!   { "text": "Done." }
//! ]
//! ```

use std::path::Path;

use chalie_core::session::{Reply, ScriptedModel};
use serde_json::Value;

/// One reply of the file.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ScriptedReply {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ScriptedCall>,
    #[serde(default)]
    error: Option<String>,
}

/// One tool call of a reply.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptedCall {
    name: String,
    #[serde(default)]
    arguments: Value,
}

/// The scripted model the file at `path` describes.
pub fn load(path: &Path) -> Result<ScriptedModel, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read the script `{shown}`: {error}"))?;
    let replies: Vec<ScriptedReply> = serde_json::from_str(&text).map_err(|error| {
        format!("the script `{shown}` is not a JSON array of replies ({{\"text\"}}, {{\"toolCalls\": [{{\"name\", \"arguments\"}}]}} or {{\"error\"}}): {error}")
    })?;
    Ok(ScriptedModel::new(replies.into_iter().map(|scripted| {
        let mut reply = Reply::empty();
        if let Some(text) = &scripted.text {
            reply = reply.then_text(text);
        }
        for call in scripted.tool_calls {
            reply = reply.then_tool_call(&call.name, call.arguments);
        }
        if let Some(message) = &scripted.error {
            reply = reply.then_error(message);
        }
        reply
    })))
}
