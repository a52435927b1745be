//! The seams the console's Tools view asks the app for: a tokenizer to
//! count what each definition costs, and discovery to show what a request
//! would activate. Both need crates chalie-core does not depend on (a
//! tokenizer, the index engine); chalie-index implements [`Discover`].

use serde::{Deserialize, Serialize};

/// Counts the tokens of a tool definition as one provider receives it
/// (compact JSON). Give the tokenizer your model uses, e.g. o200k_base.
pub trait CountTokens: Send + Sync + 'static {
    /// The tokens of `text`.
    fn count(&self, text: &str) -> usize;
    /// The encoding's name, shown beside every count (`"o200k_base"`).
    fn encoding(&self) -> &str;
}

/// Runs a discovery query the way `find_tools` would, and says how each
/// rung of the cascade answered. chalie-index's discovery is the usual one.
pub trait Discover: Send + Sync + 'static {
    /// The report for `query`, or why the search could not run (an index
    /// that failed to open, say).
    fn discover(&self, query: &str) -> Result<DiscoveryReport, String>;
}

/// What one discovery query found, rung by rung. Serialised in camelCase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryReport {
    /// The query as searched.
    pub query: String,
    /// Each rung of the cascade in the order it runs (exact name, keyword,
    /// vector), with what it found.
    pub rungs: Vec<RungReport>,
    /// The rule vector hits must pass, in words (`"0.62 with examples,
    /// 0.55 summary only"`).
    pub ceiling: String,
    /// What `find_tools` would activate, in activation order.
    pub activated: Vec<String>,
    /// What it would only suggest (the runners-up).
    pub suggested: Vec<String>,
}

/// One rung's candidates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RungReport {
    /// `exact`, `keyword` or `vector`.
    pub rung: String,
    /// Its candidates, best first.
    pub candidates: Vec<Candidate>,
}

/// One candidate of a rung.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// The tool's name.
    pub name: String,
    /// Its score where the rung ranks (a vector hit's cosine distance:
    /// lower is closer); `None` for a rung that matches or does not.
    pub score: Option<f32>,
    /// The ceiling this candidate had to pass, where one applies.
    pub ceiling: Option<f32>,
    /// Whether it passed its rung's rule.
    pub passes: bool,
    /// Whether `find_tools` would activate it.
    pub activated: bool,
}
