//! An external tool's MCP result as a chalie result.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::{ToolResult, dispatch::ExternalOutput, result::Media, result::Retry};

/// Text and structured content are canonical; a result with neither
/// (only images, audio, resources, or nothing) is handed back raw, so the
/// dispatcher reports `non-canonical-result`.
pub(crate) fn from_mcp(tool: &str, result: CallToolResult) -> ExternalOutput {
    let mut texts: Vec<&str> = Vec::new();
    let mut media = None;
    for block in &result.content {
        match block {
            ContentBlock::Text(text) => texts.push(&text.text),
            ContentBlock::Image(image) if media.is_none() => {
                media = Some(Media::new(image.mime_type.clone(), image.data.clone()));
            }
            _ => {}
        }
    }
    let text = texts.join("\n");
    if result.is_error == Some(true) {
        let message = match text.trim() {
            "" => format!("`{tool}` failed without saying why"),
            said => said.to_owned(),
        };
        return ExternalOutput::Result(
            ToolResult::error(
                "external-tool-error",
                message,
                "the external tool reported this failure; change the arguments if they caused it, or use another tool",
            )
            .with_retry(Retry::Never),
        );
    }
    let body = match (result.structured_content, text.is_empty()) {
        (Some(structured), _) => ToolResult::success(structured),
        (None, false) => ToolResult::success(text),
        (None, true) => {
            return ExternalOutput::Raw(
                serde_json::to_value(&result.content).unwrap_or(Value::Null),
            );
        }
    };
    ExternalOutput::Result(match media {
        Some(media) => body.with_media(media),
        None => body,
    })
}

/// The server answered the call with a JSON-RPC error: it refused the
/// call itself, e.g. an argument it rejects.
pub(crate) fn protocol_error(tool: &str, message: &str) -> ToolResult {
    ToolResult::error(
        "external-tool-error",
        format!("the server refused the call of `{tool}`: {message}"),
        "check the arguments against the tool's input schema, or use another tool",
    )
}

/// The server, not the call, failed: a retry may work.
pub(crate) fn unavailable(tool: &str, server: &str, reason: &str, detail: &str) -> ToolResult {
    let (code, what) = match reason {
        "timeout" => ("tool-timeout", "did not answer in time"),
        _ => ("server-unavailable", "is not reachable"),
    };
    ToolResult::error(
        code,
        format!("the MCP server `{server}` {what} for `{tool}` ({detail})"),
        "retry once; the connection is restarted on the next call. If it fails again, use another tool or tell the user the service is down",
    )
    .with_retry(Retry::Now)
    .with_metadata("degraded", true)
}
