//! The **reach** step ([the steps](super::Dispatcher#the-steps-of-a-call)):
//! whether the turn may call a tool at all.
//!
//! A turn reaches its channel's always-on core, the channel's pinned
//! tools, what code pinned on the turn itself, and what `find_tools`
//! activated in this turn (bounded by the channel's profile, when it has
//! one). The same rule holds for abilities and external tools (an MCP
//! server's `server__tool`): a name is a name. Everything else is refused as `tool-not-available` before it is
//! validated or any approver is asked: what the model was not offered, it
//! cannot run, whatever name it sends.

use std::collections::HashMap;

use super::policy::channel_index;
use crate::{Channel, Registry, Turn, contracts::CORE_ABILITIES, contracts::Profile};

/// What one channel offers every turn, and what its turns may discover.
///
/// The default is the always-on core ([`CORE_ABILITIES`]: discovery,
/// memory, the scratchpad), nothing pinned, and no profile, so `find_tools`
/// may activate any discoverable ability. Configure it per channel with
/// [`DispatcherBuilder::channel_tools`](crate::dispatch::DispatcherBuilder::channel_tools):
///
/// ```
/// use chalie_core::{dispatch::ChannelTools, contracts::Profile};
///
/// // A web channel: no memory, `web_search` on every request, and only
/// // the `web` toolset reachable through `find_tools`.
/// let web = ChannelTools::new()
///     .core(["find_tools", "scratchpad"])
///     .pin(["web_search"])
///     .profile(Profile::new().with_toolset("web"));
/// assert!(web.is_offered("web_search"));
/// assert!(!web.is_offered("memory"));
/// ```
#[derive(Debug, Clone)]
pub struct ChannelTools {
    core: Vec<String>,
    pinned: Vec<String>,
    profile: Option<Profile>,
}

impl Default for ChannelTools {
    fn default() -> Self {
        Self::new()
    }
}

impl ChannelTools {
    /// The always-on core, nothing pinned, no profile.
    pub fn new() -> Self {
        Self {
            core: CORE_ABILITIES
                .iter()
                .map(|name| (*name).to_owned())
                .collect(),
            pinned: Vec::new(),
            profile: None,
        }
    }

    /// Replaces the always-on core (whether the channel carries
    /// `find_tools`, `find_skills`, memory, the scratchpad) with `names`.
    pub fn core<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.core = names.into_iter().map(Into::into).collect();
        self
    }

    /// Also offers `names` on every request of this channel.
    pub fn pin<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        for name in names {
            let name = name.into();
            if !self.pinned.contains(&name) {
                self.pinned.push(name);
            }
        }
        self
    }

    /// Bounds what `find_tools` may activate on this channel to what
    /// `profile` exposes.
    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = Some(profile);
        self
    }

    /// The always-on core, in order.
    pub fn core_names(&self) -> &[String] {
        &self.core
    }

    /// The pinned abilities, in order.
    pub fn pinned_names(&self) -> &[String] {
        &self.pinned
    }

    /// The profile bounding discovery, if any.
    pub fn profile_bound(&self) -> Option<&Profile> {
        self.profile.as_ref()
    }

    /// Whether every request of the channel offers `name` (core or pinned).
    pub fn is_offered(&self, name: &str) -> bool {
        self.core
            .iter()
            .chain(&self.pinned)
            .any(|offered| offered == name)
    }

    /// Whether a tool `find_tools` activated may be reached here: any,
    /// without a profile; with one, an ability in its toolsets or core, an
    /// external tool of a server or by a name it lists (and does not hide).
    fn admits_discovered(&self, registry: &Registry, name: &str) -> bool {
        match &self.profile {
            None => true,
            Some(profile) => profile.exposes(registry, name),
        }
    }
}

/// The channels' tools, and the one rule of what a turn may reach.
#[derive(Debug, Default)]
pub(crate) struct Channels {
    // Looked up on every call: a fast hasher, the keys are our own.
    configured: HashMap<Channel, ChannelTools, foldhash::fast::RandomState>,
    unconfigured: ChannelTools,
    /// Per channel, by registry position: whether every request offers
    /// the ability (core or pinned). Filled by [`index`](Self::index)
    /// when the dispatcher is built, so a call's reach is one read
    /// instead of a comparison with every offered name.
    offered_abilities: [Vec<bool>; 3],
}

impl Channels {
    /// Fills the offered abilities of each channel from its names, once
    /// the channels are configured.
    pub(crate) fn index(mut self, registry: &Registry) -> Self {
        for channel in [Channel::Chat, Channel::Subconscious, Channel::External] {
            let tools = self.of(channel);
            let offered = registry
                .iter()
                .map(|entry| tools.is_offered(entry.name()))
                .collect();
            self.offered_abilities[channel_index(channel)] = offered;
        }
        self
    }

    pub(crate) fn set(&mut self, channel: Channel, tools: ChannelTools) {
        self.configured.insert(channel, tools);
    }

    pub(crate) fn entry(&mut self, channel: Channel) -> &mut ChannelTools {
        self.configured.entry(channel).or_default()
    }

    pub(crate) fn of(&self, channel: Channel) -> &ChannelTools {
        self.configured.get(&channel).unwrap_or(&self.unconfigured)
    }

    /// The rule: offered on the channel, pinned on the turn, or activated
    /// in the turn and admitted by the channel's profile.
    pub(crate) fn reaches(&self, registry: &Registry, turn: &Turn, name: &str) -> bool {
        let position = registry.lookup(name).map(|(position, _)| position);
        self.reaches_resolved(registry, turn, name, position)
    }

    /// [`reaches`](Self::reaches) for a name already resolved: `position`
    /// is the ability's place in the registry, `None` for an external
    /// tool (whose offered names are compared).
    pub(crate) fn reaches_resolved(
        &self,
        registry: &Registry,
        turn: &Turn,
        name: &str,
        position: Option<usize>,
    ) -> bool {
        let offered = match position {
            Some(position) => self.offered_abilities[channel_index(turn.channel())]
                .get(position)
                .copied()
                .unwrap_or(false),
            None => self.of(turn.channel()).is_offered(name),
        };
        offered
            || turn.is_pinned(name)
            || (turn.has_activated(name)
                && self.of(turn.channel()).admits_discovered(registry, name))
    }

    /// What the next request of `turn` offers, each once, in order: the
    /// channel's core, its pins, the turn's pins, then what was activated.
    pub(crate) fn offered(&self, registry: &Registry, turn: &Turn) -> Vec<String> {
        let tools = self.of(turn.channel());
        let mut seen = std::collections::HashSet::new();
        let activated = turn.activated_tools();
        let discovered = activated
            .iter()
            .filter(|name| tools.admits_discovered(registry, name));
        tools
            .core
            .iter()
            .chain(&tools.pinned)
            .chain(turn.pinned_tools())
            .chain(discovered)
            .filter(|name| seen.insert(name.as_str()))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_reaches_the_core_its_pins_and_what_it_activated() {
        let registry = &crate::registry().expect("unique names").filter(|_| false);
        let mut channels = Channels::default();
        channels.set(Channel::Chat, ChannelTools::new().pin(["web_search"]));
        let channels = channels.index(registry);
        let turn = Turn::builder(Channel::Chat).pin(["weather"]).build();
        assert!(channels.reaches(registry, &turn, "find_tools"));
        assert!(channels.reaches(registry, &turn, "web_search"));
        assert!(channels.reaches(registry, &turn, "weather"));
        assert!(!channels.reaches(registry, &turn, "calendar"));
        turn.activate_tools(["calendar"]);
        assert!(channels.reaches(registry, &turn, "calendar"));
        assert_eq!(
            channels.offered(registry, &turn),
            [
                "find_tools",
                "find_skills",
                "memory",
                "scratchpad",
                "web_search",
                "weather",
                "calendar"
            ]
        );
        let elsewhere = Turn::builder(Channel::External).build();
        assert!(!channels.reaches(registry, &elsewhere, "web_search"));
    }
    // A profile bounding discovery needs abilities linked: see
    // `tests/dispatch/reach.rs`, which composes the dispatcher.
}
