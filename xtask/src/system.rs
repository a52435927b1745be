//! What the set-up commands share with the machine: whether they may
//! install the distribution's packages, running one step of a set-up, and
//! the install itself.

use std::process::Command;

use crate::Outcome;

/// Whether this runs as root, who may install the distribution's packages.
pub(crate) fn is_root() -> bool {
    id(&["-u"]).is_ok_and(|uid| uid == 0)
}

/// What `id ARGS` prints, as a number (a uid or a gid).
pub(crate) fn id(args: &[&str]) -> Result<u32, Box<dyn std::error::Error>> {
    let output = Command::new("id").args(args).output()?;
    if !output.status.success() {
        return Err(format!("`id {}` failed", args.join(" ")).into());
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().parse()?)
}

/// Runs `command`, failing with its status and what it printed when it
/// fails; `what` names it in the error. Its output is kept until then, so
/// a set-up that works stays quiet.
pub(crate) fn step(command: &mut Command, what: &str) -> Outcome {
    let output = command
        .output()
        .map_err(|error| format!("cannot run {what}: {error}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
    .into())
}

/// Installs the distribution's `packages` with apt-get. `missing` says
/// what was not found (e.g. "PostgreSQL's initdb and pg_ctl were not
/// found"): when this is not root, the error is `missing` and the command
/// to run by hand.
pub(crate) fn apt_install(packages: &[&str], missing: &str) -> Outcome {
    let listed = packages.join(" ");
    if !is_root() {
        return Err(format!(
            "{missing}; install the distribution's packages (`apt-get install {listed}`) and retry"
        )
        .into());
    }
    println!("{missing}; installing the distribution's packages ({listed})");
    step(Command::new("apt-get").arg("update"), "`apt-get update`")?;
    step(
        Command::new("apt-get")
            .args(["install", "--yes", "--no-install-recommends"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive"),
        &format!("`apt-get install {listed}`"),
    )
}
