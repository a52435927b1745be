//! The console's discovery playground: one request run through the cascade
//! the way `find_tools` runs an entry, each rung's candidates laid out with
//! their distances and ceilings beside what `find` would activate.

use chalie_core::session::{Candidate, Discover, DiscoveryReport, RungReport};

use crate::discovery::Discovery;
use crate::error::IndexError;
use crate::find::{FindOptions, Hit, Rung};
use crate::index::Index;

impl Index {
    /// How each rung answers `query` (one `find_tools` entry) under `options`: the exact
    /// name, the keyword candidates that pass the segment gate, and the vector ranking with
    /// each hit's distance, its activation ceiling, whether the keep rule shows it and
    /// whether activation takes it. `activated` and `suggested` are [`Index::find`]'s own
    /// answer, so the report cannot drift from what the model would get.
    pub fn explain(
        &self,
        query: &str,
        options: &FindOptions,
    ) -> Result<DiscoveryReport, IndexError> {
        let outcome = self.find(&[query.to_owned()], options)?;
        let activated: Vec<String> = outcome
            .injected
            .iter()
            .map(|hit| hit.name.clone())
            .collect();
        let listed = |hits: Vec<Hit>| -> Vec<Candidate> {
            hits.into_iter()
                .map(|hit| Candidate {
                    activated: activated.contains(&hit.name),
                    name: hit.name,
                    score: None,
                    ceiling: None,
                    passes: true,
                })
                .collect()
        };
        let exact = match self.exact(query, options) {
            crate::find::Resolution::Hits(hits, _) => listed(hits),
            _ => Vec::new(),
        };
        let keyword = listed(self.keyword(query, options)?);
        let ranked = self.ranking(query, options.per_entry, options)?;
        let shown = self.kept(options.keep, ranked.clone());
        let vector = ranked
            .into_iter()
            .map(|(ordinal, distance)| {
                let hit = self.hit(ordinal, Rung::Vector, Some(distance));
                let reach = self.entries[ordinal].reach;
                Candidate {
                    activated: activated.contains(&hit.name),
                    passes: shown.iter().any(|&(kept, _)| kept == ordinal),
                    name: hit.name,
                    score: Some(distance),
                    ceiling: Some(options.activate.ceiling.of(reach)),
                }
            })
            .collect();
        let rung = |name: &str, candidates| RungReport {
            rung: name.to_owned(),
            candidates,
        };
        Ok(DiscoveryReport {
            query: query.to_owned(),
            rungs: vec![
                rung("exact", exact),
                rung("keyword", keyword),
                rung("vector", vector),
            ],
            ceiling: format!(
                "shown: {}; activated: within {} and {:.2} of the closest, at most {}",
                options.keep,
                options.activate.ceiling,
                options.activate.margin,
                options.activate.most
            ),
            activated,
            suggested: outcome.suggested.into_iter().map(|hit| hit.name).collect(),
        })
    }
}

/// The playground over the index `find_tools` searches, with its options (the profile's
/// hidden tools excluded); a vector rung that ran only after the exact and keyword rungs
/// found nothing is still shown, so a query's near misses are visible.
impl Discover for Discovery {
    fn discover(&self, query: &str) -> Result<DiscoveryReport, String> {
        let index = self.index().map_err(|error| error.to_string())?;
        index
            .explain(query, &self.find_options(crate::find::Scope::Abilities))
            .map_err(|error| error.to_string())
    }
}
