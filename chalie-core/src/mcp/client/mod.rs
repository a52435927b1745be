//! External MCP servers as proxied abilities, through the dispatcher's
//! [`ExternalTools`] seam.

mod catalog;
mod convert;
mod skills;

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject, RequestParamsMeta};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceError};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::Value;

use crate::mcp::config::{McpConfig, ServerSpec, Transport};
use crate::mcp::names::{NameCollision, SOURCE_SEPARATOR};
use crate::{
    BoxFuture, Turn, dispatch::ExternalOutput, dispatch::ExternalTool, dispatch::ExternalTools,
    params::ParamErrors, params::Problem,
};
use catalog::Catalog;

/// The least time a server gets to answer `initialize`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Something a host may want to show or log about a source.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceEvent {
    /// A call failed because of the server, not its arguments (timeout,
    /// crash, disconnect); the next call reconnects.
    Degraded {
        /// The source name.
        server: String,
        /// The qualified tool name.
        tool: String,
        /// `timeout`, `disconnected` or `unreachable`.
        reason: &'static str,
        /// The detail.
        detail: String,
    },
    /// A new connection is up and its tools are listed.
    Connected {
        /// The source name.
        server: String,
        /// How many tools it lists.
        tools: usize,
    },
    /// Two of the server's names map to one chalie name.
    Collision {
        /// The source name.
        server: String,
        /// The collision.
        collision: NameCollision,
    },
}

/// Receives [`SourceEvent`]s.
pub type EventSink = Arc<dyn Fn(SourceEvent) + Send + Sync>;

/// Why a source could not be reached.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpSourceError {
    /// The process could not start or the endpoint did not answer.
    #[error("cannot start MCP server `{server}`: {detail}")]
    Connect {
        /// The source name.
        server: String,
        /// Why.
        detail: String,
    },
    /// The server did not list its tools.
    #[error("MCP server `{server}` did not list its tools: {detail}")]
    List {
        /// The source name.
        server: String,
        /// Why.
        detail: String,
    },
    /// The server declares skills but did not list or serve them.
    #[error("MCP server `{server}` did not serve its skills: {detail}")]
    Skills {
        /// The source name.
        server: String,
        /// Why.
        detail: String,
    },
}

/// One external MCP server. Give it to
/// [`DispatcherBuilder::external_tools`](crate::dispatch::DispatcherBuilder::external_tools):
/// its tools answer to `server__tool`, are validated against the server's
/// input schema, gated (permission = the full name; unknown effects are
/// writes) and rendered as envelopes like any ability's. A session offers
/// one to its model like an ability: pinned, in the channel's core, or once
/// `find_tools` activated it within the channel's
/// [`Profile`](crate::contracts::Profile), which selects external tools by
/// server and by name.
///
/// A call that times out, or finds the server crashed or disconnected,
/// is an error with a retry hint and a [`SourceEvent::Degraded`]; the next
/// call starts a fresh connection.
#[derive(Clone)]
pub struct McpSource {
    inner: Arc<Inner>,
}

struct Inner {
    spec: ServerSpec,
    prefix: String,
    connection: tokio::sync::Mutex<Option<RunningService<RoleClient, ()>>>,
    catalog: RwLock<Arc<Catalog>>,
    events: Option<EventSink>,
}

impl std::fmt::Debug for McpSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSource")
            .field("server", &self.inner.spec.name)
            .field("tools", &self.catalog().tools.len())
            .finish_non_exhaustive()
    }
}

impl McpSource {
    /// Connects to the server and lists its tools.
    pub async fn connect(spec: ServerSpec) -> Result<Self, McpSourceError> {
        Self::connect_with_events(spec, None).await
    }

    /// Like [`connect`](Self::connect), reporting to `events`.
    pub async fn connect_with_events(
        spec: ServerSpec,
        events: Option<EventSink>,
    ) -> Result<Self, McpSourceError> {
        let prefix = format!("{}{SOURCE_SEPARATOR}", spec.name);
        let source = McpSource {
            inner: Arc::new(Inner {
                spec,
                prefix,
                connection: tokio::sync::Mutex::new(None),
                catalog: RwLock::new(Arc::new(Catalog::default())),
                events,
            }),
        };
        source.refresh().await?;
        Ok(source)
    }

    /// Connects to every server of `config`, in its order.
    pub async fn connect_all(
        config: &McpConfig,
        events: Option<EventSink>,
    ) -> Result<Vec<Self>, McpSourceError> {
        let mut sources = Vec::with_capacity(config.servers.len());
        for spec in &config.servers {
            sources.push(Self::connect_with_events(spec.clone(), events.clone()).await?);
        }
        Ok(sources)
    }

    /// The source name.
    pub fn server(&self) -> &str {
        &self.inner.spec.name
    }

    /// The name collisions of the last listing.
    pub fn collisions(&self) -> Vec<NameCollision> {
        self.catalog().collisions.clone()
    }

    /// The server's name for a qualified tool name.
    pub fn original_name(&self, qualified: &str) -> Option<String> {
        let catalog = self.catalog();
        catalog
            .remote
            .get(qualified)
            .map(|remote| remote.original.clone())
    }

    /// Every tool as descriptor data for the discovery index, one JSON
    /// object each: the entries of the array `cargo xtask index --external
    /// FILE.json` reads.
    pub fn descriptors(&self) -> Vec<Value> {
        let catalog = self.catalog();
        catalog
            .tools
            .iter()
            .map(|tool| catalog::descriptor(&self.inner.spec.name, tool))
            .collect()
    }

    /// Lists the tools again (reconnecting if needed), so a running
    /// process sees a server's new or removed tools.
    pub async fn refresh(&self) -> Result<(), McpSourceError> {
        let peer = self.inner.peer().await?;
        let listed = match peer.list_all_tools().await {
            Ok(listed) => listed,
            Err(error) => {
                self.inner.drop_connection().await;
                return Err(McpSourceError::List {
                    server: self.inner.spec.name.clone(),
                    detail: error.to_string(),
                });
            }
        };
        let catalog = Catalog::build(&self.inner.spec.name, listed);
        for collision in &catalog.collisions {
            self.inner.emit(SourceEvent::Collision {
                server: self.inner.spec.name.clone(),
                collision: collision.clone(),
            });
        }
        self.inner.emit(SourceEvent::Connected {
            server: self.inner.spec.name.clone(),
            tools: catalog.tools.len(),
        });
        *self
            .inner
            .catalog
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(catalog);
        Ok(())
    }

    /// Closes the connection; the next call opens a new one.
    pub async fn disconnect(&self) {
        self.inner.drop_connection().await;
    }

    fn catalog(&self) -> Arc<Catalog> {
        Arc::clone(
            &self
                .inner
                .catalog
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

impl Inner {
    fn emit(&self, event: SourceEvent) {
        if let Some(sink) = &self.events {
            sink(event);
        }
    }

    /// The live connection's peer, connecting first when there is none or
    /// the last one closed.
    async fn peer(&self) -> Result<Peer<RoleClient>, McpSourceError> {
        let mut connection = self.connection.lock().await;
        if let Some(running) = connection.as_ref()
            && !running.is_closed()
            && !running.peer().is_transport_closed()
        {
            return Ok(running.peer().clone());
        }
        let running = self.open().await?;
        let peer = running.peer().clone();
        *connection = Some(running);
        Ok(peer)
    }

    async fn open(&self) -> Result<RunningService<RoleClient, ()>, McpSourceError> {
        // Starting an interpreter can take longer than one call may.
        let wait = self.spec.timeout.max(CONNECT_TIMEOUT);
        let failed = |detail: String| McpSourceError::Connect {
            server: self.spec.name.clone(),
            detail,
        };
        let started = match &self.spec.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut process = tokio::process::Command::new(command);
                process.args(args).envs(env);
                if let Some(cwd) = cwd {
                    process.current_dir(cwd);
                }
                let transport = TokioChildProcess::new(process)
                    .map_err(|error| failed(format!("`{command}`: {error}")))?;
                tokio::time::timeout(wait, ().serve(transport)).await
            }
            Transport::Http { url } => {
                let transport = StreamableHttpClientTransport::from_uri(url.as_str());
                tokio::time::timeout(wait, ().serve(transport)).await
            }
        };
        match started {
            Ok(Ok(running)) => Ok(running),
            Ok(Err(error)) => Err(failed(error.to_string())),
            Err(_) => Err(failed(format!(
                "no answer to `initialize` within {:.1} s",
                wait.as_secs_f64()
            ))),
        }
    }

    async fn drop_connection(&self) {
        if let Some(running) = self.connection.lock().await.take() {
            // Ending the service ends a child process too.
            let _ = running.cancel().await;
        }
    }

    async fn call(
        self: Arc<Self>,
        qualified: String,
        original: String,
        arguments: Value,
    ) -> ExternalOutput {
        let degraded = |reason: &'static str, detail: String| {
            self.emit(SourceEvent::Degraded {
                server: self.spec.name.clone(),
                tool: qualified.clone(),
                reason,
                detail: detail.clone(),
            });
            ExternalOutput::Result(convert::unavailable(
                &qualified,
                &self.spec.name,
                reason,
                &detail,
            ))
        };
        let peer = match self.peer().await {
            Ok(peer) => peer,
            Err(error) => return degraded("unreachable", error.to_string()),
        };
        let arguments = match arguments {
            Value::Object(object) => object,
            _ => JsonObject::new(),
        };
        let mut request = CallToolRequestParams::new(original).with_arguments(arguments);
        // The server's spans join the trace of the call that reached it.
        if let Some(traceparent) = super::trace_context::current() {
            request.set_traceparent(&traceparent);
        }
        match tokio::time::timeout(self.spec.timeout, peer.call_tool(request)).await {
            Ok(Ok(result)) => convert::from_mcp(&qualified, result),
            Ok(Err(ServiceError::McpError(error))) => {
                ExternalOutput::Result(convert::protocol_error(&qualified, &error.message))
            }
            Ok(Err(error)) => {
                self.drop_connection().await;
                degraded("disconnected", error.to_string())
            }
            Err(_) => {
                // A server that did not answer in time may be stuck (in a
                // loop, flooding notifications, having lost the request):
                // the next call starts it again, as the envelope's hint says.
                self.drop_connection().await;
                degraded(
                    "timeout",
                    format!("no result within {:.1} s", self.spec.timeout.as_secs_f64()),
                )
            }
        }
    }
}

impl ExternalTools for McpSource {
    fn prefix(&self) -> &str {
        &self.inner.prefix
    }

    fn tools(&self) -> Vec<ExternalTool> {
        self.catalog().tools.clone()
    }

    fn validate(&self, tool: &ExternalTool, arguments: &Value) -> Result<(), ParamErrors> {
        let catalog = self.catalog();
        match catalog.remote.get(&tool.name) {
            Some(remote) => remote.validate(arguments),
            None => {
                let mut problems = ParamErrors::new();
                problems.push(
                    String::new(),
                    Problem::Invalid(format!("`{}` is no longer offered", tool.name)),
                );
                Err(problems)
            }
        }
    }

    fn call(
        &self,
        tool: &ExternalTool,
        arguments: Value,
        _turn: Turn,
    ) -> BoxFuture<'static, ExternalOutput> {
        let inner = Arc::clone(&self.inner);
        let qualified = tool.name.clone();
        let original = self
            .original_name(&qualified)
            .unwrap_or_else(|| qualified.clone());
        Box::pin(inner.call(qualified, original, arguments))
    }
}
