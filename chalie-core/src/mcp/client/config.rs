//! The configuration file listing external MCP servers.
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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// A server entry is wrong.
    #[error("MCP server `{server}`: {problem}")]
    Server {
        /// The entry's name.
        server: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    servers: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    timeout_secs: Option<f64>,
}

impl McpConfig {
    /// Reads a TOML file; relative `cwd`s are taken from its folder.
    pub fn load(path: &Path) -> Result<Self, McpConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| McpConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let mut config = Self::from_toml(&text)?;
        let base = path.parent().unwrap_or(Path::new("."));
        for server in &mut config.servers {
            if let Transport::Stdio { cwd: Some(cwd), .. } = &mut server.transport
                && cwd.is_relative()
            {
                *cwd = base.join(&*cwd);
            }
        }
        Ok(config)
    }

    /// Parses TOML text.
    pub fn from_toml(text: &str) -> Result<Self, McpConfigError> {
        let file: File =
            toml::from_str(text).map_err(|error| McpConfigError::Parse(error.to_string()))?;
        let mut servers: Vec<ServerSpec> = Vec::new();
        for (key, entry) in file.servers {
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
                (None, Some(url)) => Transport::Http { url },
                _ => {
                    return Err(problem(
                        "give exactly one of `command` (stdio) or `url` (HTTP)",
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
