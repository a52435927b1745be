//! Serves the example abilities over MCP.
//!
//! ```text
//! mcp-server [--mode full|on_demand] [--http ADDR] [--external CONFIG.toml]
//! ```
//!
//! Over stdio by default (logs on stderr; stdout carries the protocol), or
//! streamable HTTP at `http://ADDR/mcp`. `--external` adds the tools of
//! the MCP servers a config file lists, as `server__tool`.

// The abilities live in the quickstart library; name it so they are linked.
chalie_core::link_abilities!(quickstart);

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use chalie_core::mcp::{Exposure, McpConfig, McpServer, McpSource};
use chalie_core::{Channel, Dispatcher, ExternalTools, Policy, Setting};

struct Options {
    exposure: Exposure,
    http: Option<SocketAddr>,
    external: Option<PathBuf>,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        exposure: Exposure::Full,
        http: None,
        external: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("`{arg}` needs a value"));
        match arg.as_str() {
            "--mode" => {
                options.exposure = match value()?.as_str() {
                    "full" => Exposure::Full,
                    "on_demand" => Exposure::on_demand(),
                    other => {
                        return Err(format!("unknown mode `{other}`; use `full` or `on_demand`"));
                    }
                }
            }
            "--http" => {
                let addr = value()?;
                options.http = Some(
                    addr.parse()
                        .map_err(|_| format!("`{addr}` is not an address like 127.0.0.1:8080"))?,
                );
            }
            "--external" => options.external = Some(PathBuf::from(value()?)),
            other => {
                return Err(format!(
                    "unknown argument `{other}`; usage: mcp-server [--mode full|on_demand] [--http ADDR] [--external CONFIG.toml]"
                ));
            }
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let options = options()?;
    let registry = chalie_core::registry()?.clone();
    // Nobody can approve on the external channel: reads are allowed, the
    // rest stays `ask`, which is `deny` there.
    let mut policy = Policy::new();
    for entry in registry.iter() {
        if entry.spec().effect() == chalie_core::Effect::Read {
            policy.set(Channel::External, entry.name(), Setting::Allow)?;
        }
    }
    let mut sources: Vec<Arc<dyn ExternalTools>> = Vec::new();
    if let Some(path) = &options.external {
        let config = McpConfig::load(path)?;
        for source in McpSource::connect_all(&config, None).await? {
            eprintln!(
                "mcp-server: {} tools from `{}`",
                source.descriptors().len(),
                source.server()
            );
            sources.push(Arc::new(source));
        }
    }
    let mut dispatcher = Dispatcher::builder(registry).policy(policy);
    for source in &sources {
        dispatcher = dispatcher.external_tools(Arc::clone(source));
    }
    let mut server = McpServer::builder(Arc::new(dispatcher.build())).exposure(options.exposure);
    for source in sources {
        server = server.external_tools(source);
    }
    let server = server.build()?;
    match options.http {
        Some(addr) => {
            let http = server.serve_http(addr).await?;
            eprintln!("mcp-server: serving {}", http.url());
            http.wait().await?;
        }
        None => server.serve_stdio().await?,
    }
    Ok(())
}
