//! The permission policy: a flat (channel, permission) → setting table,
//! loaded from and saved to a human-editable TOML file.
//!
//! A call is gated on exactly one permission: `tool` for a call without a
//! qualifier, `tool.qualifier` for a call with one (its action, or what
//! the ability derived from its inputs). There is no fallback from
//! `tool.qualifier` to `tool`: allowing `calendar_edit` says nothing about
//! `calendar_edit.delete_event`, and allowing `transfer` nothing about
//! `transfer.large`. Covering every qualifier of a tool is said explicitly,
//! `tool.*`; an explicit `tool.qualifier` still wins over it. Anything the
//! policy does not name asks (and so is denied where nobody can be asked).
//!
//! ```toml
//! [chat]
//! weather = "allow"
//! "calendar.*" = "allow"
//! "calendar_edit.delete_event" = "ask"
//!
//! [subconscious]
//! "calendar.*" = "deny"
//!
//! [external]
//! ```

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::Channel;

/// The policy's maps are read on every call: a fast hasher.
type FastMap<V> = HashMap<String, V, foldhash::fast::RandomState>;

/// What the gate does with a permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    /// Run it.
    Allow,
    /// Ask a human and run it if they approve; on a channel without a human
    /// this is [`Setting::Deny`].
    Ask,
    /// Block it; the envelope tells the model not to retry.
    Deny,
    /// Always allowed and hidden from the policy surface.
    Internal,
}

impl Setting {
    /// The setting's name in the policy file.
    pub const fn as_str(self) -> &'static str {
        match self {
            Setting::Allow => "allow",
            Setting::Ask => "ask",
            Setting::Deny => "deny",
            Setting::Internal => "internal",
        }
    }

    /// The setting named `name`, as [`as_str`](Self::as_str) writes it.
    pub fn parse(name: &str) -> Option<Setting> {
        [
            Setting::Allow,
            Setting::Ask,
            Setting::Deny,
            Setting::Internal,
        ]
        .into_iter()
        .find(|setting| setting.as_str() == name)
    }

    /// The setting `setting as u8` was, for a setting kept in an atomic
    /// byte; any other byte reads as the strictest, `deny`.
    pub(crate) const fn from_u8(setting: u8) -> Setting {
        match setting {
            s if s == Setting::Allow as u8 => Setting::Allow,
            s if s == Setting::Ask as u8 => Setting::Ask,
            s if s == Setting::Internal as u8 => Setting::Internal,
            _ => Setting::Deny,
        }
    }

    /// What the setting means on `channel`: `ask` becomes `deny` where
    /// there is nobody to ask.
    pub const fn on(self, channel: Channel) -> Setting {
        match self {
            Setting::Ask if !channel.has_human() => Setting::Deny,
            other => other,
        }
    }
}

/// Why a policy could not be read, written or changed.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read or written.
    #[error("policy file `{path}`: {source}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// The text is not a valid policy.
    #[error("invalid policy: {0}")]
    Parse(String),
    /// A permission is not `tool`, `tool.qualifier` or `tool.*`.
    #[error(
        "permission `{0}` is not `tool`, `tool.action` or `tool.*`; use a tool name, optionally followed by `.` and an action (or `*` for every action)"
    )]
    BadPermission(String),
    /// [`DispatcherBuilder::allow`](crate::dispatch::DispatcherBuilder::allow)
    /// named a tool that is neither a registered ability nor routed to an
    /// external tool.
    #[error(
        "cannot allow `{permission}`: no ability or external tool has that name{}",
        did_you_mean(.suggestions)
    )]
    UnknownTool {
        /// The permission as given.
        permission: String,
        /// Registered names close to its tool.
        suggestions: Vec<String>,
    },
}

/// ` (did you mean `a` or `b`?)`, or nothing without suggestions.
fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        return "; add the ability to the registry or the external tools first".to_owned();
    }
    let names: Vec<String> = suggestions.iter().map(|name| format!("`{name}`")).collect();
    format!("; did you mean {}?", names.join(" or "))
}

/// The settings of one tool on one channel.
#[derive(Debug, Clone, Default, PartialEq)]
struct ToolRules {
    /// `tool`: calls without a qualifier.
    tool: Option<Setting>,
    /// `tool.qualifier`, by qualifier.
    actions: FastMap<Setting>,
    /// `tool.*`: calls with a qualifier the policy does not name.
    every_action: Option<Setting>,
}

/// The qualifier of `tool.*`: every action of the tool.
pub(crate) const EVERY_ACTION: &str = "*";

/// Where a call's setting came from (see [`Policy::resolve`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SettingSource {
    /// The policy names exactly this permission.
    Explicit,
    /// The policy names `tool.*`, which covers this `tool.qualifier`.
    EveryAction,
    /// The policy names nothing that covers it: the default, `ask`.
    Default,
}

impl ToolRules {
    /// The lookup rule, in one place: a call without a qualifier is gated
    /// on `tool`; a call with one on `tool.qualifier`, then `tool.*`;
    /// anything unnamed on `ask`. The setting as written, before
    /// [`Setting::on`] the channel.
    fn resolve(rules: Option<&ToolRules>, qualifier: Option<&str>) -> (Setting, SettingSource) {
        let found = rules.and_then(|rules| match qualifier {
            None => rules.tool.map(|setting| (setting, SettingSource::Explicit)),
            // Never a call's qualifier (actions and derived qualifiers are
            // names); asked of the `tool.*` entry itself.
            Some(EVERY_ACTION) => rules
                .every_action
                .map(|setting| (setting, SettingSource::Explicit)),
            Some(qualifier) => match rules.actions.get(qualifier) {
                Some(setting) => Some((*setting, SettingSource::Explicit)),
                None => rules
                    .every_action
                    .map(|setting| (setting, SettingSource::EveryAction)),
            },
        });
        found.unwrap_or((Setting::Ask, SettingSource::Default))
    }

    /// [`ToolRules::resolve`] as the gate applies it on `channel`: `ask`
    /// becomes `deny` on a channel without a human.
    fn setting(rules: Option<&ToolRules>, channel: Channel, qualifier: Option<&str>) -> Setting {
        Self::resolve(rules, qualifier).0.on(channel)
    }

    /// The explicit setting of exactly `qualifier` (`None`: the tool's
    /// own, `*`: every action's), for changing it in place.
    fn slot(&mut self, qualifier: Option<&str>) -> SlotMut<'_> {
        match qualifier {
            None => SlotMut::Plain(&mut self.tool),
            Some(EVERY_ACTION) => SlotMut::Plain(&mut self.every_action),
            Some(action) => SlotMut::Action(&mut self.actions, action.to_owned()),
        }
    }
}

/// One explicit entry of a [`ToolRules`], to read, set or clear.
enum SlotMut<'a> {
    Plain(&'a mut Option<Setting>),
    Action(&'a mut FastMap<Setting>, String),
}

impl SlotMut<'_> {
    fn set(self, setting: Setting) {
        match self {
            SlotMut::Plain(slot) => *slot = Some(setting),
            SlotMut::Action(actions, action) => {
                actions.insert(action, setting);
            }
        }
    }

    fn take(self) -> Option<Setting> {
        match self {
            SlotMut::Plain(slot) => slot.take(),
            SlotMut::Action(actions, action) => actions.remove(&action),
        }
    }
}

/// A [`Policy`]'s rules by registry position (see [`Policy::index`]).
#[derive(Debug, Default)]
pub(crate) struct PolicyIndex {
    by_position: Vec<[Option<ToolRules>; 3]>,
}

impl PolicyIndex {
    /// [`Policy::lookup`] for the tool at `position`.
    pub(crate) fn lookup(
        &self,
        channel: Channel,
        position: usize,
        action: Option<&str>,
    ) -> Setting {
        let rules = self
            .by_position
            .get(position)
            .and_then(|channels| channels[channel_index(channel)].as_ref());
        ToolRules::setting(rules, channel, action)
    }
}

/// Explicit settings per channel. A call without a qualifier is gated on
/// `tool`; a call with one on `tool.qualifier`, else `tool.*`; anything
/// unnamed asks, so a brand-new action prompts the first time even when
/// its tool is allowed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Policy {
    channels: [FastMap<ToolRules>; 3],
}

/// The slot of `channel` in the per-channel arrays (the policy's, reach's).
pub(crate) fn channel_index(channel: Channel) -> usize {
    match channel {
        Channel::Chat => 0,
        Channel::Subconscious => 1,
        Channel::External => 2,
    }
}

/// Splits `tool.action` (or `tool.*`); tool names never contain `.`.
pub(crate) fn split_permission(permission: &str) -> Result<(&str, Option<&str>), PolicyError> {
    let (tool, action) = match permission.split_once('.') {
        Some((tool, action)) => (tool, Some(action)),
        None => (permission, None),
    };
    let valid = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if valid(tool) && action.is_none_or(|action| action == EVERY_ACTION || valid(action)) {
        Ok((tool, action))
    } else {
        Err(PolicyError::BadPermission(permission.to_owned()))
    }
}

/// The file layout: one table per channel.
#[derive(serde::Serialize, serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    chat: BTreeMap<String, Setting>,
    #[serde(default)]
    subconscious: BTreeMap<String, Setting>,
    #[serde(default)]
    external: BTreeMap<String, Setting>,
}

const FILE_HEADER: &str = "\
# Permission policy: one table per channel, `tool`, `tool.action` or `tool.*` = setting.
# Settings: allow, ask (a human approves each call), deny, internal.
# A call without an action is gated on `tool`; a call with one on
# `tool.action`, else `tool.*` (every action); nothing else falls back, and
# anything unnamed asks. On subconscious and external there is nobody to
# ask, so ask means deny there.

";

impl Policy {
    /// An empty policy: everything asks.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `permission` (`tool`, `tool.action` or `tool.*`) on `channel`.
    pub fn set(
        &mut self,
        channel: Channel,
        permission: &str,
        setting: Setting,
    ) -> Result<(), PolicyError> {
        let (tool, qualifier) = split_permission(permission)?;
        self.channels[channel_index(channel)]
            .entry(tool.to_owned())
            .or_default()
            .slot(qualifier)
            .set(setting);
        Ok(())
    }

    /// Removes the explicit setting of `permission` on `channel`, so the
    /// call asks again (or, for a `tool.action`, follows `tool.*`);
    /// returns what it was.
    pub fn remove(&mut self, channel: Channel, permission: &str) -> Option<Setting> {
        let (tool, qualifier) = split_permission(permission).ok()?;
        self.channels[channel_index(channel)]
            .get_mut(tool)?
            .slot(qualifier)
            .take()
    }

    /// The explicit setting of exactly `permission`, without `tool.*`
    /// covering it or the default.
    pub fn explicit(&self, channel: Channel, permission: &str) -> Option<Setting> {
        let (tool, qualifier) = split_permission(permission).ok()?;
        let rules = self.channels[channel_index(channel)].get(tool)?;
        match qualifier {
            None => rules.tool,
            Some(EVERY_ACTION) => rules.every_action,
            Some(action) => rules.actions.get(action).copied(),
        }
    }

    /// The setting the gate applies to a call of `tool` with `qualifier`
    /// (its action, or the permission the ability derived) on `channel`:
    /// `tool` without a qualifier; `tool.qualifier`, else `tool.*`, with
    /// one; else `ask`. `ask` becomes `deny` on a channel without a human.
    pub fn lookup(&self, channel: Channel, tool: &str, qualifier: Option<&str>) -> Setting {
        ToolRules::setting(
            self.channels[channel_index(channel)].get(tool),
            channel,
            qualifier,
        )
    }

    /// [`Policy::lookup`] as written, before the channel turns `ask` into
    /// `deny`, and which entry decided it: what a policy manager shows.
    pub fn resolve(
        &self,
        channel: Channel,
        tool: &str,
        qualifier: Option<&str>,
    ) -> (Setting, SettingSource) {
        ToolRules::resolve(self.channels[channel_index(channel)].get(tool), qualifier)
    }

    /// Every permission the policy names explicitly on `channel`, sorted.
    pub fn permissions(&self, channel: Channel) -> Vec<(String, Setting)> {
        let mut named = Vec::new();
        for (tool, rules) in &self.channels[channel_index(channel)] {
            if let Some(setting) = rules.tool {
                named.push((tool.clone(), setting));
            }
            if let Some(setting) = rules.every_action {
                named.push((format!("{tool}.{EVERY_ACTION}"), setting));
            }
            for (action, setting) in &rules.actions {
                named.push((format!("{tool}.{action}"), *setting));
            }
        }
        named.sort_by(|a, b| a.0.cmp(&b.0));
        named
    }

    /// The rules of each of `tools` on each channel, by the tools' order:
    /// the dispatcher's registry positions, so a call's setting is read
    /// without looking its name up again.
    pub(crate) fn index(&self, tools: &[&str]) -> PolicyIndex {
        let by_position = tools
            .iter()
            .map(|tool| {
                [Channel::Chat, Channel::Subconscious, Channel::External]
                    .map(|channel| self.channels[channel_index(channel)].get(*tool).cloned())
            })
            .collect();
        PolicyIndex { by_position }
    }

    /// Parses the TOML policy file format.
    pub fn from_toml(text: &str) -> Result<Self, PolicyError> {
        let file: PolicyFile =
            toml::from_str(text).map_err(|error| PolicyError::Parse(error.to_string()))?;
        let mut policy = Policy::new();
        for (channel, table) in [
            (Channel::Chat, file.chat),
            (Channel::Subconscious, file.subconscious),
            (Channel::External, file.external),
        ] {
            for (permission, setting) in table {
                policy.set(channel, &permission, setting)?;
            }
        }
        Ok(policy)
    }

    /// Renders the policy as TOML, sorted, every channel present.
    pub fn to_toml(&self) -> String {
        let mut file = PolicyFile::default();
        for (channel, table) in [
            (Channel::Chat, &mut file.chat),
            (Channel::Subconscious, &mut file.subconscious),
            (Channel::External, &mut file.external),
        ] {
            table.extend(self.permissions(channel));
        }
        // Plain maps of strings always serialise; fall back to the header
        // alone rather than panic if that ever changes.
        let body = toml::to_string(&file).unwrap_or_default();
        format!("{FILE_HEADER}{body}")
    }

    /// Reads a policy file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, PolicyError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_toml(&text)
    }

    /// Writes the policy file, replacing it atomically (write, then rename).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), PolicyError> {
        let path = path.as_ref();
        let io_error = |source| PolicyError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(".tmp");
        std::fs::write(&temporary, self.to_toml()).map_err(io_error)?;
        std::fs::rename(&temporary, path).map_err(io_error)
    }
}
