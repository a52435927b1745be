//! MCP interop: a chalie dispatcher served over MCP (stdio-style streams
//! and streamable HTTP, both exposure modes), external MCP servers
//! consumed through the dispatcher, and both sides driven by the official
//! Python SDK.

// A failed unwrap is a failed test, which is what a test should do.
#![allow(clippy::unwrap_used)]

mod abilities;
mod ask;
mod consume;
mod interop;
mod lists;
mod misbehave;
mod python;
mod serve;
mod sessions;
mod skills;
mod traces;

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chalie_core::mcp::{Exposure, McpServer};
use chalie_core::{
    Channel, Dispatcher, dispatch::DispatcherBuilder, dispatch::ExternalTools, dispatch::Policy,
    dispatch::Setting,
};
use rmcp::ClientHandler;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceExt};
use serde_json::{Value, json};

use abilities::Catalog;

/// The policy every test starts from: on the external channel the reads
/// are allowed, and everything else is left at `ask`, which is `deny` there.
pub fn policy() -> Policy {
    let mut policy = Policy::new();
    for tool in [
        "lookup_order",
        "py__get_forecast",
        "py__explode",
        "py__slow",
        "py__hang",
        "py__pid",
    ] {
        policy.set(Channel::External, tool, Setting::Allow).unwrap();
    }
    policy
}

/// A dispatcher over this binary's abilities, with `find_tools` searching
/// the local abilities plus `external`'s tools.
pub fn dispatcher(external: &[Arc<dyn ExternalTools>]) -> Arc<Dispatcher> {
    dispatcher_with(external, |builder| builder)
}

/// [`dispatcher`], with the builder changed by `configure` last.
pub fn dispatcher_with(
    external: &[Arc<dyn ExternalTools>],
    configure: impl FnOnce(DispatcherBuilder) -> DispatcherBuilder,
) -> Arc<Dispatcher> {
    // `call_tool` is linked only to show the clash with the proxy.
    let registry = chalie_core::registry()
        .unwrap()
        .filter(|entry| entry.name() != chalie_core::mcp::CALL_PROXY);
    let mut catalog: Vec<Value> = registry
        .iter()
        .filter(|entry| entry.spec().discoverable() && entry.name() != "find_tools")
        .map(|entry| {
            let descriptor = chalie_core::descriptor::assemble(
                entry,
                chalie_core::descriptor::AssembleOptions::for_channel(Channel::External),
            );
            json!({
                "name": entry.name(),
                "description": descriptor.description(),
                "parameters": descriptor.parameters(),
            })
        })
        .collect();
    for proxy in external {
        catalog.extend(proxy.tools().into_iter().map(|tool| {
            json!({ "name": tool.name, "description": tool.description, "parameters": tool.input_schema })
        }));
    }
    let mut builder: DispatcherBuilder = Dispatcher::builder(registry)
        .policy(policy())
        .without_rate_limit()
        .extension(Catalog(catalog));
    for proxy in external {
        builder = builder.external_tools(Arc::clone(proxy));
    }
    Arc::new(configure(builder).build())
}

/// A server over [`dispatcher`] with no external tools.
pub fn server(exposure: Exposure) -> McpServer {
    McpServer::builder(dispatcher(&[]))
        .exposure(exposure)
        .build()
        .unwrap()
}

/// An rmcp client that keeps the progress messages it receives.
#[derive(Clone, Default)]
pub struct Recorder {
    /// The messages, in arrival order.
    pub progress: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Recorder {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.progress
            .lock()
            .unwrap()
            .push(params.message.unwrap_or_default());
        std::future::ready(())
    }
}

/// Connects an rmcp client to `server` over an in-memory byte stream,
/// exactly as over stdio.
pub async fn connect(server: &McpServer) -> RunningService<RoleClient, Recorder> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = server.clone();
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        server.serve_io(read, write).await
    });
    let (read, write) = tokio::io::split(client_end);
    Recorder::default().serve((read, write)).await.unwrap()
}

/// [`connect`] on protocol 2026-07-28: `server/discover` instead of
/// `initialize`, the client's context on every request.
pub async fn connect_current(server: &McpServer) -> RunningService<RoleClient, Recorder> {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = server.clone();
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        server.serve_io(read, write).await
    });
    let (read, write) = tokio::io::split(client_end);
    let lifecycle = rmcp::service::ClientLifecycleMode::Discover {
        preferred_versions: vec![rmcp::model::ProtocolVersion::V_2026_07_28],
    };
    rmcp::service::ClientServiceExt::serve_with_lifecycle(
        Recorder::default(),
        (read, write),
        lifecycle,
    )
    .await
    .unwrap()
}

/// Calls `name` with `arguments`.
pub async fn call(
    client: &RunningService<RoleClient, Recorder>,
    name: &str,
    arguments: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    client
        .peer()
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await
}

/// The text of a result's first content block.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default()
}

/// Waits until `condition` holds, for at most two seconds.
pub async fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if condition() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    condition()
}
