//! `assistant serve`: the assistant as a service for many users, on a real
//! model, built only on chalie's public API. chalie-core's router serves
//! the HTTP API under `/ai`; sessions, runs, approvals, plans and policy
//! changes are kept in SQLite (`--db`) or PostgreSQL (`--postgres`), so a
//! restart loses none of them.
//!
//! ```text
//! assistant serve --users users.toml [--listen 127.0.0.1:8080]
//!     (--script FILE | --model-url URL --model NAME | ANTHROPIC_API_KEY=… --model NAME)
//!     [--db .chalie/assistant.db | --postgres URL] [--index DIR] [--config chalie.toml] [--no-tools]
//!     [--otlp http://127.0.0.1:4318]
//! ```
//!
//! Users and their tokens come from `--users` ([`users`]); a user marked
//! `admin = true` may change the policy (`PUT /ai/policy`). Every session
//! belongs to the user who opened it: another user's session, run,
//! approval or plan is refused with nothing run. Logs and spans go to
//! stderr, filtered by `RUST_LOG` in `EnvFilter` syntax (`info` by default,
//! e.g. `RUST_LOG=chalie_core=debug,info`); with `--otlp URL` (or
//! `OTEL_EXPORTER_OTLP_ENDPOINT`) the spans also go to that OpenTelemetry
//! collector over OTLP/HTTP ([`telemetry`]). SIGTERM or Ctrl-C stops the
//! service: runs stop where they are, pending approvals and plans stay in
//! the store, the spans not yet exported are sent, and the next start
//! resumes the runs; a write that was running is reported to the model as
//! interrupted, never run again.
//!
//! The MCP servers `chalie.toml` (or `--config`) configures under
//! `[[mcp.servers]]` are connected at start: a server that cannot be
//! reached stops the start with its name and the error. Their tools join
//! the abilities as `server__tool` external tools of the one dispatcher:
//! `find_tools` activates them within the `everyday` profile (its
//! `[profiles.everyday.external]` table lists the servers or tools it
//! exposes), and the policy gates each call like any ability's (allow,
//! ask or deny per channel, changed through `PUT /ai/policy`). The index
//! must hold exactly those servers' tools, as `cargo xtask index` builds
//! it from the same file; a stale one stops the start with that command.
//! The connections close when the service stops.

pub mod script;
pub mod telemetry;
pub mod users;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chalie_core::dispatch::{ChannelTools, ExternalTools};
use chalie_core::mcp::{EventSink, SourceEvent};
use chalie_core::session::{
    AnthropicModel, CountTokens, Discover, DiscoveryReport, Model, OpenAiModel, PgStore,
    RecordStore, SessionStore, Sessions, SqliteStore, ToolsApi, console, router,
};
use chalie_core::{Channel, Dispatcher, contracts::ChalieConfig};
use clap::{Arg, ArgAction, ArgMatches, Command};

use chalie_core::turn::Clock;

use crate::demo::{DemoPaths, PrepareError, equip};
use crate::discovery::IndexMode;
use crate::{Host, Profiles};

/// Where the API is mounted; the console is served at `/`.
pub const API_PREFIX: &str = "/ai";

/// The one message for a service started without a model.
pub const NO_MODEL: &str = "no model to talk to: pass --script FILE (a scripted model, for demos and tests), \
--model-url URL --model NAME (an OpenAI-compatible server: OpenAI, vLLM, llama.cpp, Ollama; or set OPENAI_BASE_URL), \
or set ANTHROPIC_API_KEY with --model NAME (Anthropic)";

/// The `serve` command's arguments.
pub fn command() -> Command {
    Command::new("serve")
        .about("Serve the assistant's HTTP API to the users of --users, on a real model")
        .arg(
            Arg::new("listen")
                .long("listen")
                .value_name("ADDR")
                .default_value("127.0.0.1:8080")
                .value_parser(clap::value_parser!(SocketAddr))
                .help("Address to listen on (port 0: any free port, printed at start)"),
        )
        .arg(
            Arg::new("users")
                .long("users")
                .value_name("FILE")
                .required(true)
                .value_parser(clap::value_parser!(PathBuf))
                .help("TOML file of [[users]] with name, token and optionally admin = true"),
        )
        .arg(
            Arg::new("script")
                .long("script")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("Play a scripted model from a JSON array of replies"),
        )
        .arg(
            Arg::new("model-url")
                .long("model-url")
                .value_name("URL")
                .env("OPENAI_BASE_URL")
                .help("An OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (key: OPENAI_API_KEY)"),
        )
        .arg(
            Arg::new("model")
                .long("model")
                .value_name("NAME")
                .help("The model's name at the endpoint, e.g. llama3.2"),
        )
        .arg(
            Arg::new("anthropic-url")
                .long("anthropic-url")
                .value_name("URL")
                .default_value("https://api.anthropic.com")
                .help("The Anthropic API's base URL (with ANTHROPIC_API_KEY)"),
        )
        .arg(
            Arg::new("no-tools")
                .long("no-tools")
                .action(ArgAction::SetTrue)
                .help("The model cannot call tools: runs are conversational"),
        )
        .arg(
            Arg::new("db")
                .long("db")
                .value_name("PATH")
                .default_value(".chalie/assistant.db")
                .value_parser(clap::value_parser!(PathBuf))
                .help("The SQLite database sessions, approvals, plans and policy changes live in"),
        )
        .arg(
            Arg::new("postgres")
                .long("postgres")
                .value_name("URL")
                .conflicts_with("db")
                .help("Keep them in PostgreSQL instead, e.g. postgres://user@host/db"),
        )
        .arg(
            Arg::new("config")
                .long("config")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .help("The chalie.toml of the profiles and MCP servers (default: the workspace's)"),
        )
        .arg(
            Arg::new("index")
                .long("index")
                .value_name("DIR")
                .value_parser(clap::value_parser!(PathBuf))
                .help("The discovery index `cargo xtask index` built (default .chalie/index)"),
        )
        .arg(
            Arg::new("otlp")
                .long("otlp")
                .value_name("URL")
                .env(telemetry::OTLP_ENV)
                .help("Also send the spans to this OpenTelemetry collector over OTLP/HTTP, e.g. http://127.0.0.1:4318"),
        )
}

/// The collector URL and where it came from: `--otlp` or its environment
/// variable, so a bad one is reported under the name the user set.
fn otlp(args: &ArgMatches) -> Option<(&'static str, &str)> {
    let url = args.get_one::<String>("otlp")?;
    let flag = match args.value_source("otlp") {
        Some(clap::parser::ValueSource::EnvVariable) => telemetry::OTLP_ENV,
        _ => "--otlp",
    };
    Some((flag, url.as_str()))
}

/// The model the arguments and environment name; [`NO_MODEL`] without one.
fn model(args: &ArgMatches) -> Result<Arc<dyn Model>, String> {
    let no_tools = args.get_flag("no-tools");
    let name = || {
        args.get_one::<String>("model")
            .cloned()
            .ok_or_else(|| "--model NAME is needed to say which model the endpoint serves, e.g. --model llama3.2".to_owned())
    };
    if let Some(path) = args.get_one::<PathBuf>("script") {
        let model = script::load(path)?;
        return Ok(Arc::new(if no_tools {
            model.without_tools()
        } else {
            model
        }));
    }
    if let Some(url) = args.get_one::<String>("model-url") {
        let mut model = OpenAiModel::new(url, &name()?);
        if let Ok(key) = std::env::var("OPENAI_API_KEY") {
            model = model.api_key(key);
        }
        return Ok(Arc::new(if no_tools {
            model.without_tools()
        } else {
            model
        }));
    }
    if let Ok(key) = std::env::var("ANTHROPIC_API_KEY") {
        let url = args
            .get_one::<String>("anthropic-url")
            .map_or("https://api.anthropic.com", String::as_str);
        let model = AnthropicModel::new(url, &name()?).api_key(key);
        return Ok(Arc::new(if no_tools {
            model.without_tools()
        } else {
            model
        }));
    }
    Err(NO_MODEL.to_owned())
}

/// One database seen as the sessions' store and as the store of each
/// user's data.
type Database = (Arc<dyn SessionStore>, Arc<dyn RecordStore>);

/// The database the arguments name (its folder created if needed).
fn store(args: &ArgMatches) -> Result<Database, String> {
    if let Some(url) = args.get_one::<String>("postgres") {
        let store =
            Arc::new(PgStore::connect(url).map_err(|error| format!("--postgres: {error}"))?);
        return Ok((store.clone(), store));
    }
    let path = args
        .get_one::<PathBuf>("db")
        .cloned()
        .unwrap_or_else(|| PathBuf::from(".chalie/assistant.db"));
    if let Some(folder) = path
        .parent()
        .filter(|folder| !folder.as_os_str().is_empty())
    {
        std::fs::create_dir_all(folder)
            .map_err(|error| format!("cannot create `{}`: {error}", folder.display()))?;
    }
    let store = Arc::new(SqliteStore::open(&path).map_err(|error| format!("--db: {error}"))?);
    Ok((store.clone(), store))
}

/// Resolves when the process is asked to stop: SIGTERM or Ctrl-C.
async fn stop_requested() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

/// The host `assistant serve` runs on: each user's memory, tasks and
/// calendar in `records` (the sessions' own store, so a user's data and
/// sessions stay together and outlive a restart), the time from `clock`,
/// nobody's data seeded; with `paths`, MiniLM memory and the discovery
/// index too. The service builds its host here and nowhere else, so the
/// tests that build theirs here test the service's.
pub fn host(
    records: Arc<dyn RecordStore>,
    clock: Clock,
    paths: Option<&DemoPaths<'_>>,
) -> Result<Host, PrepareError> {
    let host = Host::new(clock, records);
    match paths {
        Some(paths) => equip(host, paths),
        None => Ok(host),
    }
}

/// Runs the service until SIGTERM or Ctrl-C; `root` is the workspace,
/// where the embedding model and the default index are.
pub async fn run(args: &ArgMatches, root: &Path) -> Result<(), String> {
    let telemetry = telemetry::init(otlp(args))?;
    let served = serve(args, root).await;
    // After the server has stopped, whether it stopped well or not: the
    // spans of its last runs are still in the exporter's batch.
    telemetry.flush().await;
    served
}

/// Builds the service and serves it until SIGTERM or Ctrl-C.
async fn serve(args: &ArgMatches, root: &Path) -> Result<(), String> {
    let model = model(args)?;
    let tokens = users::load(
        args.get_one::<PathBuf>("users")
            .ok_or("--users FILE is required")?,
    )?;
    let (store, records) = store(args)?;

    let registry = chalie_core::registry().map_err(|error| error.to_string())?;
    let config_path = args
        .get_one::<PathBuf>("config")
        .cloned()
        .unwrap_or_else(crate::config_path);
    let config = ChalieConfig::load(&config_path).map_err(|error| error.to_string())?;
    // The configured MCP servers, before the profiles that may name them:
    // one that cannot be reached stops the start here, with its name.
    let servers = chalie_index::servers::connect(
        config.mcp_servers(),
        Some(log_source_events()),
        &config_path.display().to_string(),
    )
    .await
    .map_err(|error| error.to_string())?;
    let external: Vec<Arc<dyn ExternalTools>> = servers
        .sources
        .iter()
        .map(|source| Arc::new(source.clone()) as Arc<dyn ExternalTools>)
        .collect();
    let profiles =
        Profiles::select(&config, registry, &external).map_err(|error| error.to_string())?;
    for source in &external {
        if !source
            .tools()
            .iter()
            .any(|tool| profiles.everyday.allows_external(&tool.name))
        {
            tracing::warn!(
                server = source.prefix().trim_end_matches('_'),
                "the `everyday` profile exposes none of this server's tools; list it under `[profiles.everyday.external] servers` in {}",
                config_path.display()
            );
        }
    }
    let model_dir = chalie_index::MiniLm::default_dir(root);
    let index_dir = args
        .get_one::<PathBuf>("index")
        .cloned()
        .unwrap_or_else(|| chalie_index::default_index_dir(root));
    // The index is checked against exactly the connected servers' tools:
    // one built without them (or with others) is stale.
    let host = host(
        records,
        Clock::system(),
        Some(&DemoPaths {
            model_dir: &model_dir,
            index_dir: &index_dir,
            mode: IndexMode::Prebuilt,
            external: &servers.descriptors,
            profile: &profiles.everyday,
        }),
    )
    .map_err(|error| error.to_string())?;
    let host_discovery = host.discovery.clone();
    // One dispatcher, one gate: the servers' tools are external tools of
    // the dispatcher the sessions call, reached once `find_tools`
    // activated them within the profile, and gated by the policy like any
    // ability.
    let everyday = ChannelTools::new().profile(profiles.everyday.clone());
    let mut builder = host
        .install(Dispatcher::builder(registry.clone()).policy(crate::policy()))
        .channel_tools(Channel::Chat, everyday.clone())
        .channel_tools(Channel::Subconscious, everyday);
    for source in &external {
        builder = builder.external_tools(Arc::clone(source));
    }
    let dispatcher = Arc::new(builder.build());
    let sessions = Sessions::builder(dispatcher, model)
        .store(store)
        .pinned(crate::pinned(&profiles.everyday, registry))
        .build();
    // Runs a stop interrupted: a pending approval is asked again (or, if
    // answered meanwhile, applied); a write that was running is reported
    // as interrupted, not run again.
    let resumed = sessions.resume().map_err(|error| error.to_string())?;
    if !resumed.is_empty() {
        tracing::info!(runs = resumed.len(), "resumed the runs a stop interrupted");
    }

    // The console's Tools view: every ability as each provider receives
    // it, counted as `cargo xtask tokens` counts, and the discovery
    // playground over the index `find_tools` searches.
    let mut tools = ToolsApi::new(registry.clone()).tokens(O200k(
        tiktoken_rs::o200k_base().map_err(|error| format!("the o200k_base encoding: {error}"))?,
    ));
    if let Some(discovery) = &host_discovery {
        tools = tools.discovery(SharedDiscovery(Arc::clone(discovery)));
    }
    let api = router(sessions.clone(), tokens.clone()).merge(tools.router(tokens));
    // The console at `/`, the API it calls under `/ai`.
    let app = axum::Router::new().nest(API_PREFIX, api).merge(console());
    let listen = args
        .get_one::<SocketAddr>("listen")
        .copied()
        .ok_or("--listen ADDR is required")?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|error| format!("cannot listen on {listen}: {error}"))?;
    let address = listener
        .local_addr()
        .map_err(|error| format!("cannot read the listening address: {error}"))?;
    // The one line on stdout: where to point a client (tests read it).
    println!("listening on http://{address}{API_PREFIX}");
    tracing::info!(%address, "serving the assistant's API under {API_PREFIX}");

    let stopping = sessions.clone();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        stop_requested().await;
        tracing::info!("stopping: runs stop where they are, approvals and plans stay stored");
        // Ends every run's event stream, so open SSE connections close
        // and the server can drain.
        stopping.shutdown();
    });
    let served = server.into_future();
    tokio::pin!(served);
    let stopped = tokio::select! {
        result = &mut served => result.map_err(|error| format!("the server failed: {error}")),
        // A client that keeps a connection open does not hold the stop up
        // for more than a few seconds.
        () = async {
            stop_requested().await;
            tokio::time::sleep(Duration::from_secs(5)).await;
        } => {
            tracing::warn!("connections still open 5 s after the stop; closing them");
            Ok(())
        }
    };
    // A stdio server's process ends with its connection.
    servers.disconnect().await;
    stopped
}

/// Logs what the MCP servers report: a listing, a collision of names, a
/// call that found a server down (the next call reconnects).
fn log_source_events() -> EventSink {
    Arc::new(|event| match event {
        SourceEvent::Connected { server, tools } => {
            tracing::info!(server, tools, "MCP server connected");
        }
        SourceEvent::Degraded {
            server,
            tool,
            reason,
            detail,
        } => tracing::warn!(server, tool, reason, detail, "MCP server degraded"),
        SourceEvent::Collision { server, collision } => tracing::warn!(
            server,
            mapped = collision.mapped,
            originals = ?collision.originals,
            "tools of one server map to one name; suffixes keep them apart"
        ),
        other => tracing::info!(?other, "MCP server event"),
    })
}

/// Counts tokens as `cargo xtask tokens` does (OpenAI's o200k_base).
struct O200k(tiktoken_rs::CoreBPE);

impl CountTokens for O200k {
    fn count(&self, text: &str) -> usize {
        self.0.encode_ordinary(text).len()
    }
    fn encoding(&self) -> &str {
        "o200k_base"
    }
}

/// The host's discovery, shared with the dispatcher, as the playground's.
struct SharedDiscovery(Arc<chalie_index::Discovery>);

impl Discover for SharedDiscovery {
    fn discover(&self, query: &str) -> Result<DiscoveryReport, String> {
        self.0.discover(query)
    }
}
