//! The contract commands of a project's `cargo xtask`: `manifest` (with
//! `--check` and `--update`) and `lint`, over the abilities linked into the
//! binary that runs them.
//!
//! One implementation for every `xtask`: chalie's own calls these, and so
//! does `chalie_index::xtask::Xtask`, which a user's few-line xtask runs;
//! the rules they apply live in [`check_lock`] and [`lint`].

use std::fmt;
use std::path::Path;

use super::lint::{LintOptions, lint};
use super::lock::{ContractLock, check_lock};
use super::manifest::{Manifest, build_manifest};
use crate::contracts::ChalieConfig;
use crate::contracts::OutputSchemas;

/// The project's chalie configuration, at its root: it sets the namespace.
pub const CONFIG_FILE: &str = "chalie.toml";
/// The committed lock of published contracts, at the project's root.
pub const LOCK_FILE: &str = "contracts.lock.json";

/// Why a contract command failed: a sentence for the terminal, saying what
/// to run or change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandError(String);

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CommandError {}

impl From<String> for CommandError {
    fn from(message: String) -> Self {
        CommandError(message)
    }
}

impl From<&str> for CommandError {
    fn from(message: &str) -> Self {
        CommandError(message.to_owned())
    }
}

/// Reads `chalie.toml` at `root`.
pub fn load_config(root: &Path) -> Result<ChalieConfig, CommandError> {
    let path = root.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|error| {
        format!(
            "cannot read {}: {error}; it sets `namespace = \"...\"`",
            path.display()
        )
    })?;
    toml::from_str(&text).map_err(|error| format!("{}: {error}", path.display()).into())
}

/// The manifest of every ability linked into this binary, in the namespace
/// `chalie.toml` at `root` sets.
pub fn linked_manifest(root: &Path) -> Result<Manifest, CommandError> {
    let config = load_config(root)?;
    let registry = crate::registry().map_err(|error| error.to_string())?;
    let outputs = OutputSchemas::linked().map_err(|error| error.to_string())?;
    build_manifest(&config.namespace, registry.iter(), &outputs)
        .map_err(|error| CommandError(error.to_string()))
}

/// Reads the lock at `root`; `None` when there is none yet.
fn read_lock(root: &Path) -> Result<Option<ContractLock>, CommandError> {
    let path = root.join(LOCK_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str::<ContractLock>(&text)
            .map(Some)
            .map_err(|error| format!("{}: {error}", path.display()).into()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(format!("cannot read {}: {error}", path.display()).into()),
    }
}

/// `manifest`: the published contracts of every linked ability for the
/// project at `root`, and the check that none changed without its version
/// bump.
///
/// - no option: print the discovery manifest (JSON), with the deployment
///   version the lock gives it, to stdout;
/// - `--out FILE`: write it to FILE instead;
/// - `--check`: compare with the committed lock, fail on any difference,
///   naming each field whose change needs a bump (CI runs this);
/// - `--update`: rewrite the lock, with the deployment version bumped by
///   the strongest change, refused while a bump is missing.
pub fn manifest_command(root: &Path, args: &[String]) -> Result<(), CommandError> {
    let mut out = None;
    let mut check = false;
    let mut update = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--out" => out = Some(args.next().ok_or("--out takes a file")?.clone()),
            "--check" => check = true,
            "--update" => update = true,
            other => {
                return Err(format!(
                    "unknown option `{other}`; expected --out FILE, --check or --update"
                )
                .into());
            }
        }
    }
    let mut manifest = linked_manifest(root)?;
    let lock = read_lock(root)?;
    // Against no lock at all, everything is new and the deployment first.
    let empty = ContractLock {
        namespace: manifest.namespace.clone(),
        deployment: None,
        capabilities: Default::default(),
    };
    let report = check_lock(lock.as_ref().unwrap_or(&empty), &manifest);

    if !check && !update {
        manifest.deployment = Some(report.deployment.clone());
        let text = serde_json::to_string_pretty(&manifest)
            .map_err(|error| format!("cannot write the manifest as JSON: {error}"))?
            + "\n";
        match out {
            Some(file) => std::fs::write(&file, text)
                .map_err(|error| format!("cannot write {file}: {error}"))?,
            None => print!("{text}"),
        }
        return Ok(());
    }

    for problem in &report.problems {
        eprintln!("error: {problem}");
    }
    let lock_path = root.join(LOCK_FILE);
    if update {
        if !report.can_update() {
            return Err(format!(
                "{} contract(s) need a version bump before the lock can be updated",
                report.problems.len()
            )
            .into());
        }
        for drift in &report.drift {
            println!("updated: {drift}");
        }
        let accepted = ContractLock::accepting(&manifest, report.deployment.clone());
        std::fs::write(&lock_path, accepted.to_json())
            .map_err(|error| format!("cannot write {}: {error}", lock_path.display()))?;
        println!(
            "wrote {LOCK_FILE} ({} capabilities, deployment {})",
            manifest.capabilities.len(),
            report.deployment.version
        );
        return Ok(());
    }
    if lock.is_none() {
        return Err(format!(
            "{LOCK_FILE} is missing; create it with `cargo xtask manifest --update`"
        )
        .into());
    }
    for drift in &report.drift {
        eprintln!("out of date: {drift}");
    }
    if report.is_clean() {
        println!(
            "{LOCK_FILE} is up to date ({} capabilities, deployment {})",
            manifest.capabilities.len(),
            report.deployment.version
        );
        Ok(())
    } else if report.can_update() {
        Err(format!(
            "{LOCK_FILE} is out of date; run `cargo xtask manifest --update` and commit it"
        )
        .into())
    } else {
        Err(format!(
            "{} contract(s) changed without the version bump they need",
            report.problems.len()
        )
        .into())
    }
}

/// `lint`: would a model understand every linked ability? Reviews
/// summaries, field descriptions and look-alike pairs; any finding fails
/// the command (`--similarity X` sets the look-alike threshold).
pub fn lint_command(args: &[String]) -> Result<(), CommandError> {
    let mut options = LintOptions::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--similarity" => {
                options.similarity_threshold = args
                    .next()
                    .and_then(|value| value.parse().ok())
                    .filter(|value: &f64| (0.0..=1.0).contains(value))
                    .ok_or("--similarity takes a number between 0 and 1")?;
            }
            other => {
                return Err(format!("unknown option `{other}`; expected --similarity X").into());
            }
        }
    }
    let registry = crate::registry().map_err(|error| error.to_string())?;
    let findings = lint(registry.iter(), &options);
    for finding in &findings {
        eprintln!("{finding}");
    }
    if findings.is_empty() {
        println!("lint: {} abilities, no findings", registry.len());
        Ok(())
    } else {
        Err(format!(
            "lint: {} finding(s) in {} abilities",
            findings.len(),
            registry.len()
        )
        .into())
    }
}
