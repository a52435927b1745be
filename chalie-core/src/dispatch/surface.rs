//! The policy surface: every permission a human can set.

use super::policy::{EVERY_ACTION, SettingSource, channel_index, split_permission};
use super::{Dispatcher, Setting};
use crate::Channel;
use crate::turn::permission;

/// One permission and the setting the gate applies to it on each channel.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SurfaceEntry {
    /// `tool`, `tool.action`, or `tool.*` (every action of the tool that
    /// the policy does not name one by one).
    pub permission: String,
    /// On [`Channel::Chat`].
    pub chat: Setting,
    /// On [`Channel::Subconscious`].
    pub subconscious: Setting,
    /// On [`Channel::External`].
    pub external: Setting,
    /// Per channel, which entry of the policy decided the setting.
    sources: [SettingSource; 3],
}

impl SurfaceEntry {
    /// The setting on `channel`.
    pub fn setting(&self, channel: Channel) -> Setting {
        match channel {
            Channel::Chat => self.chat,
            Channel::Subconscious => self.subconscious,
            Channel::External => self.external,
        }
    }

    /// Where the setting on `channel` comes from: the permission itself,
    /// its tool's `tool.*`, or the default `ask`.
    pub fn source(&self, channel: Channel) -> SettingSource {
        self.sources[channel_index(channel)]
    }

    /// Whether this is a `tool.*` entry, covering every action not named
    /// on its own.
    pub fn covers_every_action(&self) -> bool {
        self.permission.ends_with(".*")
    }
}

impl Dispatcher {
    /// Every permission a human can set, sorted, with the setting the gate
    /// applies on each channel (`ask` shown as `deny` where nobody can be
    /// asked) and where it comes from: for an ability without actions,
    /// `tool`; for one with actions, `tool.*` and each `tool.action` (a
    /// call always has its action, so `tool` alone gates nothing); for an
    /// external tool, its name; and every other permission the policy
    /// names (a qualifier an ability derives from its inputs). Internal
    /// abilities, and permissions `internal` on any channel (set so, or
    /// covered by a `tool.*` set so), are left out: they are plumbing, not
    /// a choice. [`policy_entries`](Self::policy_entries) keeps the latter.
    pub fn policy_surface(&self) -> Vec<SurfaceEntry> {
        self.policy_entries()
            .into_iter()
            .filter(|entry| {
                Channel::ALL
                    .iter()
                    .all(|channel| entry.setting(*channel) != Setting::Internal)
            })
            .collect()
    }

    /// Every permission of the [`policy_surface`](Self::policy_surface),
    /// and those it leaves out for being `internal` on some channel: what
    /// a policy manager shows, the `internal` cells locked and the others
    /// editable. Internal abilities are still left out.
    pub fn policy_entries(&self) -> Vec<SurfaceEntry> {
        let policy = self.policy.snapshot();
        let mut permissions: Vec<String> = Vec::new();
        for entry in self.registry.iter() {
            if entry.spec().internal() {
                continue;
            }
            let actions = entry.spec().actions();
            if actions.is_empty() {
                permissions.push(entry.name().to_owned());
            } else {
                permissions.push(format!("{}.{EVERY_ACTION}", entry.name()));
                for action in actions {
                    permissions.push(permission(entry.name(), Some(action.name())));
                }
            }
        }
        permissions.extend(
            self.external
                .iter()
                .flat_map(|proxy| proxy.tools())
                .map(|tool| tool.name),
        );
        for channel in [Channel::Chat, Channel::Subconscious, Channel::External] {
            permissions.extend(
                policy
                    .permissions(channel)
                    .into_iter()
                    .map(|(named, _)| named),
            );
        }
        permissions.sort();
        permissions.dedup();
        permissions
            .into_iter()
            .filter_map(|permission| {
                let (tool, qualifier) = split_permission(&permission).ok()?;
                if self
                    .registry
                    .get(tool)
                    .is_some_and(|entry| entry.spec().internal())
                {
                    return None;
                }
                let resolved =
                    [Channel::Chat, Channel::Subconscious, Channel::External].map(|channel| {
                        let (setting, source) = policy.resolve(channel, tool, qualifier);
                        (setting.on(channel), source)
                    });
                let settings = resolved.map(|(setting, _)| setting);
                Some(SurfaceEntry {
                    chat: settings[0],
                    subconscious: settings[1],
                    external: settings[2],
                    sources: resolved.map(|(_, source)| source),
                    permission,
                })
            })
            .collect()
    }
}
