//! `golden`: retrieval quality as a gate. Runs a committed set of user requests through
//! `find_tools` on the index the program opens and fails below the given shown-recall (of
//! the requests some ability serves: the gold tool activated or suggested by name), above
//! the given tools activated per request, or below the given abstention (nothing activated
//! for the requests none serves), printing the table.
//!
//! The set is JSONL, one `{"query": "...", "tools": ["name", ...]}` a line; `"tools": []`
//! marks a request nothing serves. A request equal to or a near copy of a descriptor's
//! example phrase is refused: it would measure memory, not retrieval.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chalie_core::{Channel, Turn, result::Body};

use super::eval::{Query, Tally, read_queries};
use super::progress::Progress;
use super::{BoxError, Xtask, XtaskError};
use crate::{Discovery, Index};

const USAGE: &str = "usage: cargo xtask golden FILE.jsonl [--min-recall X] [--max-activated N] [--min-abstention X] [--embedder-url URL --embedder-model ID [--embedder-key-env VAR]]";

/// Word-set overlap (Jaccard) at or above which a request counts as a near copy of an
/// example phrase.
const NEAR_COPY: f64 = 0.5;

/// The lower-case words of `text`, apostrophes kept inside words.
fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn overlap(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 1.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// Fails on an empty request, a gold name the index does not hold, or a request that is
/// (nearly) one of the example phrases.
fn check_set(
    queries: &[Query],
    index: &Index,
    examples: &[(String, String)],
) -> Result<(), BoxError> {
    let examples: Vec<(&str, &str, BTreeSet<String>)> = examples
        .iter()
        .map(|(name, phrase)| (name.as_str(), phrase.as_str(), words(phrase)))
        .collect();
    let mut problems = Vec::new();
    for query in queries {
        if query.text.trim().is_empty() {
            problems.push("a line has no `query`".to_owned());
            continue;
        }
        for gold in &query.gold {
            if !index.entries.iter().any(|entry| &entry.qualified == gold) {
                problems.push(format!("`{}`: `{gold}` is not in the index", query.text));
            }
        }
        let mine = words(&query.text);
        for (name, phrase, theirs) in &examples {
            let similarity = overlap(&mine, theirs);
            if similarity >= NEAR_COPY {
                problems.push(format!(
                    "`{}` is a near copy ({similarity:.2} word overlap) of `{name}`'s example `{phrase}`",
                    query.text
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("the golden set is not usable:\n  {}", problems.join("\n  ")).into())
    }
}

/// The names `find_tools` listed under `key` (`injected`: activated; `suggested`: named for
/// the model to ask for), in its order.
fn listed(body: Option<&Body>, key: &str) -> Vec<String> {
    let Some(Body::Json(value)) = body else {
        return Vec::new();
    };
    value[key]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|hit| hit["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn run(task: &Xtask, args: &[String]) -> Result<(), XtaskError> {
    let usage = || XtaskError::Usage(USAGE.to_owned());
    let (mut file, mut min_recall, mut min_abstention) = (None, 0.0f64, 0.0f64);
    let mut max_activated = f64::INFINITY;
    let mut endpoint = task.endpoint.clone();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if endpoint.take(arg, || args.next().cloned()) {
            continue;
        }
        let mut number = |most: f64| -> Result<f64, XtaskError> {
            args.next()
                .and_then(|value| value.parse().ok())
                .filter(|value: &f64| (0.0..=most).contains(value))
                .ok_or_else(|| {
                    XtaskError::Usage(format!("`{arg}` takes a number from 0 to {most}\n{USAGE}"))
                })
        };
        match arg.as_str() {
            "--min-recall" => min_recall = number(1.0)?,
            "--min-abstention" => min_abstention = number(1.0)?,
            "--max-activated" => max_activated = number(f64::from(u8::MAX))?,
            flag if flag.starts_with("--") => return Err(usage()),
            path => file = Some(PathBuf::from(path)),
        }
    }
    let file = task.root.join(file.ok_or_else(usage)?);
    let descriptors = task.descriptors()?;
    let embedder = super::endpoint::load(&endpoint, &task.model)?;
    // The index the program opens, checked like the program checks it: a stale one fails
    // here with the command that rebuilds it.
    let index = Index::open_checked(&task.out, embedder, &descriptors)?;
    let queries = read_queries(&file).map_err(XtaskError::Failed)?;
    let examples: Vec<(String, String)> = descriptors
        .iter()
        .flat_map(|d| d.examples.iter().map(|e| (d.name.clone(), e.clone())))
        .collect();
    check_set(&queries, &index, &examples).map_err(XtaskError::Failed)?;
    let discovery = Discovery::new(Arc::new(index));
    let report = measure(&discovery, &queries);
    print!("{}", report.table(&file));
    report
        .gate(min_recall, max_activated, min_abstention)
        .map_err(XtaskError::Failed)
}

/// What the set measured.
struct Report {
    /// Servable requests, over what `find_tools` showed: activated, then suggested.
    servable: Tally,
    /// Servable requests, over what it activated.
    activated: Tally,
    unservable: Tally,
    abstained: usize,
    misses: Vec<(String, Vec<String>, Vec<String>)>,
    intrusions: Vec<(String, Vec<String>)>,
}

fn measure(discovery: &Discovery, queries: &[Query]) -> Report {
    let mut report = Report {
        servable: Tally::default(),
        activated: Tally::default(),
        unservable: Tally::default(),
        abstained: 0,
        misses: Vec::new(),
        intrusions: Vec::new(),
    };
    let progress = Progress::new("queries", queries.len());
    for query in queries {
        progress.advance(1);
        let turn = Turn::builder(Channel::Chat).build();
        let result = discovery.find_tools(std::slice::from_ref(&query.text), &turn);
        let activated = listed(result.body(), "injected");
        let mut ranked = activated.clone();
        ranked.extend(listed(result.body(), "suggested"));
        if query.gold.is_empty() {
            report.unservable.add(&activated, &[]);
            if activated.is_empty() {
                report.abstained += 1;
            } else {
                report.intrusions.push((query.text.clone(), activated));
            }
            continue;
        }
        report.servable.add(&ranked, &query.gold);
        report.activated.add(&activated, &query.gold);
        if !query
            .gold
            .iter()
            .all(|g| ranked.iter().take(5).any(|r| r == g))
        {
            report
                .misses
                .push((query.text.clone(), query.gold.clone(), ranked));
        }
    }
    report
}

impl Report {
    /// The gold tool among the first five shown (activated or suggested).
    fn recall(&self) -> f64 {
        self.servable.recall[2] / self.servable.count.max(1.0)
    }

    /// Tools activated per servable request.
    fn activated_per_entry(&self) -> f64 {
        self.activated.size / self.activated.count.max(1.0)
    }

    fn abstention(&self) -> f64 {
        self.abstained as f64 / self.unservable.count.max(1.0)
    }

    fn table(&self, file: &Path) -> String {
        let mut out = format!(
            "golden set {}: {} servable, {} unservable requests, through find_tools\n",
            file.display(),
            self.servable.count,
            self.unservable.count
        );
        out += &self.servable.row("servable, shown");
        out += "\n";
        out += &self.activated.row("servable, activated");
        out += "\n";
        out += &format!(
            "{:<22} abstained {:.3} ({} of {}, nothing activated)  mean-set {:.2}\n",
            "unservable",
            self.abstention(),
            self.abstained,
            self.unservable.count,
            self.unservable.size / self.unservable.count.max(1.0)
        );
        for (query, gold, ranked) in &self.misses {
            out += &format!("  miss: `{query}` wants {gold:?}, got {ranked:?}\n");
        }
        for (query, ranked) in &self.intrusions {
            out += &format!("  not abstained: `{query}` got {ranked:?}\n");
        }
        out
    }

    fn gate(
        &self,
        min_recall: f64,
        max_activated: f64,
        min_abstention: f64,
    ) -> Result<(), BoxError> {
        let (recall, activated, abstention) =
            (self.recall(), self.activated_per_entry(), self.abstention());
        if recall < min_recall || activated > max_activated || abstention < min_abstention {
            return Err(format!(
                "retrieval outside its gate: shown-recall {recall:.3} (at least {min_recall:.3}), \
                 activated per request {activated:.2} (at most {max_activated:.2}), \
                 abstention {abstention:.3} (at least {min_abstention:.3})"
            )
            .into());
        }
        println!(
            "gate passed: shown-recall {recall:.3} >= {min_recall:.3}, activated per request {activated:.2} <= {max_activated:.2}, abstention {abstention:.3} >= {min_abstention:.3}"
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reworded_request_is_not_a_near_copy_but_a_shuffled_example_is() {
        let example = words("what's the weather in Rome");
        assert!(overlap(&words("do I need a coat in Berlin right now"), &example) < NEAR_COPY);
        assert!(overlap(&words("in Rome, what's the weather?"), &example) >= NEAR_COPY);
    }

    #[test]
    fn the_listed_names_are_read_in_order() {
        let body = Body::Json(serde_json::json!({
            "injected": [{ "name": "forecast" }, { "name": "weather" }],
            "suggested": [{ "name": "calendar" }],
            "not_found": [],
        }));
        assert_eq!(listed(Some(&body), "injected"), ["forecast", "weather"]);
        assert_eq!(listed(Some(&body), "suggested"), ["calendar"]);
        assert!(listed(None, "injected").is_empty());
    }
}
