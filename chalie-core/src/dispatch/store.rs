//! The live policy: read lock-free on every call, changed at run time.

use std::path::Path;
use std::sync::Arc;

use arc_swap::ArcSwap;

use super::policy::{Policy, PolicyError, PolicyIndex, Setting};
use crate::{Channel, Registry};

/// The dispatcher's current policy. Reads are a lock-free pointer load
/// (`arc-swap`); a change copies the policy and swaps it in, so calls in
/// flight keep the policy they started with.
#[derive(Debug)]
pub struct PolicyStore {
    current: ArcSwap<Indexed>,
    /// The registry's names by position, to index every policy stored.
    tools: Vec<&'static str>,
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
        Self {
            current: ArcSwap::from_pointee(Indexed::new(Arc::new(policy), &tools)),
            tools,
        }
    }

    /// The policy now.
    pub fn snapshot(&self) -> Arc<Policy> {
        Arc::clone(&self.current.load().policy)
    }

    /// Swaps in `change` applied to a copy of the current policy, retried
    /// if another change landed meanwhile.
    fn change(&self, change: impl Fn(&mut Policy)) {
        self.current.rcu(|current| {
            let mut policy = Policy::clone(&current.policy);
            change(&mut policy);
            Indexed::new(Arc::new(policy), &self.tools)
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
        // Check the permission once, so the retried closure cannot fail.
        Policy::new().set(channel, permission, setting)?;
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
        let current = self.current.load();
        match position {
            Some(position) => current.index.lookup(channel, position, action),
            None => current.policy.lookup(channel, tool, action),
        }
    }

    /// Replaces the whole policy.
    pub fn replace(&self, policy: Policy) {
        self.current
            .store(Arc::new(Indexed::new(Arc::new(policy), &self.tools)));
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
