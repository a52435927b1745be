//! `cargo xtask index`: builds the discovery index offline, or checks it is current.

use std::path::PathBuf;
use std::sync::Arc;

use chalie_index::{BuildStage, Index, MiniLm};

use crate::discovery_catalog::{read_skills, read_tools};

const USAGE: &str = "usage: cargo xtask index [--tools FILE.jsonl] [--skills DIR] [--out DIR] [--model DIR] [--check]";

pub fn run(args: &[String]) -> crate::Outcome {
    let root = crate::project_root();
    let mut out = chalie_index::default_index_dir(&root);
    let mut model = crate::fetch_model::default_dir();
    let (mut tools, mut skills, mut check) = (None, None, false);
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("`{flag}` needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--tools" => tools = Some(value()?),
            "--skills" => skills = Some(value()?),
            "--out" => out = value()?,
            "--model" => model = value()?,
            "--check" => check = true,
            _ => return Err(format!("unknown option `{flag}`\n{USAGE}").into()),
        }
    }
    let mut descriptors = Vec::new();
    if let Some(path) = &tools {
        descriptors.extend(read_tools(path)?);
    }
    if let Some(dir) = &skills {
        descriptors.extend(read_skills(dir)?);
    }
    let embedder = Arc::new(MiniLm::load(&model)?);
    if check {
        let manifest = Index::check(&out, &descriptors, embedder.as_ref())?;
        println!(
            "index at {} is current ({} descriptors)",
            out.display(),
            manifest.descriptor_count
        );
        return Ok(());
    }
    let started = std::time::Instant::now();
    let manifest = Index::build(&descriptors, embedder.as_ref(), &out, &mut |progress| {
        if progress.stage == BuildStage::Embedding {
            eprint!("\rembedding {}/{} texts", progress.done, progress.total);
            if progress.done == progress.total {
                eprintln!();
            }
        }
    })?;
    println!(
        "indexed {} descriptors ({} vectors) into {} in {:.1}s",
        manifest.descriptor_count,
        manifest.vector_count,
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
