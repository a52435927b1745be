//! The tools of the MCP servers `chalie.toml` configures, for `cargo xtask index`: connected,
//! listed and disconnected by [`crate::servers::connect`], the step a program connecting the
//! same servers takes, so the index holds exactly what that program checks it against.

use chalie_core::mcp::McpConfig;

use super::XtaskError;
use crate::Descriptor;

/// Connects every server of `servers` and returns its tools' descriptors; `origin` names the
/// configuration in errors.
#[cfg(feature = "mcp")]
pub(super) fn descriptors(
    servers: &McpConfig,
    origin: &str,
) -> Result<Vec<Descriptor>, XtaskError> {
    let failed = |detail: String| {
        XtaskError::Servers(format!("{detail}; then run `cargo xtask index` again"))
    };
    // On a thread of its own, runtime and all: the caller may itself run inside a runtime
    // (a test, a program building its index), where blocking on another, or dropping one,
    // would panic.
    let listed = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| {
                        format!("cannot start a runtime to connect {origin}: {error}")
                    })?;
                runtime.block_on(async {
                    let connected = crate::servers::connect(servers, None, origin)
                        .await
                        .map_err(|error| error.to_string())?;
                    connected.disconnect().await;
                    Ok::<_, String>(connected.descriptors)
                })
            })
            .join()
    });
    match listed {
        Ok(Ok(descriptors)) => Ok(descriptors),
        Ok(Err(detail)) => Err(failed(detail)),
        Err(_) => Err(failed(format!("connecting {origin} panicked"))),
    }
}

/// Without the MCP client linked, configured servers cannot be indexed: an error with the
/// fix, never an index that silently leaves their tools out.
#[cfg(not(feature = "mcp"))]
pub(super) fn descriptors(
    servers: &McpConfig,
    origin: &str,
) -> Result<Vec<Descriptor>, XtaskError> {
    let names: Vec<&str> = servers
        .servers
        .iter()
        .map(|spec| spec.name.as_str())
        .collect();
    Err(XtaskError::Servers(format!(
        "{origin} configures the MCP servers `{}`, but this xtask was built without \
         chalie-index's `mcp` feature; enable it (`chalie-index = {{ features = [\"mcp\"] }}`) \
         to index their tools",
        names.join("`, `")
    )))
}
