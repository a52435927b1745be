//! Personalised playbooks: the preferences and corrections a user kept
//! through [`preference()`](crate::preferences::preference()), returned by
//! `find_skills` with each playbook they apply to, through chalie-index's
//! [`SkillRules`] seam.

use std::collections::HashMap;
use std::sync::Arc;

use chalie_core::Turn;
use chalie_index::SkillRules;

use crate::text::words;
use crate::userdata::{Memory, MemoryItem};

/// The rules of each playbook for the turn's user: a preference or
/// correction applies to a playbook when it names it (`skill`), or, naming
/// none, when it shares a content word with the playbook's name, summary
/// or example requests ("window seats on flights" and the trip playbook's
/// "put flights and bookings in the calendar").
pub struct PlaybookRules {
    memory: Arc<Memory>,
    /// Each shipped playbook's content words, by name.
    topics: HashMap<String, Vec<String>>,
}

impl PlaybookRules {
    /// Rules read from `memory`, matched to the shipped playbooks
    /// ([`skills`](crate::skills)).
    pub fn new(memory: Arc<Memory>) -> Self {
        let topics = crate::skills()
            .unwrap_or_default()
            .into_iter()
            .map(|skill| {
                let text = format!(
                    "{} {} {}",
                    skill.name.replace('_', " "),
                    skill.summary,
                    skill.examples.join(" ")
                );
                (skill.name, topic_words(&text))
            })
            .collect();
        Self { memory, topics }
    }

    /// Whether the rule `item`, whose content words are `words`, applies
    /// to the playbook `skill`.
    fn applies(&self, item: &MemoryItem, words: &[String], skill: &str) -> bool {
        if let Some(named) = &item.skill {
            return named.trim().eq_ignore_ascii_case(skill);
        }
        let Some(topic) = self.topics.get(skill) else {
            return false;
        };
        words
            .iter()
            .any(|word| topic.iter().any(|known| shares_stem(known, word)))
    }
}

/// Word stems that say nothing of a task: every preference and every
/// playbook uses them ("I always want…", "Use it when the user wants…").
const GENERIC: [&str; 14] = [
    "always", "never", "want", "prefer", "like", "please", "help", "make", "sure", "user", "use",
    "playbook", "when", "get",
];

/// The words of `text` that can tie a preference to a playbook.
fn topic_words(text: &str) -> Vec<String> {
    words(text)
        .into_iter()
        .filter(|word| !GENERIC.iter().any(|stem| word.starts_with(stem)))
        .collect()
}

/// A word of the playbook and one of the preference match when one starts
/// with the other (`hotel`, `hotels`) or both start with the same four
/// letters (`booking`, `booked`).
fn shares_stem(a: &str, b: &str) -> bool {
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    common >= 4 || a.starts_with(b) || b.starts_with(a)
}

impl SkillRules for PlaybookRules {
    fn rules(&self, skills: &[&str], turn: &Turn) -> Vec<Vec<String>> {
        // A turn for nobody has no preferences; a store that fails costs
        // the personalisation, not the playbooks.
        let Some(owner) = turn.principal() else {
            return Vec::new();
        };
        // One read of the user's memories for every playbook found, and
        // each rule's words worked out once.
        let Ok(items) = self.memory.items(owner) else {
            return Vec::new();
        };
        let rules: Vec<(MemoryItem, Vec<String>)> = items
            .into_iter()
            .filter(|item| item.kind.is_rule())
            .map(|item| {
                let words = topic_words(&item.content);
                (item, words)
            })
            .collect();
        skills
            .iter()
            .map(|skill| {
                rules
                    .iter()
                    .filter(|(item, words)| self.applies(item, words, skill))
                    .map(|(item, _)| item.content.clone())
                    .collect()
            })
            .collect()
    }
}
