//! The synthetic catalog the benches index: verb-noun abilities with random word phrases.

use chalie_index::{Descriptor, Source};

const VERBS: [&str; 12] = [
    "get", "list", "create", "delete", "update", "search", "send", "read", "sync", "convert",
    "check", "plan",
];
const NOUNS: [&str; 16] = [
    "file", "email", "invoice", "weather", "calendar", "ticket", "photo", "repo", "order",
    "flight", "note", "user", "report", "song", "map", "price",
];
const WORDS: [&str; 24] = [
    "city", "today", "project", "team", "budget", "customer", "draft", "archive", "public",
    "private", "weekly", "summary", "latest", "shared", "travel", "account", "backup", "image",
    "audio", "message", "record", "status", "history", "folder",
];

/// Deterministic word picker (an LCG), so every run benches the same catalog.
struct Words(u64);

impl Words {
    fn next(&mut self, list: &[&'static str]) -> &'static str {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        list[((self.0 >> 33) as usize) % list.len()]
    }
    fn phrase(&mut self, length: usize) -> String {
        (0..length)
            .map(|_| self.next(&WORDS))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// `count` abilities with `examples` example phrases each, the same on every run.
pub fn catalog(count: usize, examples: usize) -> Vec<Descriptor> {
    let mut words = Words(7);
    (0..count)
        .map(|i| {
            let (verb, noun) = (words.next(&VERBS), words.next(&NOUNS));
            Descriptor {
                name: format!("{verb}_{noun}_{i}"),
                summary: format!("{verb} the {noun} for the {}", words.phrase(8)),
                examples: (0..examples)
                    .map(|_| format!("{verb} my {noun} {}", words.phrase(5)))
                    .collect(),
                tooltip: String::new(),
                source: Source::Local,
                toolset: "bench".into(),
                discoverable: true,
                ..Descriptor::default()
            }
        })
        .collect()
}
