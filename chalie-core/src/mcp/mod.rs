//! MCP interop: serve a [`Dispatcher`](crate::Dispatcher)
//! as an MCP server, and bring external MCP servers' tools in through the
//! dispatcher's [`ExternalTools`](crate::dispatch::ExternalTools) seam, so they are
//! validated, gated, rendered and recorded like local abilities.
//!
//! - [`McpServer`]: `tools/list` in [`Exposure::Full`] or
//!   [`Exposure::OnDemand`] (pinned core + the [`CALL_PROXY`]), every call
//!   on [`Channel::External`](crate::Channel::External), failures as
//!   `isError` results carrying the envelope, protocol misuse as JSON-RPC
//!   errors; over stdio ([`McpServer::serve_stdio`]) or streamable HTTP
//!   ([`McpServer::serve_http`]).
//! - [`McpSource`]: one configured external server ([`McpConfig`]), its
//!   tools under `server__tool` names ([`map_tool_names`]), with a call
//!   timeout, reconnection and [`SourceEvent`]s when it degrades.
//!
//! Serving and connecting need the `mcp` feature. The configuration
//! ([`McpConfig`], [`ServerSpec`]) and the name mapping do not: they are
//! data, read wherever `chalie.toml` is read (its `[[mcp.servers]]`, see
//! [`ChalieConfig::mcp_servers`](crate::contracts::ChalieConfig::mcp_servers)),
//! including by the contract checks that link no MCP stack.

#[cfg(feature = "mcp")]
mod client;
mod config;
mod names;
#[cfg(feature = "mcp")]
mod server;
#[cfg(feature = "mcp")]
mod trace_context;

#[cfg(feature = "mcp")]
pub use client::{EventSink, McpSource, McpSourceError, SourceEvent};
pub use config::{DEFAULT_TIMEOUT, McpConfig, McpConfigError, ServerSpec, Transport};
pub use names::{
    MAX_NAME_LEN, NameCollision, SOURCE_SEPARATOR, map_tool_names, qualify, snake_segment,
};
#[cfg(feature = "mcp")]
pub use server::{
    APPROVAL_INPUT, CALL_PROXY, DEFAULT_LIST_TTL, DEFAULT_PINNED, Exposure, HTTP_PATH, HttpServer,
    McpServeError, McpServer, McpServerBuilder, McpServerError, ServedSkill,
};
