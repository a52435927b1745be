//! `index`: builds the discovery index offline, or checks it is current.
//!
//! Sources, in one roster: every ability linked into the binary (unless `--no-linked`), the
//! skill playbooks of `--skills DIR`, external tools from `--external FILE.json` and from the
//! MCP servers `chalie.toml` (or `--config FILE`) configures, and a catalog as data from
//! `--tools FILE.jsonl`; each flag replaces the builder's setting.

use std::path::PathBuf;

use super::progress::{Progress, build_listener};
use super::{Xtask, XtaskError};
use crate::GraphBuild;

const USAGE: &str = "usage: cargo xtask index [--skills DIR] [--external FILE.json] [--tools FILE.jsonl] [--no-linked] [--config chalie.toml] [--out DIR] [--model DIR] [--cache DIR | --no-cache] [--check] [--embedder-url URL --embedder-model ID [--embedder-key-env VAR]]";

pub(super) fn run(mut task: Xtask, args: &[String]) -> Result<(), XtaskError> {
    let mut check = false;
    let (mut external, mut tools) = (Vec::new(), Vec::new());
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        if task.endpoint.take(flag, || args.next().cloned()) {
            continue;
        }
        let mut value = || {
            args.next()
                .map(PathBuf::from)
                .ok_or_else(|| XtaskError::Usage(format!("`{flag}` needs a value\n{USAGE}")))
        };
        match flag.as_str() {
            "--skills" => task = task.skills(value()?),
            "--external" => external.push(value()?),
            "--tools" => tools.push(value()?),
            "--no-linked" => task = task.without_linked(),
            "--config" => task = task.config(value()?),
            "--out" => task = task.out(value()?),
            "--model" => task = task.model(value()?),
            "--cache" => task = task.cache(value()?),
            "--no-cache" => task = task.without_cache(),
            "--check" => check = true,
            _ => {
                return Err(XtaskError::Usage(format!(
                    "unknown option `{flag}`\n{USAGE}"
                )));
            }
        }
    }
    if !external.is_empty() {
        task.external = external;
    }
    if !tools.is_empty() {
        task.tools = tools;
    }
    let out = task.out_dir().display().to_string();
    if check {
        let manifest = task.check()?;
        println!(
            "index at {out} is current ({} descriptors, {} vectors, checksums verified)",
            manifest.descriptor_count, manifest.vector_count
        );
        return Ok(());
    }
    let started = std::time::Instant::now();
    let progress = Progress::new("embedding", 0);
    let report = task.build(&mut build_listener(&progress), &mut |warning| {
        progress.warn(warning)
    })?;
    drop(progress);
    let graph = match &report.graph {
        GraphBuild::Rebuilt { reason } => format!("new vector graph ({reason})"),
        GraphBuild::Edited {
            removed,
            added,
            renamed,
        } => format!(
            "vector graph edited in place ({removed} removed, {added} added, {renamed} moved)"
        ),
    };
    println!(
        "indexed {} descriptors ({} vectors) into {out} in {:.1}s; {} texts embedded, {} from the cache; {graph}",
        report.manifest.descriptor_count,
        report.manifest.vector_count,
        started.elapsed().as_secs_f64(),
        report.embedded,
        report.reused,
    );
    Ok(())
}
