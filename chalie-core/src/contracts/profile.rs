//! Profiles: which toolsets a deployment exposes to the model.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::ability::AbilitySpec;
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

/// The toolsets a deployment enables, plus the always-on core.
///
/// Unavailable unless configured: an ability is exposed only when its
/// toolset is listed or its name is in the core, so an empty profile
/// exposes only the core. Load one from TOML (or any serde format):
///
/// ```
/// let profile: chalie_core::contracts::Profile = toml::from_str(r#"
///     toolsets = ["weather"]
/// "#).unwrap();
/// assert!(profile.enables("weather"));
/// assert!(!profile.enables("default"));
/// assert!(profile.is_core("memory"));
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
        }
    }

    /// Also enables `toolset`.
    pub fn with_toolset(mut self, toolset: impl Into<String>) -> Self {
        self.toolsets.insert(toolset.into());
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

/// A workspace's chalie configuration (`chalie.toml`): the namespace its
/// capabilities are published in, and named profiles.
///
/// ```
/// let config: chalie_core::contracts::ChalieConfig = toml::from_str(r#"
///     namespace = "acme"
///
///     [profiles.assistant]
///     toolsets = ["weather", "calendar"]
/// "#).unwrap();
/// assert_eq!(config.namespace, "acme");
/// assert!(config.profile("assistant").unwrap().enables("calendar"));
/// // An unknown profile name exposes only the core, never everything.
/// assert!(config.profile("nope").is_none());
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
}

impl ChalieConfig {
    /// The profile called `name`.
    pub fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }
}
