//! The seam for tools that live outside the program (an MCP server, say):
//! a proxy lists their descriptors as data, validates arguments against
//! their JSON input schema, and calls them.

use serde_json::Value;

use crate::{BoxFuture, Effect, ToolResult, Turn, params::ParamErrors};

/// Separates the source from the tool in an external tool's qualified name
/// (`github__search_issues`): no snake_case ability name contains it, so a
/// qualified name never shadows a local ability, and a
/// [`Profile`](crate::contracts::Profile) tells a tool's server from it.
pub const SOURCE_SEPARATOR: &str = "__";

/// The server an external tool's qualified name belongs to: what comes
/// before the first [`SOURCE_SEPARATOR`] (`github` for
/// `github__search_issues`); `None` for a name without one.
pub fn source_of(qualified: &str) -> Option<&str> {
    qualified
        .split_once(SOURCE_SEPARATOR)
        .map(|(server, _)| server)
        .filter(|server| !server.is_empty())
}

/// One external tool, as data.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalTool {
    /// The full name the model calls, prefix included (`mcp__github__search`).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// Its JSON input schema.
    pub input_schema: Value,
    /// Read or write; unknown tools should say `Write`.
    pub effect: Effect,
}

/// What an external tool gave back.
#[derive(Debug, Clone, PartialEq)]
pub enum ExternalOutput {
    /// A canonical result, shown as any ability's.
    Result(ToolResult),
    /// Anything else; the dispatcher reports `non-canonical-result`
    /// rather than show the model something it cannot trust the shape of.
    Raw(Value),
}

/// A proxy for external tools, reached by a name prefix. The dispatcher
/// runs the same path for them: pre-validation through
/// [`ExternalTools::validate`], tags, rate limit, gate (permission = the
/// full name), execution with panics caught, envelope and record.
pub trait ExternalTools: Send + Sync {
    /// The prefix that routes a name here, e.g. `mcp__`.
    fn prefix(&self) -> &str;

    /// Every tool the proxy offers now.
    fn tools(&self) -> Vec<ExternalTool>;

    /// Checks arguments against `tool`'s input schema.
    fn validate(&self, tool: &ExternalTool, arguments: &Value) -> Result<(), ParamErrors>;

    /// Calls `tool` with validated arguments.
    fn call(
        &self,
        tool: &ExternalTool,
        arguments: Value,
        turn: Turn,
    ) -> BoxFuture<'static, ExternalOutput>;
}
