//! Serving: over stdio, any byte stream, or streamable HTTP.

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

use super::McpServer;

/// Why serving stopped or could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpServeError {
    /// The client never completed `initialize`.
    #[error("the MCP client did not initialize: {0}")]
    Initialize(String),
    /// The address could not be bound or served.
    #[error("cannot serve MCP over HTTP: {0}")]
    Io(#[from] std::io::Error),
    /// The serving task failed.
    #[error("the MCP service stopped abnormally: {0}")]
    Task(String),
}

/// The path the HTTP server answers MCP on.
pub const HTTP_PATH: &str = "/mcp";

impl McpServer {
    /// Serves one client over this process's stdin and stdout until it
    /// disconnects. Logs must go to stderr: stdout carries the protocol.
    pub async fn serve_stdio(&self) -> Result<(), McpServeError> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve_io(stdin, stdout).await
    }

    /// Serves one client over a pair of byte streams (a socket, a pipe, an
    /// in-memory duplex) until it disconnects.
    pub async fn serve_io<R, W>(&self, read: R, write: W) -> Result<(), McpServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let running = self
            .for_connection()
            .serve((read, write))
            .await
            .map_err(|error| McpServeError::Initialize(error.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|error| McpServeError::Task(error.to_string()))?;
        Ok(())
    }

    /// Serves streamable HTTP at `http://{addr}/mcp` in a background
    /// task, every connection with its own chalie session. Bind port 0 for
    /// any free port; [`HttpServer::url`] says which.
    pub async fn serve_http(&self, addr: SocketAddr) -> Result<HttpServer, McpServeError> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let cancel = CancellationToken::new();
        let server = self.clone();
        let config = StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel.child_token())
            // A fixed keep-alive would keep idle test clients busy; MCP
            // clients reconnect on their own.
            .with_sse_keep_alive(None);
        let service = StreamableHttpService::new(
            move || Ok(server.for_http()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service(HTTP_PATH, service);
        let stop = cancel.clone();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await
        });
        Ok(HttpServer {
            addr: local_addr,
            cancel,
            task,
        })
    }
}

/// A running streamable HTTP server; stops when
/// [`shutdown`](Self::shutdown) is called or the value is dropped.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl HttpServer {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint, e.g. `http://127.0.0.1:8080/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{HTTP_PATH}", self.addr)
    }

    /// Stops accepting, ends every session and waits for the server task.
    pub async fn shutdown(mut self) -> Result<(), McpServeError> {
        self.cancel.cancel();
        let task = std::mem::replace(&mut self.task, tokio::spawn(async { Ok(()) }));
        match task.await {
            Ok(result) => Ok(result?),
            Err(error) => Err(McpServeError::Task(error.to_string())),
        }
    }

    /// Serves until the task ends (e.g. for a binary's main).
    pub async fn wait(mut self) -> Result<(), McpServeError> {
        let task = std::mem::replace(&mut self.task, tokio::spawn(async { Ok(()) }));
        match task.await {
            Ok(result) => Ok(result?),
            Err(error) => Err(McpServeError::Task(error.to_string())),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
