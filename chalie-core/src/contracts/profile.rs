//! Profiles: which toolsets and external tools a deployment exposes to the
//! model, and the `chalie.toml` that names them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::ability::AbilitySpec;
use crate::dispatch::{ExternalTools, source_of};
use crate::mcp::McpConfig;
use crate::registry::Registry;

/// The abilities every profile exposes, by name: discovery, memory and the
/// scratchpad for large results.
pub const CORE_ABILITIES: &[&str] = &["find_tools", "find_skills", "memory", "scratchpad"];

fn default_core() -> BTreeSet<String> {
    CORE_ABILITIES
        .iter()
        .map(|name| (*name).to_owned())
        .collect()
}

/// The toolsets and external tools a deployment enables, plus the
/// always-on core.
///
/// Unavailable unless configured: an ability is exposed only when its
/// toolset is listed or its name is in the core, and an external tool
/// (`server__tool`, from an [`ExternalTools`] proxy such as an MCP server)
/// only when its server or its own name is listed and it is not hidden. An
/// empty profile exposes only the core. Load one from TOML (or any serde
/// format):
///
/// ```
/// let profile: chalie_core::contracts::Profile = toml::from_str(r#"
///     toolsets = ["weather"]
///
///     [external]
///     servers = ["github"]                 # every tool of `github`
///     tools = ["files__read_file"]         # one tool of `files`
///     hide = ["github__delete_repository"] # never this one
/// "#).unwrap();
/// assert!(profile.enables("weather"));
/// assert!(!profile.enables("default"));
/// assert!(profile.is_core("memory"));
/// assert!(profile.allows_external("github__search_issues"));
/// assert!(profile.allows_external("files__read_file"));
/// assert!(!profile.allows_external("files__delete_file"));
/// assert!(!profile.allows_external("github__delete_repository"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The enabled toolsets.
    #[serde(default)]
    toolsets: BTreeSet<String>,
    /// Abilities exposed whatever the toolsets; defaults to
    /// [`CORE_ABILITIES`].
    #[serde(default = "default_core")]
    core: BTreeSet<String>,
    /// The external tools exposed.
    #[serde(default, skip_serializing_if = "ExternalSelection::is_empty")]
    external: ExternalSelection,
}

/// Which external tools a [`Profile`] exposes: the `[external]` table of a
/// profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExternalSelection {
    /// Servers whose every tool is exposed, by source name (`github`).
    #[serde(default)]
    servers: BTreeSet<String>,
    /// Tools exposed one by one, by qualified name (`github__search`).
    #[serde(default)]
    tools: BTreeSet<String>,
    /// Tools never exposed, even when their server is listed.
    #[serde(default)]
    hide: BTreeSet<String>,
}

impl ExternalSelection {
    fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.tools.is_empty() && self.hide.is_empty()
    }
}

impl Default for Profile {
    fn default() -> Self {
        Self::new()
    }
}

impl Profile {
    /// A profile exposing only the core abilities.
    pub fn new() -> Self {
        Self {
            toolsets: BTreeSet::new(),
            core: default_core(),
            external: ExternalSelection::default(),
        }
    }

    /// Also enables `toolset`.
    pub fn with_toolset(mut self, toolset: impl Into<String>) -> Self {
        self.toolsets.insert(toolset.into());
        self
    }

    /// Also exposes every tool of the external server `server` (its tools
    /// are named `server__tool`), except those hidden.
    pub fn with_server(mut self, server: impl Into<String>) -> Self {
        self.external.servers.insert(server.into());
        self
    }

    /// Also exposes the external tool `qualified` (`server__tool`).
    pub fn with_external_tool(mut self, qualified: impl Into<String>) -> Self {
        self.external.tools.insert(qualified.into());
        self
    }

    /// Never exposes the external tool `qualified`, even when its server
    /// or its name is listed.
    pub fn hiding_external_tool(mut self, qualified: impl Into<String>) -> Self {
        self.external.hide.insert(qualified.into());
        self
    }

    /// Replaces the always-on core with `names` (may be empty).
    pub fn with_core<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.core = names.into_iter().map(Into::into).collect();
        self
    }

    /// Whether `toolset` is enabled.
    pub fn enables(&self, toolset: &str) -> bool {
        self.toolsets.contains(toolset)
    }

    /// Whether the ability `name` is in the always-on core.
    pub fn is_core(&self, name: &str) -> bool {
        self.core.contains(name)
    }

    /// The enabled toolsets, sorted.
    pub fn toolsets(&self) -> impl Iterator<Item = &str> + '_ {
        self.toolsets.iter().map(String::as_str)
    }

    /// Whether this profile exposes the ability: the question a
    /// `find_tools` engine asks before showing a name.
    pub fn allows(&self, spec: &AbilitySpec) -> bool {
        self.is_core(spec.name()) || self.enables(spec.toolset())
    }

    /// Whether this profile exposes the ability called `name` in
    /// `registry`; `false` for an unknown name.
    pub fn allows_name(&self, registry: &Registry, name: &str) -> bool {
        registry
            .get(name)
            .is_some_and(|entry| self.allows(entry.spec()))
    }

    /// Whether this profile exposes the external tool `qualified`
    /// (`server__tool`): its server or its name is listed, and it is not
    /// hidden.
    pub fn allows_external(&self, qualified: &str) -> bool {
        let external = &self.external;
        !external.hide.contains(qualified)
            && (external.tools.contains(qualified)
                || source_of(qualified).is_some_and(|server| external.servers.contains(server)))
    }

    /// Whether this profile exposes the tool `name`: an ability of
    /// `registry` by its toolset or the core ([`allows`](Self::allows)),
    /// any other name as an external tool
    /// ([`allows_external`](Self::allows_external)). The rule the
    /// dispatcher applies to what `find_tools` activated on a channel with
    /// this profile.
    pub fn exposes(&self, registry: &Registry, name: &str) -> bool {
        match registry.get(name) {
            Some(entry) => self.allows(entry.spec()),
            None => self.allows_external(name),
        }
    }

    /// The external servers listed, sorted.
    pub fn servers(&self) -> impl Iterator<Item = &str> + '_ {
        self.external.servers.iter().map(String::as_str)
    }

    /// Every name this profile lists that `registry` and the `external`
    /// proxies do not have: a toolset no ability belongs to, a server no
    /// proxy serves, an external tool (listed or hidden) no proxy lists.
    /// Usually a typo in the configuration; empty when all resolve.
    pub fn unresolved(
        &self,
        registry: &Registry,
        external: &[Arc<dyn ExternalTools>],
    ) -> Vec<Unresolved> {
        let toolsets: BTreeSet<&str> = registry
            .iter()
            .map(|entry| entry.spec().toolset())
            .collect();
        let tools: Vec<String> = external
            .iter()
            .flat_map(|proxy| proxy.tools())
            .map(|tool| tool.name)
            .collect();
        // A proxy's server is its prefix without the separator, whether or
        // not it lists any tool right now.
        let mut servers: BTreeSet<&str> = external
            .iter()
            .filter_map(|proxy| source_of(proxy.prefix()))
            .collect();
        servers.extend(tools.iter().filter_map(|name| source_of(name)));
        let mut unresolved = Vec::new();
        let mut check = |kind: Selector, names: &BTreeSet<String>, known: &BTreeSet<&str>| {
            for name in names.iter().filter(|name| !known.contains(name.as_str())) {
                unresolved.push(Unresolved {
                    kind,
                    name: name.clone(),
                    suggestions: crate::dispatch::resolve::suggest(name, known.iter().copied()),
                });
            }
        };
        check(Selector::Toolset, &self.toolsets, &toolsets);
        check(Selector::Server, &self.external.servers, &servers);
        let tools: BTreeSet<&str> = tools.iter().map(String::as_str).collect();
        check(Selector::ExternalTool, &self.external.tools, &tools);
        check(Selector::ExternalTool, &self.external.hide, &tools);
        unresolved
    }

    /// The abilities of `registry` this profile exposes.
    pub fn exposed(&self, registry: &Registry) -> Registry {
        registry.filter(|entry| self.allows(entry.spec()))
    }

    /// Enabled toolsets no ability in `registry` belongs to: usually a
    /// typo in the configuration.
    pub fn unknown_toolsets(&self, registry: &Registry) -> Vec<String> {
        self.toolsets
            .iter()
            .filter(|toolset| {
                !registry
                    .iter()
                    .any(|entry| entry.spec().toolset() == toolset.as_str())
            })
            .cloned()
            .collect()
    }
}

/// What a profile names: a toolset, an external server or tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Selector {
    /// A `toolsets` entry.
    Toolset,
    /// An `[external] servers` entry.
    Server,
    /// An `[external] tools` or `hide` entry.
    ExternalTool,
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Selector::Toolset => "toolset",
            Selector::Server => "external server",
            Selector::ExternalTool => "external tool",
        })
    }
}

/// A name a profile lists that nothing linked or connected has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    /// What kind of name it is.
    pub kind: Selector,
    /// The name as configured.
    pub name: String,
    /// The closest known names of that kind.
    pub suggestions: Vec<String>,
}

impl std::fmt::Display for Unresolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown {} `{}`", self.kind, self.name)?;
        match self.suggestions.as_slice() {
            [] => Ok(()),
            close => write!(f, " (did you mean `{}`?)", close.join("`, `")),
        }
    }
}

/// Why a `chalie.toml` or one of its profiles cannot be used. Each message
/// says what to change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read `{path}`: {source}; it sets `namespace = \"...\"` and the profiles")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not TOML of the expected shape (an unknown key in a profile included).
    #[error("{origin}: {detail}")]
    Parse {
        /// The file, or `chalie.toml` for text.
        origin: String,
        /// What the parser said.
        detail: String,
    },
    /// No profile has that name.
    #[error("no profile `{name}` in chalie.toml; {}", known_profiles(.known))]
    UnknownProfile {
        /// The name asked for.
        name: String,
        /// The profiles the file defines.
        known: Vec<String>,
    },
    /// The profile lists names nothing linked or connected has.
    #[error("profile `{profile}`: {}; fix the names in `[profiles.{profile}]`", list(.unresolved))]
    Unresolved {
        /// The profile.
        profile: String,
        /// Every such name.
        unresolved: Vec<Unresolved>,
    },
}

fn known_profiles(known: &[String]) -> String {
    if known.is_empty() {
        "it defines none; add a `[profiles.NAME]` table".to_owned()
    } else {
        format!("it defines `{}`", known.join("`, `"))
    }
}

fn list(unresolved: &[Unresolved]) -> String {
    unresolved
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// A workspace's chalie configuration (`chalie.toml`): the namespace its
/// capabilities are published in, named profiles, and the external MCP
/// servers its programs connect (`[[mcp.servers]]`).
///
/// ```
/// use chalie_core::contracts::{ChalieConfig, ConfigError};
///
/// let config = ChalieConfig::from_toml(r#"
///     namespace = "acme"
///
///     [profiles.assistant]
///     toolsets = ["weather", "calendar"]
///
///     [profiles.assistant.external]
///     servers = ["github"]
/// "#).unwrap();
/// assert_eq!(config.namespace, "acme");
/// assert!(config.profile("assistant").unwrap().enables("calendar"));
/// assert!(config.profile("assistant").unwrap().allows_external("github__search"));
/// assert!(config.mcp_servers().is_empty());
/// // An unknown profile name is an error naming the profiles there are,
/// // never an empty (or a full) profile.
/// let registry = chalie_core::registry().unwrap();
/// let error = config.select("asistant", registry, &[]).unwrap_err();
/// assert!(matches!(error, ConfigError::UnknownProfile { .. }));
/// ```
///
/// External MCP servers are entries of `[[mcp.servers]]`: a `name` (the
/// prefix of their tools, `name__tool`) and either a `command` (with
/// `args`, `env`, `cwd`) or a `url`, and optionally `timeout_secs`. They
/// are checked by the rules of [`McpConfig`]'s own file, with the same
/// messages: an unknown key, or an entry with both or neither of `command`
/// and `url`, stops the load with the fix. A profile exposes their tools
/// only once its `[profiles.NAME.external]` table lists them.
///
/// ```
/// use chalie_core::contracts::ChalieConfig;
/// use chalie_core::mcp::Transport;
///
/// let config = ChalieConfig::from_toml(r#"
///     namespace = "acme"
///
///     [[mcp.servers]]
///     name = "weather"
///     command = "python3"
///     args = ["weather_server.py"]
///
///     [[mcp.servers]]
///     name = "search"
///     url = "http://127.0.0.1:8000/mcp"
/// "#).unwrap();
/// let servers = &config.mcp_servers().servers;
/// assert_eq!(servers[0].name, "search");
/// assert!(matches!(&servers[1].transport, Transport::Stdio { command, .. } if command == "python3"));
///
/// let both = ChalieConfig::from_toml(r#"
///     namespace = "acme"
///     [[mcp.servers]]
///     name = "weather"
///     command = "python3"
///     url = "http://127.0.0.1:8000/mcp"
/// "#).unwrap_err();
/// assert!(both.to_string().contains("exactly one of `command` (stdio) or `url` (HTTP)"));
/// ```
///
/// Other tables in the file are ignored here, so other parts of chalie can
/// keep their settings beside these.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChalieConfig {
    /// The namespace of published names: `namespace.capability-name`.
    pub namespace: String,
    /// Named profiles.
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    /// The external MCP servers: the `[mcp]` table.
    #[serde(default, skip_serializing_if = "McpConfig::is_empty")]
    mcp: McpConfig,
}

impl ChalieConfig {
    /// Reads a `chalie.toml`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let mut config = Self::parse(&text, path.display().to_string())?;
        // A relative `cwd` means the same from any folder the program
        // starts in: the file's own.
        config
            .mcp
            .resolve_cwds(path.parent().unwrap_or(Path::new(".")));
        Ok(config)
    }

    /// Parses the text of a `chalie.toml`.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        Self::parse(text, "chalie.toml".to_owned())
    }

    fn parse(text: &str, origin: String) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|error| ConfigError::Parse {
            origin,
            detail: error.to_string(),
        })
    }

    /// The external MCP servers of `[[mcp.servers]]`, sorted by name,
    /// checked as the file was read; empty when none is configured. Give
    /// them to `McpSource::connect_all` (feature `mcp`).
    pub fn mcp_servers(&self) -> &McpConfig {
        &self.mcp
    }

    /// The profile called `name`, unchecked.
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }

    /// The profile called `name`, checked against what the program has:
    /// every toolset it enables has an ability in `registry`, every server
    /// and external tool it names is served by one of `external`. What a
    /// program calls at start, so a typo stops it with the fix instead of
    /// leaving a profile that silently exposes less.
    ///
    /// # Errors
    ///
    /// [`ConfigError::UnknownProfile`] with the names the file defines;
    /// [`ConfigError::Unresolved`] with every name that does not resolve
    /// and the closest known ones.
    pub fn select(
        &self,
        name: &str,
        registry: &Registry,
        external: &[Arc<dyn ExternalTools>],
    ) -> Result<Profile, ConfigError> {
        let profile = self
            .profile(name)
            .ok_or_else(|| ConfigError::UnknownProfile {
                name: name.to_owned(),
                known: self.profiles.keys().cloned().collect(),
            })?;
        let unresolved = profile.unresolved(registry, external);
        if !unresolved.is_empty() {
            return Err(ConfigError::Unresolved {
                profile: name.to_owned(),
                unresolved,
            });
        }
        Ok(profile.clone())
    }
}
