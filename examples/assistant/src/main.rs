//! The example assistant's demo: `cargo xtask demo` (which fetches the
//! embedding model and builds the discovery index first) or
//! `cargo run -p assistant`; and the assistant as a service for many
//! users on a real model: `cargo run -p assistant -- serve --help`
//! (see `assistant::service`).
//!
//! ```text
//! assistant [--config chalie.toml] [--index DIR] [--rebuild-index] [--cache DIR]
//! ```
//!
//! Its profiles (`everyday` for the chats, `web` for the web
//! conversation) come from the workspace's `chalie.toml`, or `--config`;
//! a missing profile, or a toolset no ability has, stops it with the fix.
//! The MCP servers it configures (`[[mcp.servers]]`) are connected, so the
//! index is checked against their tools too (the demo's script never calls
//! them).
//! It opens the discovery index `cargo xtask index` built (`.chalie/index`
//! by default) and stops when it is missing, stale or corrupt, naming the
//! command that rebuilds it; `--rebuild-index` rebuilds it in place
//! instead, for development, with the embedding cache of `--cache`
//! (`.chalie/cache`). Then it prints a scripted conversation through
//! sessions, discovery, the permission gate and the envelopes.

// The abilities live in the library target; name it so they are linked.
chalie_core::link_abilities!(assistant);

use std::path::PathBuf;

use assistant::demo::{DemoPaths, prepare, run};
use assistant::{IndexMode, Profiles};
use chalie_core::contracts::ChalieConfig;
use chalie_core::dispatch::ExternalTools;
use std::sync::Arc;

const USAGE: &str =
    "usage: assistant [--config chalie.toml] [--index DIR] [--rebuild-index] [--cache DIR]";

/// The workspace root: two folders above this crate.
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map_or_else(|| manifest.clone(), PathBuf::from)
}

async fn main_result() -> Result<String, Box<dyn std::error::Error>> {
    let root = workspace_root();
    let mut index_dir = chalie_index::default_index_dir(&root);
    let mut cache_dir = chalie_index::default_cache_dir(&root);
    let mut config_path = assistant::config_path();
    let mut rebuild = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .map(PathBuf::from)
                .ok_or(format!("`{arg}` needs a value; {USAGE}"))
        };
        match arg.as_str() {
            "--config" => config_path = value()?,
            "--index" => index_dir = value()?,
            "--cache" => cache_dir = value()?,
            "--rebuild-index" => rebuild = true,
            other => return Err(format!("unknown argument `{other}`; {USAGE}").into()),
        }
    }
    // The servers `chalie.toml` configures, whose tools `cargo xtask index`
    // indexed: connected so the index is checked against them.
    let config = ChalieConfig::load(&config_path)?;
    let servers = chalie_index::servers::connect(
        config.mcp_servers(),
        None,
        &config_path.display().to_string(),
    )
    .await?;
    let external: Vec<Arc<dyn ExternalTools>> = servers
        .sources
        .iter()
        .map(|source| Arc::new(source.clone()) as Arc<dyn ExternalTools>)
        .collect();
    // The profiles first: a typo there stops the program before any work.
    let registry = chalie_core::registry()?;
    let profiles = Profiles::select(&config, registry, &external)?;
    let model_dir = chalie_index::MiniLm::default_dir(&root);
    let paths = DemoPaths {
        model_dir: &model_dir,
        index_dir: &index_dir,
        mode: if rebuild {
            IndexMode::Rebuild {
                cache_dir: &cache_dir,
            }
        } else {
            IndexMode::Prebuilt
        },
        external: &servers.descriptors,
        profile: &profiles.everyday,
    };
    let host = prepare(&paths)?;
    let transcript = run(&host, &profiles).await;
    servers.disconnect().await;
    transcript
}

/// `assistant serve ...`: the service, until SIGTERM or Ctrl-C.
async fn serve() -> std::process::ExitCode {
    let command = assistant::service::command().bin_name("assistant serve");
    let args = command.get_matches_from(std::env::args().skip(1));
    match assistant::service::run(&args, &workspace_root()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::process::ExitCode {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        return serve().await;
    }
    match main_result().await {
        Ok(transcript) => {
            print!("{transcript}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
