//! Serves the example assistant over MCP: its abilities, its discovery
//! index (`find_tools`, `find_skills`), its playbooks as MCP skills
//! (`skills/list`, `skill://NAME/SKILL.md`) and its sample data.
//!
//! ```text
//! mcp-server [--mode on_demand|full] [--http ADDR] [--external CONFIG.toml] [--export-tools FILE.json]
//!            [--config chalie.toml] [--profile NAME] [--index DIR] [--rebuild-index] [--cache DIR]
//! ```
//!
//! Over stdio by default (logs on stderr; stdout carries the protocol), or
//! streamable HTTP at `http://ADDR/mcp`; `on_demand` by default (the
//! always-on core and the `call_tool` proxy). `--external` adds the tools
//! of the MCP servers a config file lists, as `server__tool`;
//! `--export-tools` writes their tools' and skills' descriptors for `cargo xtask index
//! --external FILE.json` and exits. The servers `chalie.toml` configures
//! (`[[mcp.servers]]`) are connected too; `cargo xtask index` connects and
//! indexes them itself, so they are never exported.
//!
//! The profile (`--profile`, `mcp` by default) comes from the workspace's
//! `chalie.toml` (or `--config`): what `find_tools` returns and the proxy
//! may call, local abilities by toolset and external tools by the servers
//! and names its `[profiles.NAME.external]` table lists. A missing
//! profile, or a toolset, server or tool nothing has, stops the server with
//! the fix.
//!
//! Needs the embedding model (`cargo xtask fetch-model`) and the discovery
//! index `cargo xtask index` builds (`.chalie/index`, or `--index DIR`); a
//! missing, stale or corrupt index stops the server with its error. With
//! `--external` the index must hold those servers' tools too: export them,
//! then `cargo xtask index --external FILE.json`. `--rebuild-index`
//! rebuilds the index in place instead, for development, with the
//! embedding cache of `--cache` (`.chalie/cache`).

// The abilities live in the assistant library; name it so they are linked.
chalie_core::link_abilities!(assistant);

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use assistant::IndexMode;
use chalie_core::mcp::{Exposure, McpConfig, McpServer, McpSource, ServedSkill};
use chalie_core::turn::Principal;
use chalie_core::{
    Channel, Dispatcher, contracts::ChalieConfig, dispatch::ChannelTools, dispatch::ExternalTools,
    dispatch::Setting,
};

struct Options {
    exposure: Exposure,
    http: Option<SocketAddr>,
    external: Option<PathBuf>,
    export: Option<PathBuf>,
    index: Option<PathBuf>,
    cache: Option<PathBuf>,
    rebuild: bool,
    config: Option<PathBuf>,
    profile: String,
}

/// The profile served unless `--profile` names another.
const DEFAULT_PROFILE: &str = "mcp";

const USAGE: &str = "usage: mcp-server [--mode on_demand|full] [--http ADDR] [--external CONFIG.toml] [--export-tools FILE.json] [--config chalie.toml] [--profile NAME] [--index DIR] [--rebuild-index] [--cache DIR]";

fn options() -> Result<Options, String> {
    let mut options = Options {
        exposure: Exposure::on_demand(),
        http: None,
        external: None,
        export: None,
        index: None,
        cache: None,
        rebuild: false,
        config: None,
        profile: DEFAULT_PROFILE.to_owned(),
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
            "--export-tools" => options.export = Some(PathBuf::from(value()?)),
            "--index" => options.index = Some(PathBuf::from(value()?)),
            "--cache" => options.cache = Some(PathBuf::from(value()?)),
            "--rebuild-index" => options.rebuild = true,
            "--config" => options.config = Some(PathBuf::from(value()?)),
            "--profile" => options.profile = value()?,
            other => return Err(format!("unknown argument `{other}`; {USAGE}")),
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

/// The workspace root: two folders above this crate.
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map_or_else(|| manifest.clone(), PathBuf::from)
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let options = options()?;
    let config_path = options
        .config
        .clone()
        .unwrap_or_else(|| workspace_root().join("chalie.toml"));
    let config = ChalieConfig::load(&config_path)?;
    // The servers `chalie.toml` configures, which `cargo xtask index`
    // indexed itself: served, checked against the index, never exported.
    let configured = chalie_index::servers::connect(
        config.mcp_servers(),
        None,
        &config_path.display().to_string(),
    )
    .await?;
    let mut sources: Vec<Arc<dyn ExternalTools>> = configured
        .sources
        .iter()
        .map(|source| Arc::new(source.clone()) as Arc<dyn ExternalTools>)
        .collect();
    let mut descriptors = Vec::new();
    if let Some(path) = &options.external {
        let external = McpConfig::load(path)?;
        if let Some(twice) = external.servers.iter().find(|spec| {
            config
                .mcp_servers()
                .servers
                .iter()
                .any(|other| other.name == spec.name)
        }) {
            return Err(format!(
                "MCP server `{}` is configured in both {} and {}; remove one",
                twice.name,
                config_path.display(),
                path.display()
            )
            .into());
        }
        for source in McpSource::connect_all(&external, None).await? {
            for collision in source.collisions() {
                eprintln!(
                    "mcp-server: `{}` has tools that all map to `{}`: {:?}; suffixes keep them apart",
                    source.server(),
                    collision.mapped,
                    collision.originals
                );
            }
            descriptors.extend(source.descriptors());
            // Its skills too, which `cargo xtask index --external` indexes
            // for `find_skills`.
            descriptors.extend(source.skill_descriptors().await?);
            sources.push(Arc::new(source));
        }
    }
    if let Some(path) = &options.export {
        std::fs::write(path, serde_json::to_string_pretty(&descriptors)?)?;
        eprintln!(
            "mcp-server: {} tool and skill descriptors written to {}",
            descriptors.len(),
            path.display()
        );
        return Ok(());
    }

    // The profile, checked against the linked abilities and the connected
    // servers, before the index is opened: a typo stops the server here.
    let registry = chalie_core::registry()?.clone();
    let profile = config.select(&options.profile, &registry, &sources)?;
    for source in &sources {
        if !source
            .tools()
            .iter()
            .any(|tool| profile.allows_external(&tool.name))
        {
            eprintln!(
                "mcp-server: profile `{}` exposes no tool of `{}`; list it under `[profiles.{}.external] servers` in {}",
                options.profile,
                source.prefix().trim_end_matches('_'),
                options.profile,
                config_path.display()
            );
        }
    }

    let root = workspace_root();
    let model_dir = chalie_index::MiniLm::default_dir(&root);
    let index_dir = options
        .index
        .unwrap_or_else(|| chalie_index::default_index_dir(&root));
    let cache_dir = options
        .cache
        .unwrap_or_else(|| chalie_index::default_cache_dir(&root));
    // Checked against exactly what `cargo xtask index` read: the export of
    // `--external`, and the servers of `chalie.toml` it connected itself.
    let mut external = chalie_index::catalog::parse_external(&descriptors, "--external")?;
    external.extend(configured.descriptors.iter().cloned());
    let host = assistant::demo::prepare(&assistant::demo::DemoPaths {
        model_dir: &model_dir,
        index_dir: &index_dir,
        mode: if options.rebuild {
            IndexMode::Rebuild {
                cache_dir: &cache_dir,
            }
        } else {
            IndexMode::Prebuilt
        },
        external: &external,
        profile: &profile,
    })?;
    // Nobody can approve on the external channel: reads are allowed, the
    // rest stays `ask`, which is `deny` there.
    let mut policy = assistant::policy();
    for entry in registry.iter() {
        if entry.spec().effect() == chalie_core::Effect::Read {
            // A read's every action is a read too: allowed by name, since
            // `tool` alone covers only calls without an action.
            policy.set(Channel::External, entry.name(), Setting::Allow)?;
            if !entry.spec().actions().is_empty() {
                policy.set(
                    Channel::External,
                    &format!("{}.*", entry.name()),
                    Setting::Allow,
                )?;
            }
        }
    }
    let exposure = match options.exposure {
        // The profile's abilities that discovery never returns are pinned too.
        Exposure::OnDemand { mut pinned } => {
            pinned.extend(
                assistant::pinned(&profile, &registry)
                    .into_iter()
                    .map(str::to_owned),
            );
            Exposure::OnDemand { pinned }
        }
        full => full,
    };
    // What the proxy may call beyond the listing: what discovery returns,
    // within the same profile.
    let mut dispatcher = host.install(
        Dispatcher::builder(registry)
            .policy(policy)
            .channel_tools(Channel::External, ChannelTools::new().profile(profile)),
    );
    for source in &sources {
        dispatcher = dispatcher.external_tools(Arc::clone(source));
    }
    // The server serves one local user: the sample user, whose calendar and
    // tasks the sample host holds; their memory is theirs alone.
    // The index's playbooks, served as MCP skills (SEP-2640) for a host to
    // load: the same text `find_skills` returns, read from the same index.
    let skills: Vec<ServedSkill> = host
        .discovery
        .as_ref()
        .and_then(|discovery| discovery.index().ok())
        .map(|index| {
            index
                .skills()
                .map(|(name, summary, playbook)| ServedSkill::new(name, summary, playbook))
                .collect()
        })
        .unwrap_or_default();
    let mut server = McpServer::builder(Arc::new(dispatcher.build()))
        .exposure(exposure)
        .skills(skills)
        .principal(Principal::new(assistant::SAMPLE_USER));
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
    configured.disconnect().await;
    Ok(())
}
