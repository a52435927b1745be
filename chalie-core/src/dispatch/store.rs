//! The live policy: read lock-free on every call, changed at run time.

use std::path::Path;
use std::sync::Arc;

use arc_swap::ArcSwap;

use super::policy::{Policy, PolicyError, Setting};
use crate::Channel;

/// The dispatcher's current policy. Reads are a lock-free pointer load
/// (`arc-swap`); a change copies the policy and swaps it in, so calls in
/// flight keep the policy they started with.
#[derive(Debug)]
pub struct PolicyStore {
    current: ArcSwap<Policy>,
}

impl PolicyStore {
    pub(crate) fn new(policy: Policy) -> Self {
        Self {
            current: ArcSwap::from_pointee(policy),
        }
    }

    /// The policy now.
    pub fn snapshot(&self) -> Arc<Policy> {
        self.current.load_full()
    }

    /// Sets `permission` (`tool` or `tool.action`) on `channel`, effective
    /// for the next call.
    pub fn set(
        &self,
        channel: Channel,
        permission: &str,
        setting: Setting,
    ) -> Result<(), PolicyError> {
        // Check the permission once, so the retried closure cannot fail.
        Policy::new().set(channel, permission, setting)?;
        self.current.rcu(|policy| {
            let mut policy = Policy::clone(policy);
            let _ = policy.set(channel, permission, setting);
            policy
        });
        Ok(())
    }

    /// Removes the explicit setting of `permission` on `channel`.
    pub fn remove(&self, channel: Channel, permission: &str) {
        self.current.rcu(|policy| {
            let mut policy = Policy::clone(policy);
            policy.remove(channel, permission);
            policy
        });
    }

    /// The setting the gate applies to `permission` on `channel`.
    pub fn get(&self, channel: Channel, permission: &str) -> Setting {
        let (tool, action) = match permission.split_once('.') {
            Some((tool, action)) => (tool, Some(action)),
            None => (permission, None),
        };
        self.current.load().lookup(channel, tool, action)
    }

    /// The setting for `tool` and `action`, without building a string.
    pub(crate) fn lookup(&self, channel: Channel, tool: &str, action: Option<&str>) -> Setting {
        self.current.load().lookup(channel, tool, action)
    }

    /// Replaces the whole policy.
    pub fn replace(&self, policy: Policy) {
        self.current.store(Arc::new(policy));
    }

    /// Replaces the policy with the one in the file at `path`.
    pub fn load(&self, path: impl AsRef<Path>) -> Result<(), PolicyError> {
        self.replace(Policy::load(path)?);
        Ok(())
    }

    /// Writes the current policy to `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), PolicyError> {
        self.current.load().save(path)
    }
}
