//! Keyword matching shared by memory, notes and the web search fixture.

/// Words too common to say what a text is about.
const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "what", "about", "did", "you", "your", "that", "this", "from",
    "have", "was", "are", "how", "who", "when", "where", "tell", "told", "know", "does", "say",
    "said", "any", "all", "there", "way", "into", "out",
];

/// The lower-cased content words of `text`: three letters or more, not a
/// stop word.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut found: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|word| word.chars().count() >= 3 && !STOP_WORDS.contains(&word.as_str()))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The share of `query_words` found in `text` (a word matches a word of
/// the text that starts with it, so `rain` finds `raining`), 0 to 1.
pub(crate) fn keyword_score(query_words: &[String], text: &str) -> f32 {
    if query_words.is_empty() {
        return 0.0;
    }
    let text_words = words(text);
    let matched = query_words
        .iter()
        .filter(|wanted| {
            text_words
                .iter()
                .any(|word| word.starts_with(wanted.as_str()))
        })
        .count();
    matched as f32 / query_words.len() as f32
}
