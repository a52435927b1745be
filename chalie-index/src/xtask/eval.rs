//! `eval`: retrieval quality of the cascade on a tool catalog and labelled
//! queries (MetaTool and BFCL converted to JSONL are two such sets).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use super::Outcome;
use crate::catalog::read_tools;
use crate::{Ceiling, Descriptor, FindOptions, Index, KeepRule};

mod cache;
mod rules;
use super::progress::{Progress, build_listener};
use cache::CachingEmbedder;

const USAGE: &str = "usage: cargo xtask eval --tools FILE --queries FILE [--examples-from FILE --examples N [--examples-for all|half]] [--ceiling X] [--credit X] [--foreign FILE]... [--unservable FILE]... [--no-parameters] [--model DIR] [--cache DIR] [--embedder-url URL --embedder-model ID [--embedder-key-env VAR]]";

pub(super) struct Query {
    pub(super) text: String,
    pub(super) gold: Vec<String>,
}

pub(super) fn read_queries(path: &std::path::Path) -> Result<Vec<Query>, super::BoxError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut queries = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let value: Value = serde_json::from_str(line)?;
        let gold = value["tools"].as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        });
        queries.push(Query {
            text: value["query"].as_str().unwrap_or_default().to_owned(),
            gold: gold.unwrap_or_default(),
        });
    }
    Ok(queries)
}

/// Recall@k, MRR and friends over ranked name lists.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) recall: [f64; 3],
    mrr: f64,
    pub(super) any_gold: f64,
    pub(super) size: f64,
    pub(super) count: f64,
}

const KS: [usize; 3] = [1, 3, 5];

impl Tally {
    pub(super) fn add(&mut self, ranked: &[String], gold: &[String]) {
        for (slot, k) in KS.iter().enumerate() {
            let found = gold
                .iter()
                .filter(|g| ranked.iter().take(*k).any(|r| r == *g))
                .count();
            self.recall[slot] += found as f64 / gold.len().max(1) as f64;
        }
        if let Some(rank) = ranked.iter().position(|r| gold.contains(r)) {
            self.mrr += 1.0 / (rank + 1) as f64;
            self.any_gold += 1.0;
        }
        self.size += ranked.len() as f64;
        self.count += 1.0;
    }

    /// Recall@5 over the queries added.
    pub(super) fn r5(&self) -> f64 {
        self.recall[2] / self.count.max(1.0)
    }

    pub(super) fn row(&self, label: &str) -> String {
        let n = self.count.max(1.0);
        format!(
            "{label:<22} R@1 {:.3}  R@3 {:.3}  R@5 {:.3}  MRR {:.3}  gold-in-set {:.3}  mean-set {:.2}",
            self.recall[0] / n,
            self.recall[1] / n,
            self.recall[2] / n,
            self.mrr / n,
            self.any_gold / n,
            self.size / n
        )
    }
}

/// Runs `eval` with the command-line `args` (after the subcommand); the embedder defaults
/// to `task`'s.
pub(super) fn run(task: &super::Xtask, args: &[String]) -> Outcome {
    let (mut tools, mut queries_path, mut examples_from) = (None, None, None);
    let mut examples_per_tool = 8usize;
    let mut keep = crate::DEFAULT_KEEP;
    let mut half_with_examples = false;
    let mut credit = crate::SUMMARY_ONLY_CREDIT;
    let mut model = task.model.clone();
    let mut endpoint = task.endpoint.clone();
    let mut cache_dir = None;
    let mut keep_parameters = true;
    let mut foreign_paths = Vec::new();
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        if endpoint.take(flag, || args.next().cloned()) {
            continue;
        }
        if flag == "--no-parameters" {
            keep_parameters = false;
            continue;
        }
        let mut value = || {
            args.next()
                .cloned()
                .ok_or_else(|| format!("`{flag}` needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--tools" => tools = Some(PathBuf::from(value()?)),
            "--queries" => queries_path = Some(PathBuf::from(value()?)),
            "--examples-from" => examples_from = Some(PathBuf::from(value()?)),
            "--examples" => examples_per_tool = value()?.parse()?,
            "--ceiling" => keep = KeepRule::Within(Ceiling::Absolute(value()?.parse()?)),
            "--credit" => credit = value()?.parse()?,
            "--examples-for" => {
                half_with_examples = match value()?.as_str() {
                    "all" => false,
                    "half" => true,
                    other => {
                        return Err(
                            format!("`--examples-for {other}`: all or half\n{USAGE}").into()
                        );
                    }
                }
            }
            "--model" => model = PathBuf::from(value()?),
            "--cache" => cache_dir = Some(PathBuf::from(value()?)),
            "--foreign" => foreign_paths.push((PathBuf::from(value()?), false)),
            "--unservable" => foreign_paths.push((PathBuf::from(value()?), true)),
            _ => return Err(format!("unknown option `{flag}`\n{USAGE}").into()),
        }
    }
    let (Some(tools), Some(queries_path)) = (tools, queries_path) else {
        return Err(USAGE.into());
    };
    let mut descriptors: Vec<Descriptor> = read_tools(&tools)?;
    // Strict zero-shot: name and description only, the setting of the published baselines.
    if !keep_parameters {
        descriptors.iter_mut().for_each(|d| d.parameters = None);
    }
    let mut queries = read_queries(&queries_path)?;
    // Half A: the tools on the catalog's odd lines (first, third, ...), which alone get
    // examples with `--examples-for half`; every run reports recall per half, so a mixed
    // catalog's halves compare with the same queries in the all-or-nothing runs.
    let half_a: HashSet<String> = descriptors
        .iter()
        .step_by(2)
        .map(|d| d.name.clone())
        .collect();

    // Example phrases: the first N single-tool queries of each tool, taken out of evaluation
    // when they come from the evaluated file.
    if let Some(path) = &examples_from {
        let source = read_queries(path)?;
        let same_file =
            std::fs::canonicalize(path).ok() == std::fs::canonicalize(&queries_path).ok();
        let mut by_tool: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut used: HashSet<String> = HashSet::new();
        let gets_examples = |tool: &str| !half_with_examples || half_a.contains(tool);
        for query in source
            .iter()
            .filter(|q| q.gold.len() == 1 && gets_examples(&q.gold[0]))
        {
            let list = by_tool.entry(query.gold[0].as_str()).or_default();
            if list.len() < examples_per_tool {
                list.push(&query.text);
                used.insert(query.text.clone());
            }
        }
        for descriptor in &mut descriptors {
            if let Some(list) = by_tool.get(descriptor.name.as_str()) {
                descriptor.examples = list.iter().map(|s| s.to_string()).collect();
            }
        }
        if same_file {
            queries.retain(|q| !used.contains(&q.text));
        }
    }

    let embedder = super::endpoint::load(&endpoint, &model)?;
    let embedder = Arc::new(CachingEmbedder::new(embedder, cache_dir)?);
    let dir = std::env::temp_dir().join(format!("chalie-eval-{}", std::process::id()));
    let started = std::time::Instant::now();
    let progress = Progress::new("embedding", 0);
    Index::build(
        &descriptors,
        embedder.as_ref(),
        &dir,
        &mut build_listener(&progress),
    )?;
    drop(progress);
    eprintln!(
        "built {} tools in {:.1}s",
        descriptors.len(),
        started.elapsed().as_secs_f64()
    );
    let index = Index::open(&dir, embedder.clone())?;
    // Out-of-catalog requests: every query of another data set (`--foreign`), and the
    // requests a golden set marks unservable (`--unservable`, its `"tools": []` lines).
    let mut foreign = Vec::new();
    for (path, unservable_only) in &foreign_paths {
        foreign.extend(
            read_queries(path)?
                .into_iter()
                .filter(|q| !unservable_only || q.gold.is_empty())
                .map(|q| q.text),
        );
    }
    let texts: Vec<&str> = queries
        .iter()
        .map(|q| q.text.as_str())
        .chain(foreign.iter().map(String::as_str))
        .collect();
    let started = std::time::Instant::now();
    embedder.warm(&texts)?;
    embedder.save()?;
    eprintln!(
        "embedded {} queries in {:.1}s",
        texts.len(),
        started.elapsed().as_secs_f64()
    );

    let options = FindOptions {
        keep,
        summary_only_credit: credit,
        ..FindOptions::default()
    };
    let (mut cascade, mut shown, mut raw) = (Tally::default(), Tally::default(), Tally::default());
    let mut abstained = 0usize;
    // For the ceiling sweep: best gold-free distance and the raw ranking with distances.
    let mut sweep_rows: Vec<rules::Row<'_>> = Vec::new();
    let progress = Progress::new("queries", queries.len());
    for query in &queries {
        progress.advance(1);
        let entry = vec![query.text.clone()];
        let outcome = index.find(&entry, &options)?;
        let ranked: Vec<String> = outcome.injected.iter().map(|h| h.name.clone()).collect();
        cascade.add(&ranked, &query.gold);
        // What the model is shown: the activated tools, then the ones named for it to ask for.
        let named: Vec<String> = outcome
            .injected
            .iter()
            .chain(&outcome.suggested)
            .map(|h| h.name.clone())
            .collect();
        shown.add(&named, &query.gold);

        let ranked = index.ranking(&query.text, options.per_entry, &options)?;
        let names: Vec<String> = ranked
            .iter()
            .map(|(ordinal, _)| index.entries[*ordinal].qualified.clone())
            .collect();
        raw.add(&names, &query.gold);

        let without_gold = FindOptions {
            exclude: query.gold.iter().cloned().collect(),
            ..options.clone()
        };
        if index.find(&entry, &without_gold)?.injected.is_empty() {
            abstained += 1;
        }
        let in_a = |tool: &String| half_a.contains(tool);
        let half = if query.gold.iter().all(in_a) {
            rules::Half::A
        } else if query.gold.iter().any(in_a) {
            rules::Half::Both
        } else {
            rules::Half::B
        };
        sweep_rows.push(rules::Row {
            ranked,
            without_gold: index.ranking(&query.text, options.per_entry, &without_gold)?,
            gold: &query.gold,
            half,
        });
    }
    drop(progress);
    let (mut foreign_ranked, mut foreign_abstained, mut foreign_activated) =
        (Vec::new(), 0usize, 0usize);
    for text in &foreign {
        let outcome = index.find(std::slice::from_ref(text), &options)?;
        foreign_activated += outcome.injected.len();
        if outcome.injected.is_empty() {
            foreign_abstained += 1;
        }
        foreign_ranked.push(index.ranking(text, options.per_entry, &options)?);
    }
    let n = queries.len().max(1) as f64;
    println!(
        "catalog {} ({} tools), queries {} ({} evaluated)",
        tools.display(),
        descriptors.len(),
        queries_path.display(),
        queries.len()
    );
    if examples_from.is_some() {
        let which = if half_with_examples {
            "half A's tools"
        } else {
            "every tool"
        };
        println!("examples: up to {examples_per_tool} per tool, for {which}");
    }
    println!(
        "cascade: shows {keep}; {}; summary-only credit {credit:.2}",
        options.activate
    );
    println!("{}", shown.row("shown"));
    println!("{}", cascade.row("activated"));
    println!("{}", raw.row("raw KNN order"));
    println!(
        "shown-recall {:.3} (raw R@5 {:.3}), activated per entry {:.2}",
        shown.r5(),
        raw.r5(),
        cascade.size / n
    );
    println!(
        "abstention with gold removed (nothing activated): {:.3}",
        abstained as f64 / n
    );
    if !foreign.is_empty() {
        println!(
            "abstention out of catalog (nothing activated): {:.3} ({foreign_abstained} of {} requests from {}), activated per entry {:.2}",
            foreign_abstained as f64 / foreign.len() as f64,
            foreign.len(),
            foreign_paths
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            foreign_activated as f64 / foreign.len() as f64
        );
    }
    print!("{}", rules::table(&index, &sweep_rows, &foreign_ranked));
    print!(
        "{}",
        rules::activation_table(&index, keep, &sweep_rows, &foreign_ranked)
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
