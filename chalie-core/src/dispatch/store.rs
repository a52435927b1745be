//! The live policy: read lock-free on every call, changed at run time.

use std::path::Path;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;

use super::policy::{Policy, PolicyError, PolicyIndex, Setting, channel_index, split_permission};
use crate::{Channel, Registry};

/// The dispatcher's current policy. Reads are a lock-free pointer load
/// (`arc-swap`); a change copies the policy and swaps it in, so calls in
/// flight keep the policy they started with. The setting of each
/// registered ability as a whole (no action) is also kept in one atomic
/// byte per channel, the read of most calls: one load, where the pointer
/// load costs a call several times that.
#[derive(Debug)]
pub struct PolicyStore {
    current: ArcSwap<Indexed>,
    /// The registry's names by position, to index every policy stored.
    tools: Vec<&'static str>,
    /// By registry position and channel: [`Setting::on`] the channel of
    /// the tool's own setting in `current`, rewritten after each change.
    whole_tool: Box<[[AtomicU8; 3]]>,
    /// Held by a change from its swap until `whole_tool` matches it, so
    /// the bytes always end as the last policy swapped in.
    changing: Mutex<()>,
}

/// A policy and its rules by registry position, swapped in together.
#[derive(Debug)]
struct Indexed {
    policy: Arc<Policy>,
    index: PolicyIndex,
}

impl PolicyStore {
    pub(crate) fn new(policy: Policy, registry: &Registry) -> Self {
        let tools: Vec<&'static str> = registry.iter().map(|entry| entry.name()).collect();
        let store = Self {
            current: ArcSwap::from_pointee(Indexed::new(Arc::new(policy), &tools)),
            whole_tool: tools.iter().map(|_| Default::default()).collect(),
            tools,
            changing: Mutex::new(()),
        };
        store.rewrite_whole_tool();
        store
    }

    /// Rewrites `whole_tool` from the current policy.
    fn rewrite_whole_tool(&self) {
        let current = self.current.load();
        for (position, channels) in self.whole_tool.iter().enumerate() {
            for channel in [Channel::Chat, Channel::Subconscious, Channel::External] {
                let setting = current.index.lookup(channel, position, None);
                channels[channel_index(channel)].store(setting as u8, Ordering::Release);
            }
        }
    }

    /// Swaps in what `next` makes of the current policy, one change at a
    /// time.
    fn swap(&self, next: impl FnOnce(&Policy) -> Policy) {
        let _changing = self.changing.lock().unwrap_or_else(PoisonError::into_inner);
        let policy = next(&self.current.load().policy);
        self.current
            .store(Arc::new(Indexed::new(Arc::new(policy), &self.tools)));
        self.rewrite_whole_tool();
    }

    /// The policy now.
    pub fn snapshot(&self) -> Arc<Policy> {
        Arc::clone(&self.current.load().policy)
    }

    /// Swaps in `change` applied to a copy of the current policy: one
    /// clone and one index rebuild however much `change` does, and no
    /// other change lost between the copy and the swap.
    pub(crate) fn change(&self, change: impl FnOnce(&mut Policy)) {
        self.swap(|current| {
            let mut policy = current.clone();
            change(&mut policy);
            policy
        });
    }

    /// Sets `permission` (`tool` or `tool.action`) on `channel`, effective
    /// for the next call.
    pub fn set(
        &self,
        channel: Channel,
        permission: &str,
        setting: Setting,
    ) -> Result<(), PolicyError> {
        // Check the permission first, so the change itself cannot fail.
        split_permission(permission)?;
        self.change(|policy| {
            let _ = policy.set(channel, permission, setting);
        });
        Ok(())
    }

    /// Removes the explicit setting of `permission` on `channel`.
    pub fn remove(&self, channel: Channel, permission: &str) {
        self.change(|policy| {
            policy.remove(channel, permission);
        });
    }

    /// The setting the gate applies to `permission` on `channel`.
    pub fn get(&self, channel: Channel, permission: &str) -> Setting {
        let (tool, action) = match permission.split_once('.') {
            Some((tool, action)) => (tool, Some(action)),
            None => (permission, None),
        };
        self.current.load().policy.lookup(channel, tool, action)
    }

    /// The setting of `tool` and `action` as written, before the channel
    /// turns `ask` into `deny`: whether a caller that can ask its user a
    /// round trip later may ask about the call.
    pub(crate) fn written(&self, channel: Channel, tool: &str, action: Option<&str>) -> Setting {
        self.current.load().policy.resolve(channel, tool, action).0
    }

    /// The setting for `tool` and `action`, without building a string:
    /// by the tool's registry `position` when it is an ability, by its
    /// name for an external tool.
    pub(crate) fn lookup(
        &self,
        channel: Channel,
        tool: &str,
        position: Option<usize>,
        action: Option<&str>,
    ) -> Setting {
        if let (Some(position), None) = (position, action)
            && let Some(channels) = self.whole_tool.get(position)
        {
            let setting = channels[channel_index(channel)].load(Ordering::Acquire);
            return Setting::from_u8(setting);
        }
        let current = self.current.load();
        match position {
            Some(position) => current.index.lookup(channel, position, action),
            None => current.policy.lookup(channel, tool, action),
        }
    }

    /// Replaces the whole policy.
    pub fn replace(&self, policy: Policy) {
        self.swap(|_| policy);
    }

    /// Replaces the policy with the one in the file at `path`.
    pub fn load(&self, path: impl AsRef<Path>) -> Result<(), PolicyError> {
        self.replace(Policy::load(path)?);
        Ok(())
    }

    /// Writes the current policy to `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), PolicyError> {
        self.current.load().policy.save(path)
    }
}

impl Indexed {
    fn new(policy: Arc<Policy>, tools: &[&str]) -> Self {
        let index = policy.index(tools);
        Self { policy, index }
    }
}
