//! Descriptors of the abilities linked into this program, read from chalie-core's registry.

use chalie_core::{AbilityEntry, Registry};

use crate::descriptor::{Descriptor, Source};

impl Descriptor {
    /// The descriptor of one linked ability: name, summary, examples, tooltip, toolset,
    /// discoverability and parameters schema, from the facts `#[ability]` fixed at compile
    /// time.
    ///
    /// The schema's property names and descriptions are searched with the summary, so
    /// changing them makes an index built before the change stale.
    pub fn from_entry(entry: &AbilityEntry) -> Descriptor {
        let spec = entry.spec();
        Descriptor {
            name: spec.name().to_owned(),
            summary: spec.summary().to_owned(),
            examples: spec.examples().iter().map(|e| (*e).to_owned()).collect(),
            tooltip: spec.tooltip().to_owned(),
            source: Source::Local,
            toolset: spec.toolset().to_owned(),
            discoverable: spec.discoverable(),
            parameters: Some(entry.parameters().clone()),
            body: String::new(),
        }
    }

    /// One descriptor per ability of `registry`, non-discoverable ones included (they are
    /// fingerprinted, so flipping `discoverable` makes the index stale, but never indexed).
    ///
    /// ```
    /// let registry = chalie_core::registry().expect("unique ability names");
    /// let descriptors = chalie_index::Descriptor::from_registry(registry);
    /// // find_tools and find_skills are linked with this crate and never discoverable.
    /// let find_tools = descriptors.iter().find(|d| d.name == "find_tools").expect("linked");
    /// assert!(!find_tools.discoverable);
    /// ```
    pub fn from_registry(registry: &Registry) -> Vec<Descriptor> {
        registry.iter().map(Descriptor::from_entry).collect()
    }
}
