//! `cargo xtask manifest`: the published contracts of every linked
//! ability, and the check that none changed without its version bump.
//!
//! - no option: print the discovery manifest (JSON) to stdout;
//! - `--out FILE`: write it to FILE instead;
//! - `--check`: compare with the committed lock, fail on any difference,
//!   naming each field whose change needs a bump (CI runs this);
//! - `--update`: rewrite the lock, refused while a bump is missing.

use std::path::Path;

use chalie_core::{
    contracts::ContractLock, contracts::OutputSchemas, contracts::build_manifest,
    contracts::check_lock,
};

use crate::{Outcome, project_root};

/// The workspace's chalie configuration.
pub(crate) const CONFIG_FILE: &str = "chalie.toml";
/// The committed lock of published contracts.
pub(crate) const LOCK_FILE: &str = "contracts.lock.json";

/// The configured namespace, read from `chalie.toml` at the root.
pub(crate) fn load_config(
    root: &Path,
) -> Result<chalie_core::contracts::ChalieConfig, Box<dyn std::error::Error>> {
    let path = root.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|error| {
        format!(
            "cannot read {}: {error}; it sets `namespace = \"...\"`",
            path.display()
        )
    })?;
    toml::from_str(&text).map_err(|error| format!("{}: {error}", path.display()).into())
}

pub(crate) fn run(args: &[String]) -> Outcome {
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
    let root = project_root();
    let config = load_config(&root)?;
    let registry = chalie_core::registry()?;
    let outputs = OutputSchemas::linked()?;
    let manifest = build_manifest(&config.namespace, registry.iter(), &outputs)?;

    if !check && !update {
        let text = serde_json::to_string_pretty(&manifest)? + "\n";
        match out {
            Some(file) => std::fs::write(&file, text)
                .map_err(|error| format!("cannot write {file}: {error}"))?,
            None => print!("{text}"),
        }
        return Ok(());
    }

    let lock_path = root.join(LOCK_FILE);
    let lock = match std::fs::read_to_string(&lock_path) {
        Ok(text) => Some(
            serde_json::from_str::<ContractLock>(&text)
                .map_err(|error| format!("{}: {error}", lock_path.display()))?,
        ),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(format!("cannot read {}: {error}", lock_path.display()).into()),
    };
    let report = match &lock {
        Some(lock) => check_lock(lock, &manifest),
        None => Default::default(),
    };
    for problem in &report.problems {
        eprintln!("error: {problem}");
    }
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
        std::fs::write(&lock_path, ContractLock::from_manifest(&manifest).to_json())
            .map_err(|error| format!("cannot write {}: {error}", lock_path.display()))?;
        println!(
            "wrote {LOCK_FILE} ({} capabilities)",
            manifest.capabilities.len()
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
            "{LOCK_FILE} is up to date ({} capabilities)",
            manifest.capabilities.len()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed lock matches the linked examples: the same check CI
    /// runs with `cargo xtask manifest --check`.
    #[test]
    fn the_committed_lock_is_up_to_date() {
        let root = project_root();
        let config = load_config(&root).expect("chalie.toml");
        let registry = chalie_core::registry().expect("unique names");
        let outputs = OutputSchemas::linked().expect("one output per ability");
        let manifest =
            build_manifest(&config.namespace, registry.iter(), &outputs).expect("manifest");
        let text = std::fs::read_to_string(root.join(LOCK_FILE)).expect("the lock is committed");
        let lock: ContractLock = serde_json::from_str(&text).expect("the lock parses");
        let report = check_lock(&lock, &manifest);
        let problems: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
        let drift: Vec<String> = report.drift.iter().map(ToString::to_string).collect();
        assert!(
            report.is_clean(),
            "run `cargo xtask manifest --update`:\n{}\n{}",
            problems.join("\n"),
            drift.join("\n")
        );
    }

    /// The examples pass the description lint.
    #[test]
    fn the_examples_pass_the_lint() {
        let registry = chalie_core::registry().expect("unique names");
        let findings = chalie_core::contracts::lint(
            registry.iter(),
            &chalie_core::contracts::LintOptions::default(),
        );
        let findings: Vec<String> = findings.iter().map(ToString::to_string).collect();
        assert!(findings.is_empty(), "{}", findings.join("\n"));
    }
}
