//! The policy surface: every permission a human can set.

use super::{Dispatcher, Setting};
use crate::Channel;

/// One permission and the setting the gate applies to it on each channel.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SurfaceEntry {
    /// `tool` or `tool.action`.
    pub permission: String,
    /// On [`Channel::Chat`].
    pub chat: Setting,
    /// On [`Channel::Subconscious`].
    pub subconscious: Setting,
    /// On [`Channel::External`].
    pub external: Setting,
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
}

impl Dispatcher {
    /// Every permission of a non-internal ability (`tool` and each
    /// `tool.action`) and of every external tool, sorted, with the setting
    /// the gate applies on each channel (fallbacks resolved, `ask` shown
    /// as `deny` where nobody can be asked). A permission set to
    /// `internal` on any channel is left out: it is plumbing, not a choice.
    pub fn policy_surface(&self) -> Vec<SurfaceEntry> {
        let policy = self.policy.snapshot();
        let mut permissions: Vec<(String, Option<&str>)> = Vec::new();
        for entry in self.registry.iter() {
            if entry.spec().internal() {
                continue;
            }
            permissions.push((entry.name().to_owned(), None));
            for action in entry.spec().actions() {
                permissions.push((entry.name().to_owned(), Some(action.name())));
            }
        }
        let external: Vec<String> = self
            .external
            .iter()
            .flat_map(|proxy| proxy.tools())
            .map(|tool| tool.name)
            .collect();
        permissions.extend(external.into_iter().map(|name| (name, None)));
        let mut surface: Vec<SurfaceEntry> = permissions
            .into_iter()
            .filter_map(|(tool, action)| {
                let setting = |channel| policy.lookup(channel, &tool, action);
                let entry = SurfaceEntry {
                    permission: match action {
                        Some(action) => format!("{tool}.{action}"),
                        None => tool.clone(),
                    },
                    chat: setting(Channel::Chat),
                    subconscious: setting(Channel::Subconscious),
                    external: setting(Channel::External),
                };
                let internal =
                    [entry.chat, entry.subconscious, entry.external].contains(&Setting::Internal);
                (!internal).then_some(entry)
            })
            .collect();
        surface.sort_by(|a, b| a.permission.cmp(&b.permission));
        surface
    }
}
