//! The description lint: would a model know what each ability does, when
//! to use it, how to fill each field, and which of two look-alikes to
//! pick?
//!
//! The checks are cheap heuristics over the static descriptors; the
//! look-alike check is a TF-IDF cosine over words and character trigrams
//! of the summaries (the embedding model lives in the discovery index, not
//! here).

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use serde_json::Value;

use crate::registry::AbilityEntry;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LintRule {
    /// The summary is too short to say what and when.
    SummaryTooShort,
    /// The summary is longer than a model reads carefully.
    SummaryTooLong,
    /// The summary never says when to use the ability.
    NoWhenToUse,
    /// The summary only restates the name.
    RestatesName,
    /// A field has no description.
    FieldUndocumented,
    /// A field's default is in the schema but not in its description.
    DefaultNotMentioned,
    /// A field's bounds are in the schema but not in its description.
    BoundsNotMentioned,
    /// Two abilities whose summaries are so alike a model could not choose.
    TooSimilar,
}

impl LintRule {
    /// The rule's kebab-case name, as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            LintRule::SummaryTooShort => "summary-too-short",
            LintRule::SummaryTooLong => "summary-too-long",
            LintRule::NoWhenToUse => "no-when-to-use",
            LintRule::RestatesName => "restates-name",
            LintRule::FieldUndocumented => "field-undocumented",
            LintRule::DefaultNotMentioned => "default-not-mentioned",
            LintRule::BoundsNotMentioned => "bounds-not-mentioned",
            LintRule::TooSimilar => "too-similar",
        }
    }
}

/// One problem the lint found.
#[derive(Debug, Clone, PartialEq)]
pub struct LintFinding {
    /// The ability it is about.
    pub ability: String,
    /// The field, for field rules (dotted for nested fields).
    pub field: Option<String>,
    /// The other ability, for [`LintRule::TooSimilar`].
    pub other: Option<String>,
    /// Which rule.
    pub rule: LintRule,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for LintFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: `{}`", self.rule.as_str(), self.ability)?;
        if let Some(field) = &self.field {
            write!(f, " field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Thresholds of the lint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LintOptions {
    /// Shorter summaries cannot say what and when (default 40 characters).
    pub min_summary_chars: usize,
    /// Longer summaries crowd the context (default 1024 characters).
    pub max_summary_chars: usize,
    /// Summaries at least this similar (cosine, 0 to 1) are look-alikes
    /// (default 0.6).
    pub similarity_threshold: f64,
}

impl Default for LintOptions {
    fn default() -> Self {
        Self {
            min_summary_chars: 40,
            max_summary_chars: 1024,
            similarity_threshold: 0.6,
        }
    }
}

/// Words that say when to use an ability.
const WHEN_WORDS: &[&str] = &[
    "use", "when", "whenever", "before", "after", "if", "instead",
];

/// Words too common to tell abilities apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "by", "with", "it", "its", "is",
    "are", "be", "this", "that", "as", "at", "from", "use", "when", "user", "users", "asks", "ask",
    "their", "them", "they", "you", "your", "one", "any", "all", "not", "no", "has", "have",
    "returns", "return", "e", "g", "s",
];

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn content_words(text: &str) -> BTreeSet<String> {
    words(text)
        .into_iter()
        .filter(|word| word.len() > 1 && !STOP_WORDS.contains(&word.as_str()))
        .collect()
}

/// Word and character-trigram features of a text, with counts.
fn features(text: &str) -> HashMap<String, f64> {
    let mut counts = HashMap::new();
    for word in words(text) {
        if STOP_WORDS.contains(&word.as_str()) {
            continue;
        }
        *counts.entry(format!("w:{word}")).or_insert(0.0) += 1.0;
        let padded: Vec<char> = format!(" {word} ").chars().collect();
        for window in padded.windows(3) {
            let trigram: String = window.iter().collect();
            *counts.entry(format!("c:{trigram}")).or_insert(0.0) += 0.5;
        }
    }
    counts
}

/// TF-IDF vectors of `texts`, the IDF taken over the texts themselves.
fn tfidf(texts: &[&str]) -> Vec<HashMap<String, f64>> {
    let counted: Vec<HashMap<String, f64>> = texts.iter().map(|text| features(text)).collect();
    let mut document_frequency: HashMap<&str, f64> = HashMap::new();
    for counts in &counted {
        for feature in counts.keys() {
            *document_frequency.entry(feature.as_str()).or_insert(0.0) += 1.0;
        }
    }
    let documents = texts.len() as f64;
    counted
        .iter()
        .map(|counts| {
            counts
                .iter()
                .map(|(feature, count)| {
                    let idf = ((1.0 + documents) / (1.0 + document_frequency[feature.as_str()]))
                        .ln()
                        + 1.0;
                    (feature.clone(), count * idf)
                })
                .collect()
        })
        .collect()
}

fn cosine(a: &HashMap<String, f64>, b: &HashMap<String, f64>) -> f64 {
    let dot: f64 = a
        .iter()
        .filter_map(|(feature, weight)| b.get(feature).map(|other| weight * other))
        .sum();
    let norm = |vector: &HashMap<String, f64>| vector.values().map(|w| w * w).sum::<f64>().sqrt();
    let denominator = norm(a) * norm(b);
    if denominator == 0.0 {
        0.0
    } else {
        dot / denominator
    }
}

/// How alike two summaries are, 0 to 1: the cosine of their TF-IDF
/// vectors over words and character trigrams, the IDF taken over the two.
pub fn summary_similarity(a: &str, b: &str) -> f64 {
    let vectors = tfidf(&[a, b]);
    cosine(&vectors[0], &vectors[1])
}

/// Reviews `entries` and returns every finding, sorted by ability.
pub fn lint<'a>(
    entries: impl IntoIterator<Item = &'a AbilityEntry>,
    options: &LintOptions,
) -> Vec<LintFinding> {
    let entries: Vec<&AbilityEntry> = entries.into_iter().collect();
    let mut findings = Vec::new();
    for entry in &entries {
        lint_summary(entry, options, &mut findings);
        lint_fields(entry.name(), entry.parameters(), "", &mut findings);
    }
    lint_similarity(&entries, options, &mut findings);
    findings.sort_by(|a, b| a.ability.cmp(&b.ability).then(a.rule.cmp(&b.rule)));
    findings
}

fn finding(ability: &str, rule: LintRule, message: String) -> LintFinding {
    LintFinding {
        ability: ability.to_owned(),
        field: None,
        other: None,
        rule,
        message,
    }
}

fn lint_summary(entry: &AbilityEntry, options: &LintOptions, findings: &mut Vec<LintFinding>) {
    let name = entry.name();
    let summary = entry.spec().summary().trim();
    let length = summary.chars().count();
    if length < options.min_summary_chars {
        findings.push(finding(
            name,
            LintRule::SummaryTooShort,
            format!(
                "the summary has {length} characters; say what it does and when to use it in at least {}",
                options.min_summary_chars
            ),
        ));
    }
    if length > options.max_summary_chars {
        findings.push(finding(
            name,
            LintRule::SummaryTooLong,
            format!(
                "the summary has {length} characters; keep it under {} and move details to field descriptions",
                options.max_summary_chars
            ),
        ));
    }
    let summary_words = words(summary);
    if !summary_words
        .iter()
        .any(|word| WHEN_WORDS.contains(&word.as_str()))
    {
        findings.push(finding(
            name,
            LintRule::NoWhenToUse,
            "the summary never says when to use it; add a sentence such as \"Use it when …\""
                .into(),
        ));
    }
    let name_words = content_words(&name.replace('_', " "));
    let beyond_name: BTreeSet<String> = content_words(summary)
        .into_iter()
        .filter(|word| {
            !name_words.iter().any(|name_word| {
                word.starts_with(name_word.as_str()) || name_word.starts_with(word.as_str())
            })
        })
        .collect();
    if beyond_name.len() < 3 {
        findings.push(finding(
            name,
            LintRule::RestatesName,
            "the summary only restates the name; say what it returns and what it is for".into(),
        ));
    }
}

/// Whether `description` already states `default`: it names the value (or,
/// for a flag, the word "default"). The lint asks every description to;
/// the strict rendering adds the default only to one that does not.
pub(crate) fn states_default(description: &str, default: &Value) -> bool {
    let lowered = description.to_lowercase();
    lowered.contains(&plain(default).to_lowercase())
        || (default.is_boolean() && lowered.contains("default"))
}

/// The text of a JSON value as a description would write it.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn lint_fields(ability: &str, schema: &Value, path: &str, findings: &mut Vec<LintFinding>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let field = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        let mut push = |rule: LintRule, message: String| {
            findings.push(LintFinding {
                ability: ability.to_owned(),
                field: Some(field.clone()),
                other: None,
                rule,
                message,
            });
        };
        let description = property
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        let lowered = description.to_lowercase();
        if description.is_empty() {
            push(
                LintRule::FieldUndocumented,
                "no description; add a `///` comment saying what the field takes".into(),
            );
        } else {
            if let Some(default) = property.get("default")
                && !states_default(description, default)
            {
                push(
                    LintRule::DefaultNotMentioned,
                    format!(
                        "the default is {} but the description does not say so; add \"default {}\"",
                        plain(default),
                        plain(default)
                    ),
                );
            }
            let is_integer = property.get("type").and_then(Value::as_str) == Some("integer");
            let mut missing = Vec::new();
            for key in [
                "minimum",
                "maximum",
                "minLength",
                "maxLength",
                "minItems",
                "maxItems",
            ] {
                let Some(bound) = property.get(key) else {
                    continue;
                };
                // Unsigned integers carry `minimum: 0` from their type; the
                // model knows a count is not negative.
                if key == "minimum" && is_integer && bound.as_f64() == Some(0.0) {
                    continue;
                }
                if !lowered.contains(&plain(bound)) {
                    missing.push(format!("{key} {}", plain(bound)));
                }
            }
            if !missing.is_empty() {
                push(
                    LintRule::BoundsNotMentioned,
                    format!(
                        "the schema bounds it ({}) but the description does not say so; add e.g. \"1 to 50\"",
                        missing.join(", ")
                    ),
                );
            }
        }
        lint_fields(ability, property, &field, findings);
        if let Some(items) = property.get("items") {
            lint_fields(ability, items, &format!("{field}[]"), findings);
        }
    }
}

fn lint_similarity(
    entries: &[&AbilityEntry],
    options: &LintOptions,
    findings: &mut Vec<LintFinding>,
) {
    let summaries: Vec<&str> = entries.iter().map(|entry| entry.spec().summary()).collect();
    let vectors = tfidf(&summaries);
    for first in 0..entries.len() {
        for second in first + 1..entries.len() {
            let similarity = cosine(&vectors[first], &vectors[second]);
            if similarity < options.similarity_threshold {
                continue;
            }
            let (a, b) = (entries[first].name(), entries[second].name());
            let words_a = content_words(summaries[first]);
            let words_b = content_words(summaries[second]);
            let only = |mine: &BTreeSet<String>, theirs: &BTreeSet<String>| {
                let distinct: Vec<String> = mine
                    .difference(theirs)
                    .take(6)
                    .map(|word| format!("`{word}`"))
                    .collect();
                if distinct.is_empty() {
                    "nothing".to_owned()
                } else {
                    distinct.join(", ")
                }
            };
            findings.push(LintFinding {
                ability: a.to_owned(),
                field: None,
                other: Some(b.to_owned()),
                rule: LintRule::TooSimilar,
                message: format!(
                    "its summary is {:.0}% alike to `{b}`'s, so a model could not choose; only `{a}` says {}, only `{b}` says {}; say in each when to use it rather than the other, or merge them",
                    similarity * 100.0,
                    only(&words_a, &words_b),
                    only(&words_b, &words_a),
                ),
            });
        }
    }
}
