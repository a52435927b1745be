//! `cargo xtask index`: builds the discovery index offline, or checks it is current.
//!
//! Sources, in one roster: every ability linked into this binary (always), the skill
//! playbooks of `--skills DIR` (default `skills/` when it exists), external tools from
//! `--external FILE.json` and a catalog as data from `--tools FILE.jsonl`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chalie_index::{BuildStage, Descriptor, Index, MiniLm};

use crate::discovery_catalog::{read_external, read_skills, read_tools};

const USAGE: &str = "usage: cargo xtask index [--skills DIR] [--external FILE.json] [--tools FILE.jsonl] [--no-linked] [--out DIR] [--model DIR] [--check]";

/// Where skill playbooks live by default, relative to the workspace root.
const DEFAULT_SKILLS_DIR: &str = "skills";

/// What to index, from the command line.
struct Sources {
    linked: bool,
    skills: Option<PathBuf>,
    external: Option<PathBuf>,
    tools: Option<PathBuf>,
}

impl Sources {
    fn read(&self) -> Result<Vec<Descriptor>, Box<dyn std::error::Error>> {
        let mut descriptors = Vec::new();
        if self.linked {
            descriptors.extend(Descriptor::from_registry(chalie_core::registry()?));
        }
        if let Some(dir) = &self.skills {
            descriptors.extend(read_skills(dir)?);
        }
        if let Some(path) = &self.external {
            descriptors.extend(read_external(path)?);
        }
        if let Some(path) = &self.tools {
            descriptors.extend(read_tools(path)?);
        }
        Ok(descriptors)
    }
}

pub fn run(args: &[String]) -> crate::Outcome {
    let root = crate::project_root();
    let mut out = chalie_index::default_index_dir(&root);
    let mut model = crate::fetch_model::default_dir();
    let default_skills = root.join(DEFAULT_SKILLS_DIR);
    let mut sources = Sources {
        linked: true,
        skills: default_skills.is_dir().then_some(default_skills),
        external: None,
        tools: None,
    };
    let mut check = false;
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("`{flag}` needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--skills" => sources.skills = Some(value()?),
            "--external" => sources.external = Some(value()?),
            "--tools" => sources.tools = Some(value()?),
            "--no-linked" => sources.linked = false,
            "--out" => out = value()?,
            "--model" => model = value()?,
            "--check" => check = true,
            _ => return Err(format!("unknown option `{flag}`\n{USAGE}").into()),
        }
    }
    let descriptors = sources.read()?;
    let embedder = Arc::new(MiniLm::load(&model)?);
    if check {
        return check_current(&out, &descriptors, embedder);
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
        "indexed {} of {} descriptors ({} vectors) into {} in {:.1}s",
        manifest.descriptor_count,
        descriptors.len(),
        manifest.vector_count,
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The manifest must match what a build would record now, and every artifact its checksum.
fn check_current(out: &Path, descriptors: &[Descriptor], embedder: Arc<MiniLm>) -> crate::Outcome {
    let stale = |error: chalie_index::IndexError| {
        format!(
            "{} ({}): `cargo xtask index` with the same options rebuilds it",
            error,
            error.code()
        )
    };
    let manifest = Index::check(out, descriptors, embedder.as_ref()).map_err(stale)?;
    Index::open(out, embedder).map_err(stale)?;
    println!(
        "index at {} is current ({} descriptors, {} vectors, checksums verified)",
        out.display(),
        manifest.descriptor_count,
        manifest.vector_count
    );
    Ok(())
}
