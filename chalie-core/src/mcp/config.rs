//! The external MCP servers a program connects: a file of its own
//! ([`McpConfig::load`], `[servers.NAME]` tables) or the `[[mcp.servers]]`
//! entries of `chalie.toml`
//! ([`ChalieConfig::mcp_servers`](crate::contracts::ChalieConfig::mcp_servers)).
//! Both shapes hold the same entries and go through one check, so a
//! mistake gets the same message in either.
//!
//! ```toml
//! [servers.weather]            # the source name: tools become `weather__...`
//! command = "python3"          # a child process over stdio ...
//! args = ["weather_server.py"]
//! env = { UNITS = "metric" }
//! timeout_secs = 30            # per call (default 30)
//!
//! [servers.search]
//! url = "http://127.0.0.1:8000/mcp"   # ... or streamable HTTP
//! ```
//!
//! In `chalie.toml` the name is a key of the entry:
//!
//! ```toml
//! [[mcp.servers]]
//! name = "weather"
//! command = "python3"
//! args = ["weather_server.py"]
//! cwd = "servers"              # relative to the file's folder
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::mcp::names::snake_segment;

/// How long a call may take by default before it is abandoned.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How to reach one external server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment variables.
        env: BTreeMap<String, String>,
        /// The working directory (default: this process's).
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// E.g. `http://127.0.0.1:8000/mcp`.
        url: String,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// The source name, snake_case: the prefix of its tools' names.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// How long one call may take.
    pub timeout: Duration,
}

impl ServerSpec {
    /// A child process server named `name` (mapped to snake_case).
    pub fn stdio<S: Into<String>>(
        name: &str,
        command: impl Into<String>,
        args: impl IntoIterator<Item = S>,
    ) -> Self {
        ServerSpec {
            name: snake_segment(name),
            transport: Transport::Stdio {
                command: command.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// A streamable HTTP server named `name` (mapped to snake_case).
    pub fn http(name: &str, url: impl Into<String>) -> Self {
        ServerSpec {
            name: snake_segment(name),
            transport: Transport::Http { url: url.into() },
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Sets the per-call timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// Every configured server, sorted by name.
///
/// As a serde value it is the `[mcp]` table of `chalie.toml`: a list of
/// `servers`, each with its `name`, checked as it is read by the same rules
/// as [`from_toml`](Self::from_toml)'s `[servers.NAME]` tables.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ServerList", into = "ServerList")]
pub struct McpConfig {
    /// The servers.
    pub servers: Vec<ServerSpec>,
}

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpConfigError {
    /// The file could not be read.
    #[error("cannot read MCP config `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not valid TOML of the expected shape.
    #[error("invalid MCP config: {0}")]
    Parse(String),
    /// A `[[mcp.servers]]` entry has no `name`.
    #[error(
        "MCP server entry {position} has no `name`; add `name = \"...\"`, the prefix of its tools (`NAME__tool`)"
    )]
    Unnamed {
        /// Its place in the list, from 1.
        position: usize,
    },
    /// A server entry is wrong.
    #[error("MCP server `{server}`: {problem}")]
    Server {
        /// The entry's name.
        server: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
}

/// One server as a file writes it: `[servers.NAME]` of an MCP config
/// file, or one `[[mcp.servers]]` of `chalie.toml` (which adds `name`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_secs: Option<f64>,
}

/// An MCP config file: `[servers.NAME]` tables.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    servers: BTreeMap<String, Entry>,
}

/// The `[mcp]` table of `chalie.toml`: `[[mcp.servers]]` entries.
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerList {
    #[serde(default)]
    servers: Vec<Entry>,
}

impl TryFrom<ServerList> for McpConfig {
    type Error = McpConfigError;

    fn try_from(list: ServerList) -> Result<Self, McpConfigError> {
        let mut named = Vec::with_capacity(list.servers.len());
        for (position, mut entry) in list.servers.into_iter().enumerate() {
            let name = entry.name.take().ok_or(McpConfigError::Unnamed {
                position: position + 1,
            })?;
            named.push((name, entry));
        }
        McpConfig::from_entries(named)
    }
}

impl From<McpConfig> for ServerList {
    fn from(config: McpConfig) -> Self {
        let servers = config
            .servers
            .into_iter()
            .map(|spec| {
                let mut entry = Entry {
                    name: Some(spec.name),
                    timeout_secs: (spec.timeout != DEFAULT_TIMEOUT)
                        .then_some(spec.timeout.as_secs_f64()),
                    ..Entry::default()
                };
                match spec.transport {
                    Transport::Stdio {
                        command,
                        args,
                        env,
                        cwd,
                    } => {
                        entry.command = Some(command);
                        entry.args = args;
                        entry.env = env;
                        entry.cwd = cwd;
                    }
                    Transport::Http { url } => entry.url = Some(url),
                }
                entry
            })
            .collect();
        ServerList { servers }
    }
}

impl McpConfig {
    /// Reads a TOML file of `[servers.NAME]` tables; relative `cwd`s are
    /// taken from its folder.
    pub fn load(path: &Path) -> Result<Self, McpConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| McpConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let mut config = Self::from_toml(&text)?;
        config.resolve_cwds(path.parent().unwrap_or(Path::new(".")));
        Ok(config)
    }

    /// Parses TOML text of `[servers.NAME]` tables.
    pub fn from_toml(text: &str) -> Result<Self, McpConfigError> {
        let file: File =
            toml::from_str(text).map_err(|error| McpConfigError::Parse(error.to_string()))?;
        let mut named = Vec::with_capacity(file.servers.len());
        for (key, entry) in file.servers {
            if entry.name.is_some() {
                return Err(McpConfigError::Server {
                    server: key,
                    problem: "the name is the table's key (`[servers.NAME]`); remove `name`"
                        .to_owned(),
                });
            }
            named.push((key, entry));
        }
        Self::from_entries(named)
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// Takes every relative `cwd` from `base`: the folder of the file that
    /// configured it, so a configuration means the same from any folder.
    pub fn resolve_cwds(&mut self, base: &Path) {
        for server in &mut self.servers {
            if let Transport::Stdio { cwd: Some(cwd), .. } = &mut server.transport
                && cwd.is_relative()
            {
                *cwd = base.join(&*cwd);
            }
        }
    }

    /// The one check of server entries, whichever file shape they came
    /// from: names map to snake_case and must not share a prefix, each
    /// entry gives exactly one of `command` and `url`, a timeout is
    /// positive.
    fn from_entries(named: Vec<(String, Entry)>) -> Result<Self, McpConfigError> {
        let mut servers: Vec<ServerSpec> = Vec::new();
        for (key, entry) in named {
            let problem = |problem: &str| McpConfigError::Server {
                server: key.clone(),
                problem: problem.to_owned(),
            };
            let name = snake_segment(&key);
            if let Some(other) = servers.iter().find(|spec| spec.name == name) {
                return Err(problem(&format!(
                    "its tools would share the prefix `{name}__` with another server's ({}); rename one",
                    other.name
                )));
            }
            let transport = match (entry.command, entry.url) {
                (Some(command), None) => Transport::Stdio {
                    command,
                    args: entry.args,
                    env: entry.env,
                    cwd: entry.cwd,
                },
                (None, Some(url)) => {
                    if !entry.args.is_empty() || !entry.env.is_empty() || entry.cwd.is_some() {
                        return Err(problem(
                            "`args`, `env` and `cwd` start a process; an HTTP server (`url`) takes none, so remove them or use `command`",
                        ));
                    }
                    Transport::Http { url }
                }
                (Some(_), Some(_)) => {
                    return Err(problem(
                        "give exactly one of `command` (stdio) or `url` (HTTP), not both",
                    ));
                }
                (None, None) => {
                    return Err(problem(
                        "give exactly one of `command` (stdio) or `url` (HTTP); it has neither",
                    ));
                }
            };
            let timeout = match entry.timeout_secs {
                None => DEFAULT_TIMEOUT,
                Some(secs) if secs.is_finite() && secs > 0.0 => Duration::from_secs_f64(secs),
                Some(_) => return Err(problem("`timeout_secs` must be a positive number")),
            };
            servers.push(ServerSpec {
                name,
                transport,
                timeout,
            });
        }
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(McpConfig { servers })
    }
}
