//! `cargo xtask index`, `golden`, `eval`, `fetch-model` and `tokens`: run by the
//! `xtask-index` binary, which links the embedding stack this one does without.

use std::process::Command;

/// Runs `command` with `args` in `xtask-index`, failing when it fails (it printed why).
pub(crate) fn run(command: &str, args: &[String]) -> crate::Outcome {
    let status = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--package", "xtask-index", "--", command])
        .args(args)
        .current_dir(crate::project_root())
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo xtask {command}` failed ({status})").into())
    }
}
