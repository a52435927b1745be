//! The **resolve** step ([the steps](super::Dispatcher#the-steps-of-a-call)):
//! from a name to what will run, or the closest names.

use std::sync::Arc;

use super::external::{ExternalTool, ExternalTools};
use crate::{AbilityEntry, Registry};

/// What a name resolved to.
pub(crate) enum Target<'a> {
    /// The entry and its position in the registry, by which reach is
    /// answered without comparing the name again.
    Ability(usize, &'a AbilityEntry),
    /// Boxed: a listing is data of some size, and the call's future holds it.
    External(Arc<dyn ExternalTools>, Box<ExternalTool>),
}

/// Resolves `name`, or returns the closest known names.
pub(crate) fn resolve<'a>(
    registry: &'a Registry,
    external: &[Arc<dyn ExternalTools>],
    name: &str,
) -> Result<Target<'a>, Vec<String>> {
    if let Some(proxy) = external
        .iter()
        .find(|proxy| !proxy.prefix().is_empty() && name.starts_with(proxy.prefix()))
    {
        let tools = proxy.tools();
        return match tools.iter().position(|tool| tool.name == name) {
            Some(index) => Ok(Target::External(
                Arc::clone(proxy),
                Box::new(tools.into_iter().nth(index).ok_or_else(Vec::new)?),
            )),
            None => {
                // Compare what follows the prefix: every name shares it.
                let prefix = proxy.prefix();
                let close = suggest(
                    after(name, prefix),
                    tools.iter().map(|tool| after(&tool.name, prefix)),
                );
                Err(close
                    .into_iter()
                    .map(|found| format!("{prefix}{found}"))
                    .collect())
            }
        };
    }
    match registry.lookup(name) {
        Some((index, entry)) => Ok(Target::Ability(index, entry)),
        None => {
            // External names are suggested too: the model may have dropped
            // the prefix.
            let external_names: Vec<String> = external
                .iter()
                .flat_map(|proxy| proxy.tools())
                .map(|tool| tool.name)
                .collect();
            // Only names the model could discover: a suggestion must not
            // reveal an ability kept out of discovery.
            let mut names: Vec<&str> = registry
                .iter()
                .filter(|entry| entry.spec().discoverable())
                .map(AbilityEntry::name)
                .collect();
            names.extend(external_names.iter().map(String::as_str));
            Err(suggest(name, names.into_iter()))
        }
    }
}

fn after<'s>(full: &'s str, prefix: &str) -> &'s str {
    full.strip_prefix(prefix).unwrap_or(full)
}

/// Up to three names close to `name`: by edit distance, or sharing a
/// `_`-separated segment (`delete_event` for `event_delete`).
pub(crate) fn suggest<'n>(name: &str, known: impl Iterator<Item = &'n str>) -> Vec<String> {
    let wanted = name.to_ascii_lowercase();
    let wanted_segments: Vec<&str> = wanted
        .split(['_', '.', '-'])
        .filter(|s| !s.is_empty())
        .collect();
    let mut scored: Vec<(usize, &str)> = known
        .filter_map(|candidate| {
            let lower = candidate.to_ascii_lowercase();
            let distance = strsim::levenshtein(&wanted, &lower);
            let shared = lower
                .split(['_', '.', '-'])
                .filter(|segment| segment.len() > 2 && wanted_segments.contains(segment))
                .count();
            let close = distance <= (wanted.len().max(lower.len()) / 3).max(2);
            (close || shared > 0).then(|| (distance.saturating_sub(shared * 4), candidate))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(3)
        .map(|(_, candidate)| candidate.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::suggest;

    #[test]
    fn close_names_first() {
        let known = ["weather", "calendar", "delete_event", "memory"];
        assert_eq!(suggest("wether", known.into_iter()), ["weather"]);
        assert_eq!(suggest("event_delete", known.into_iter()), ["delete_event"]);
        assert!(suggest("zzzzzzzzzz", known.into_iter()).is_empty());
    }
}
