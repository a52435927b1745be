//! `cargo xtask manifest`: the published contracts of every linked ability,
//! the check that none changed without its version bump, and the
//! deployment version of the whole set. The command is chalie-core's
//! [`manifest_command`], the same a user's `Xtask` runs.

use chalie_core::contracts::build::manifest_command;

use crate::{Outcome, project_root};

pub(crate) fn run(args: &[String]) -> Outcome {
    Ok(manifest_command(&project_root(), args)?)
}

#[cfg(test)]
mod tests {
    use chalie_core::contracts::build::{ContractLock, LOCK_FILE, check_lock, linked_manifest};

    use crate::project_root;

    /// The committed lock matches the linked examples: the same check CI
    /// runs with `cargo xtask manifest --check`.
    #[test]
    fn the_committed_lock_is_up_to_date() {
        let root = project_root();
        let manifest = linked_manifest(&root).expect("manifest");
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
        let findings = chalie_core::contracts::build::lint(
            registry.iter(),
            &chalie_core::contracts::build::LintOptions::default(),
        );
        let findings: Vec<String> = findings.iter().map(ToString::to_string).collect();
        assert!(findings.is_empty(), "{}", findings.join("\n"));
    }
}
