//! The deterministic mapping from an MCP server's tool names (which may
//! hold dots, hyphens, capitals) to source-qualified chalie names.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

/// Longest tool name the major model APIs accept.
pub const MAX_NAME_LEN: usize = chalie_rules::MAX_NAME_LEN;

pub use crate::dispatch::SOURCE_SEPARATOR;

/// Two or more of a server's tools that map to the same chalie name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameCollision {
    /// The name they all map to.
    pub mapped: String,
    /// The server's names, sorted; the first keeps `mapped`, the others
    /// get `mapped_2`, `mapped_3`, ... in that order.
    pub originals: Vec<String>,
}

/// One segment in chalie's snake_case (`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`):
/// `getWeather` → `get_weather`, `files.read-all` → `files_read_all`,
/// `2fa` → `t_2fa`; nothing usable → `tool`.
pub fn snake_segment(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 2);
    let mut previous_lower = false;
    for ch in raw.chars() {
        if ch.is_ascii_uppercase() {
            if previous_lower {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
            previous_lower = false;
        } else if ch.is_ascii_lowercase() || ch.is_ascii_digit() {
            out.push(ch);
            previous_lower = true;
        } else {
            out.push('_');
            previous_lower = false;
        }
    }
    let mut collapsed = String::with_capacity(out.len());
    for ch in out.chars() {
        if ch == '_' && (collapsed.is_empty() || collapsed.ends_with('_')) {
            continue;
        }
        collapsed.push(ch);
    }
    while collapsed.ends_with('_') {
        collapsed.pop();
    }
    match collapsed.chars().next() {
        None => "tool".to_owned(),
        Some(first) if first.is_ascii_digit() => format!("t_{collapsed}"),
        Some(_) => collapsed,
    }
}

/// `server__tool`, cut to [`MAX_NAME_LEN`] with a hash of the original
/// name when too long, so two long names stay distinct.
pub fn qualify(server: &str, tool_segment: &str, original: &str) -> String {
    let full = format!("{server}{SOURCE_SEPARATOR}{tool_segment}");
    if full.len() <= MAX_NAME_LEN {
        return full;
    }
    let digest = Sha256::digest(original.as_bytes());
    let tag: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    let keep = MAX_NAME_LEN.saturating_sub(server.len() + SOURCE_SEPARATOR.len() + tag.len() + 1);
    let cut = tool_segment[..keep.min(tool_segment.len())].trim_end_matches('_');
    format!("{server}{SOURCE_SEPARATOR}{cut}_{tag}")
}

/// Maps every original tool name of `server` (already a snake segment) to
/// its qualified name. Deterministic: the same set of names gives the same
/// mapping in any order. Returns the mapping (qualified → original) and
/// the collisions found.
pub fn map_tool_names<'a>(
    server: &str,
    originals: impl IntoIterator<Item = &'a str>,
) -> (BTreeMap<String, String>, Vec<NameCollision>) {
    let sorted: BTreeSet<&str> = originals.into_iter().collect();
    let mut groups: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for original in &sorted {
        groups
            .entry(qualify(server, &snake_segment(original), original))
            .or_default()
            .push(original);
    }
    let mut mapping = BTreeMap::new();
    let mut collisions = Vec::new();
    // Names taken by a tool that maps there on its own come first, so a
    // suffix never steals one.
    let taken: BTreeSet<String> = groups.keys().cloned().collect();
    for (mapped, group) in &groups {
        mapping.insert(mapped.clone(), group[0].to_owned());
        if group.len() == 1 {
            continue;
        }
        collisions.push(NameCollision {
            mapped: mapped.clone(),
            originals: group.iter().map(|name| (*name).to_owned()).collect(),
        });
        let mut next = 2;
        for original in &group[1..] {
            let renamed = loop {
                let candidate = qualify_suffixed(mapped, next);
                next += 1;
                if !taken.contains(&candidate) && !mapping.contains_key(&candidate) {
                    break candidate;
                }
            };
            mapping.insert(renamed, (*original).to_owned());
        }
    }
    (mapping, collisions)
}

fn qualify_suffixed(mapped: &str, n: usize) -> String {
    let suffix = format!("_{n}");
    let keep = MAX_NAME_LEN.saturating_sub(suffix.len()).min(mapped.len());
    format!("{}{suffix}", &mapped[..keep])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_snake_case() {
        assert_eq!(snake_segment("getWeather"), "get_weather");
        assert_eq!(snake_segment("files.read-all"), "files_read_all");
        assert_eq!(snake_segment("__Already_snake__"), "already_snake");
        assert_eq!(snake_segment("2fa"), "t_2fa");
        assert_eq!(snake_segment("…"), "tool");
    }

    proptest::proptest! {
        /// Whatever a server calls its tool, the segment passes the name
        /// rule `#[ability]` enforces (its length is cut by `qualify`).
        #[test]
        fn every_segment_passes_the_name_rule(raw in proptest::prelude::any::<String>()) {
            let segment = snake_segment(&raw);
            proptest::prop_assert!(chalie_rules::is_snake_case(&segment), "{raw:?} -> {segment:?}");
        }
    }

    #[test]
    fn collisions_get_ordered_suffixes_in_any_input_order() {
        let forward = map_tool_names("srv", ["get-item", "get.item", "get_item_2"]);
        let backward = map_tool_names("srv", ["get_item_2", "get.item", "get-item"]);
        assert_eq!(forward, backward);
        let (mapping, collisions) = forward;
        assert_eq!(mapping["srv__get_item"], "get-item");
        assert_eq!(mapping["srv__get_item_2"], "get_item_2");
        assert_eq!(mapping["srv__get_item_3"], "get.item");
        assert_eq!(collisions.len(), 1);
        assert_eq!(collisions[0].originals, ["get-item", "get.item"]);
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let long = "a".repeat(80);
        let name = qualify("server", &long, &long);
        assert!(name.len() <= MAX_NAME_LEN, "{name}");
        assert_ne!(name, qualify("server", &long, &format!("{long}b")));
    }
}
