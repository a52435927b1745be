//! The cascade: exact name, then name keyword, then prose vector; per query entry, the
//! first rung that yields anything wins.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::descriptor::{Source, normalise_name};
use crate::error::IndexError;
use crate::index::Index;
use crate::keep::{Activation, Ceiling, KeepRule};
use crate::keyword::segment_gate;
use crate::vector;

/// Catalog entries (by ordinal) with their distances, best first.
type Hits = Vec<(usize, f32)>;

/// The vector rung's default keep rule: nothing unless one of the entry's nearest
/// descriptors is within 0.65 (cosine distance) when it has example phrases or 0.75 when it
/// has none; then all of them.
///
/// Chosen from the trade-off the eval prints (crate README, MiniLM, dev splits): it keeps the
/// returned set's R@5 within .02 of the raw ranking on MetaTool zero-shot (.756 of .772),
/// MetaTool with 8 examples (.831 of .836) and BFCL, and abstains on 19 % of out-of-catalog
/// requests for tools with examples (8 % with the former rule, each neighbour within 0.70)
/// and 21 % for tools without. A request lands closer to phrases worded like requests than
/// to a summary, hence two ceilings; 0.60 with examples abstains more on MetaTool (37 %) but
/// drops the example assistant's golden recall@5 to .76. No rule tried abstains on half of
/// the out-of-catalog requests at that recall with this embedder. Returning the whole ranking
/// once one neighbour passes costs set size (about 5 instead of 3–5) and gains recall: the
/// gold tool is often not the best hit and sits just past a ceiling the best one passes.
pub const DEFAULT_KEEP: KeepRule = KeepRule::WholeRankingOncePassed(Ceiling::PerKind {
    with_examples: 0.65,
    without_examples: 0.75,
});

/// Which shown vector hits `find` activates by default: at most 2, each within 0.55 (with
/// example phrases) or 0.60 (without) and within 0.05 of the closest shown hit. The others
/// are named with their first sentence, for the model to ask for by exact name.
///
/// Chosen from the activation table `cargo xtask eval` prints (crate README, MiniLM, dev
/// splits): what the model is shown keeps [`DEFAULT_KEEP`]'s recall (MetaTool zero-shot .756
/// of raw .772, with 8 examples .831 of .836, BFCL .873 of .873) while it activates 0.73,
/// 1.19 and 1.17 tools per entry instead of 4.8–5.0, and activates nothing for 80 %, 53 %
/// and 66 % of out-of-catalog requests (21 %, 19 % and 8 % before). 0.65 without examples
/// leaves BFCL's out-of-catalog abstention at 46 %; 0.60 with examples, MetaTool's with 8
/// examples at 37 %.
pub const DEFAULT_ACTIVATION: Activation = Activation {
    ceiling: Ceiling::PerKind {
        with_examples: 0.55,
        without_examples: 0.60,
    },
    margin: 0.05,
    most: 2,
};

/// Temperature of the soft maximum that pools a descriptor's vectors (summary and
/// examples) into one rank: `T·ln Σ exp(similarity / T)`. Small enough that the closest
/// vector dominates, large enough that several close examples add up. Chosen on the
/// MetaTool dev set with 8 examples per tool (README); zero-shot rankings do not depend on it.
pub const POOL_TEMPERATURE: f32 = 0.1;

/// How much a descriptor's centroid (the mean of its summary and example vectors) counts in
/// the pool against one of its own vectors.
///
/// The centroid says what the examples have in common, so a request worded unlike any
/// single example still lands near it. On MetaTool with 8 examples, raw R@5 for weights
/// 1 / 3 / 8 / 30 / 1000 was .830 / .836 / .843 / .845 / .841 (no centroid: .821). Past 3
/// the centroid starts to outvote the examples: in the example assistant, "add an event to
/// my calendar" then ranks the topic-level `calendar` above the action-level
/// `calendar_edit`, and a descriptor with examples gains more of a head start over one
/// without (its pool can reach 3 + 9 against 1). 3 keeps most of the gain without either.
pub const CENTROID_WEIGHT: f32 = 3.0;

/// Similarity credited to a descriptor without example phrases when the pool ranks it
/// against descriptors with some.
///
/// A request lands much closer to phrases worded like requests than to a summary, so in a
/// catalog where half the tools have examples (linked abilities) and half none (external
/// tools), the second half was crowded out: on MetaTool with 8 examples for every other tool,
/// raw R@5 of the queries whose gold tool had none fell to .299 (.768 for the same queries
/// when no tool has examples). Credits of 0.20 / 0.30 / 0.35 gave .685 / .781 / .802 for
/// that half and .882 / .817 / .755 for the half with examples (.820 when every tool has
/// them): 0.30 puts both halves back where they are on their own. It shifts every
/// descriptor alike when all or none have examples, so those rankings do not change, and it
/// does not touch the distances the keep rule judges.
pub const SUMMARY_ONLY_CREDIT: f32 = 0.30;

/// Which descriptors a search may return.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scope {
    /// Abilities: local ones and external tools (`find_tools`).
    #[default]
    Abilities,
    /// Skill playbooks (`find_skills`).
    Skills,
    /// Everything.
    All,
}

impl Scope {
    fn admits(self, source: &Source) -> bool {
        match self {
            Scope::Abilities => !matches!(source, Source::Skill),
            Scope::Skills => matches!(source, Source::Skill),
            Scope::All => true,
        }
    }
}

/// Knobs of [`Index::find`].
#[derive(Clone, Debug)]
pub struct FindOptions {
    /// Which descriptors may come back.
    pub scope: Scope,
    /// Most hits one entry may add through the keyword or vector rung. There is no cap on
    /// the union over entries: every entry is answered.
    pub per_entry: usize,
    /// Which vector hits are shown ([`DEFAULT_KEEP`]).
    pub keep: KeepRule,
    /// Which shown vector hits are activated ([`DEFAULT_ACTIVATION`]); the others are only
    /// suggested.
    pub activate: Activation,
    /// Similarity credited to descriptors without example phrases in the vector ranking
    /// ([`SUMMARY_ONLY_CREDIT`]).
    pub summary_only_credit: f32,
    /// Qualified names never to return, e.g. tools the conversation already has.
    pub exclude: HashSet<String>,
}

impl Default for FindOptions {
    fn default() -> Self {
        FindOptions {
            scope: Scope::Abilities,
            per_entry: 5,
            keep: DEFAULT_KEEP,
            activate: DEFAULT_ACTIVATION,
            summary_only_credit: SUMMARY_ONLY_CREDIT,
            exclude: HashSet::new(),
        }
    }
}

/// Which rung of the cascade produced a hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rung {
    /// The entry was the name itself (after normalisation).
    Exact,
    /// The entry's words align with the name's segments.
    Keyword,
    /// The entry's meaning is close to the summary or an example.
    Vector,
}

/// One descriptor returned by a search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hit {
    /// Qualified name: what the model calls.
    pub name: String,
    /// The model-facing summary.
    pub summary: String,
    /// The rung that found it.
    pub rung: Rung,
    /// Cosine distance, for vector hits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<f32>,
    /// Where the descriptor comes from.
    #[serde(skip)]
    pub source: Source,
}

/// An entry naming a bare name that more than one source owns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ambiguity {
    /// The entry as given.
    pub entry: String,
    /// Qualified names it could mean; ask again with one of them.
    pub candidates: Vec<String>,
}

/// Result of [`Index::find`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FindOutcome {
    /// Distinct activated hits over all entries: per entry in order, exact, then keyword,
    /// then the vector hits [`FindOptions::activate`] activates, best first.
    pub injected: Vec<Hit>,
    /// Distinct vector hits shown but not activated (the runners-up), best first, none of
    /// them in `injected`: the model adds one by asking for its exact name.
    pub suggested: Vec<Hit>,
    /// Entries for which no rung found anything.
    pub not_found: Vec<String>,
    /// Entries refused because their bare name is owned by several sources.
    pub ambiguous: Vec<Ambiguity>,
}

/// What one entry resolved to.
pub(crate) enum Resolution {
    /// Activated hits, and vector hits only suggested.
    Hits(Vec<Hit>, Vec<Hit>),
    Ambiguous(Vec<String>),
    Pending,
}

impl Index {
    fn admitted(&self, ordinal: usize, options: &FindOptions) -> bool {
        let entry = &self.entries[ordinal];
        options.scope.admits(&entry.source) && !options.exclude.contains(&entry.qualified)
    }

    pub(crate) fn hit(&self, ordinal: usize, rung: Rung, distance: Option<f32>) -> Hit {
        let entry = &self.entries[ordinal];
        Hit {
            name: entry.qualified.clone(),
            summary: entry.summary.clone(),
            rung,
            distance,
            source: entry.source.clone(),
        }
    }

    /// Rung 1: the entry is a name. A qualified `server__name` pins one tool; a bare name
    /// owned by several sources is refused rather than guessed.
    pub(crate) fn exact(&self, entry: &str, options: &FindOptions) -> Resolution {
        if let Some((server, name)) = entry.split_once("__") {
            let qualified = format!("{}__{}", normalise_name(server), normalise_name(name));
            if let Some(&ordinal) = self.by_qualified.get(&qualified)
                && self.admitted(ordinal, options)
            {
                return Resolution::Hits(vec![self.hit(ordinal, Rung::Exact, None)], Vec::new());
            }
        }
        let owners: Vec<usize> = self
            .by_bare
            .get(&normalise_name(entry))
            .into_iter()
            .flatten()
            .copied()
            .filter(|&ordinal| self.admitted(ordinal, options))
            .collect();
        match owners.as_slice() {
            [] => Resolution::Pending,
            [only] => Resolution::Hits(vec![self.hit(*only, Rung::Exact, None)], Vec::new()),
            many => Resolution::Ambiguous(
                many.iter()
                    .map(|&o| self.entries[o].qualified.clone())
                    .collect(),
            ),
        }
    }

    /// Rung 2: trigram candidates over names, kept only when the segment gate passes.
    pub(crate) fn keyword(
        &self,
        entry: &str,
        options: &FindOptions,
    ) -> Result<Vec<Hit>, IndexError> {
        let normalised = normalise_name(entry);
        // A sentence cannot align with a name; skip the search rather than gate 64 misses.
        if normalised.is_empty() || normalised.split('_').count() > 4 {
            return Ok(Vec::new());
        }
        let candidates = self.names.candidates(&normalised, 64)?;
        Ok(candidates
            .into_iter()
            .filter(|&ordinal| self.admitted(ordinal, options))
            .filter(|&ordinal| segment_gate(&normalised, &self.entries[ordinal].name))
            .take(options.per_entry)
            .map(|ordinal| self.hit(ordinal, Rung::Keyword, None))
            .collect())
    }

    /// Nearest descriptors to `query` (a unit vector), best first, each with the distance
    /// of its closest vector. No ceiling applied.
    ///
    /// A descriptor's rank pools the similarities of all its vectors among the neighbours
    /// with a soft maximum ([`POOL_TEMPERATURE`]): one close example still counts most, but
    /// a tool with several close examples beats one with a single lucky match. With only a
    /// summary vector per descriptor this is the plain cosine ranking.
    pub(crate) fn nearest_to(
        &self,
        query: &[f32],
        count: usize,
        options: &FindOptions,
    ) -> Result<Vec<(usize, f32)>, IndexError> {
        // Each descriptor may fill up to `max_vectors` slots of the neighbour list; twice
        // that lets the pool see more than the first vector of each candidate.
        let fetch = count
            .saturating_mul(self.max_vectors)
            .saturating_mul(2)
            .max(count);
        let keep = |key: u64| self.admitted(vector::ordinal_of(key), options);
        // Filter only when something could be refused: a scope that excludes a source the
        // index holds, or names to exclude.
        let filtered = !options.exclude.is_empty()
            || match options.scope {
                Scope::Abilities => self.has_skills,
                Scope::Skills => self.has_abilities,
                Scope::All => false,
            };
        let neighbours = self.prose.search(
            query,
            fetch,
            filtered.then_some(&keep as &dyn Fn(u64) -> bool),
        )?;
        // (closest distance, sum of exp((similarity - 1) / T)); the shift by 1 keeps every
        // term in (0, 1], since a cosine similarity is at most 1.
        let mut pooled: BTreeMap<usize, (f32, f32)> = BTreeMap::new();
        for (key, distance) in neighbours {
            let slot = pooled
                .entry(vector::ordinal_of(key))
                .or_insert((f32::INFINITY, 0.0));
            slot.0 = slot.0.min(distance);
            let weight = if vector::slot_of(key) == vector::CENTROID_SLOT {
                CENTROID_WEIGHT
            } else {
                1.0
            };
            slot.1 += weight * (-distance / POOL_TEMPERATURE).exp();
        }
        let credit = (options.summary_only_credit / POOL_TEMPERATURE).exp();
        let mut ranked: Vec<(usize, f32, f32)> = pooled
            .into_iter()
            .filter(|(o, _)| *o < self.entries.len())
            .map(|(o, (closest, mass))| {
                let summary_only = self.entries[o].reach.is_none();
                (o, closest, if summary_only { mass * credit } else { mass })
            })
            .collect();
        // Larger mass first; the closest distance breaks ties (and orders underflows).
        ranked.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.1.total_cmp(&b.1)));
        ranked.truncate(count);
        Ok(ranked
            .into_iter()
            .map(|(o, closest, _)| (o, closest))
            .collect())
    }

    /// What `rule` keeps of a vector ranking (ordinal and distance, best first), each
    /// descriptor judged with the reach its build measured.
    pub(crate) fn kept(&self, rule: KeepRule, ranked: Vec<(usize, f32)>) -> Vec<(usize, f32)> {
        let judged: Vec<(f32, Option<f32>)> = ranked
            .iter()
            .map(|&(ordinal, distance)| (distance, self.entries[ordinal].reach))
            .collect();
        ranked
            .into_iter()
            .zip(rule.keeps(&judged))
            .filter_map(|(hit, keep)| keep.then_some(hit))
            .collect()
    }

    /// What `options` shows of a vector ranking, split into the hits it activates and those
    /// it only suggests (each best first).
    pub(crate) fn shown(&self, options: &FindOptions, ranked: Vec<(usize, f32)>) -> (Hits, Hits) {
        let shown = self.kept(options.keep, ranked);
        let judged: Vec<(f32, Option<f32>)> = shown
            .iter()
            .map(|&(ordinal, distance)| (distance, self.entries[ordinal].reach))
            .collect();
        let verdicts = options.activate.activates(&judged);
        let (activated, suggested): (Vec<_>, Vec<_>) = shown
            .into_iter()
            .zip(verdicts)
            .partition(|(_, activated)| *activated);
        let strip =
            |hits: Vec<((usize, f32), bool)>| hits.into_iter().map(|(hit, _)| hit).collect();
        (strip(activated), strip(suggested))
    }

    /// Runs the cascade for every entry independently and merges the results.
    pub fn find(
        &self,
        entries: &[String],
        options: &FindOptions,
    ) -> Result<FindOutcome, IndexError> {
        let mut resolutions = Vec::with_capacity(entries.len());
        for entry in entries {
            let resolution = match self.exact(entry, options) {
                Resolution::Pending => {
                    let hits = self.keyword(entry, options)?;
                    if hits.is_empty() {
                        Resolution::Pending
                    } else {
                        Resolution::Hits(hits, Vec::new())
                    }
                }
                settled => settled,
            };
            resolutions.push(resolution);
        }

        // Rung 3 for every entry still open, embedded in one batch.
        let pending: Vec<&str> = entries
            .iter()
            .zip(&resolutions)
            .filter(|(_, r)| matches!(r, Resolution::Pending))
            .map(|(e, _)| e.as_str())
            .collect();
        let mut vectors = if pending.is_empty() {
            Vec::new()
        } else {
            self.embedder.embed_batch(&pending)?
        }
        .into_iter();
        for resolution in resolutions
            .iter_mut()
            .filter(|r| matches!(r, Resolution::Pending))
        {
            let Some(query) = vectors.next() else { break };
            let ranked = self.nearest_to(&query, options.per_entry, options)?;
            let (activated, suggested) = self.shown(options, ranked);
            let hits = |list: Vec<(usize, f32)>| -> Vec<Hit> {
                list.into_iter()
                    .map(|(ordinal, distance)| self.hit(ordinal, Rung::Vector, Some(distance)))
                    .collect()
            };
            if !activated.is_empty() || !suggested.is_empty() {
                *resolution = Resolution::Hits(hits(activated), hits(suggested));
            }
        }

        let mut outcome = FindOutcome::default();
        let mut seen = HashSet::new();
        let mut runners_up = Vec::new();
        for (entry, resolution) in entries.iter().zip(resolutions) {
            match resolution {
                Resolution::Hits(hits, suggested) => {
                    outcome
                        .injected
                        .extend(hits.into_iter().filter(|hit| seen.insert(hit.name.clone())));
                    runners_up.extend(suggested);
                }
                Resolution::Ambiguous(candidates) => outcome.ambiguous.push(Ambiguity {
                    entry: entry.clone(),
                    candidates,
                }),
                Resolution::Pending => outcome.not_found.push(entry.clone()),
            }
        }
        // After every entry's activations, so a tool one entry activates is never also
        // suggested by another.
        outcome.suggested = runners_up
            .into_iter()
            .filter(|hit| seen.insert(hit.name.clone()))
            .collect();
        Ok(outcome)
    }

    /// The raw vector ranking for `text`: nearest descriptors with distances, no ceiling,
    /// no other rung. For evaluation and diagnostics.
    pub fn nearest(
        &self,
        text: &str,
        count: usize,
        options: &FindOptions,
    ) -> Result<Vec<(String, f32)>, IndexError> {
        Ok(self
            .ranking(text, count, options)?
            .into_iter()
            .map(|(ordinal, distance)| (self.entries[ordinal].qualified.clone(), distance))
            .collect())
    }

    /// [`Index::nearest`] by ordinal, what [`Index::kept`] judges.
    pub(crate) fn ranking(
        &self,
        text: &str,
        count: usize,
        options: &FindOptions,
    ) -> Result<Vec<(usize, f32)>, IndexError> {
        let query = self
            .embedder
            .embed_batch(&[text])?
            .pop()
            .ok_or_else(|| IndexError::Search("the embedder returned no vector".to_owned()))?;
        self.nearest_to(&query, count, options)
    }
}
