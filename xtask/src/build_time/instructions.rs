//! `cargo xtask build-time --instructions`: the instructions the compiler
//! runs for each crate, counted by valgrind, beside the times. A count
//! does not depend on what else the machine runs, so on a shared or busy
//! machine it compares the crates where a time cannot.
//!
//! Each crate is cleaned and compiled alone (its dependencies are already
//! built) with cargo's `RUSTC_WRAPPER` set to a script that runs rustc
//! under cachegrind for the generated crates only. The compiler runs its
//! threads one at a time under valgrind, so a count is the work of every
//! thread: what a cold compile costs on a machine with one core.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::sources::CRATES;
use super::{MODES, cargo};

/// The wrapper: cachegrind for a generated `tools_*` crate (valgrind's own
/// messages to a log beside the count, the compiler's output as it is),
/// rustc as it is for anything else (a build script's probe, a dependency
/// cargo rebuilds).
const WRAPPER: &str = r#"#!/bin/sh
case " $* " in
  *" --crate-name tools_"*)
    exec valgrind --log-file="$CHALIE_BUILD_TIME_COUNT.log" --tool=cachegrind --cache-sim=no --cachegrind-out-file="$CHALIE_BUILD_TIME_COUNT" "$@" ;;
  *) exec "$@" ;;
esac
"#;

/// Instructions (in billions) per crate and mode, in `CRATES` order.
pub(super) fn count(dir: &Path) -> Result<Vec<[f64; 2]>, Box<dyn std::error::Error>> {
    if Command::new("valgrind").arg("--version").output().is_err() {
        return Err("valgrind is not installed; install it (e.g. `apt-get install valgrind`) to count instructions".into());
    }
    let wrapper = write_wrapper(dir)?;
    let mut counts = Vec::new();
    for krate in &CRATES {
        let mut row = [0.0; 2];
        for (mode, cell) in MODES.iter().zip(row.iter_mut()) {
            eprintln!("counting {} ({mode})", krate.package);
            let out = dir
                .join("target")
                .join(format!("{}.{mode}.cachegrind", krate.package));
            let _ = std::fs::remove_file(&out);
            super::run_cargo(dir, &["clean", "--frozen", "--quiet", "-p", krate.package])?;
            let status = cargo(dir, &[mode, "--frozen", "--quiet", "-p", krate.package])
                .env("RUSTC_WRAPPER", &wrapper)
                .env("CHALIE_BUILD_TIME_COUNT", &out)
                .status()?;
            if !status.success() {
                return Err(format!(
                    "`cargo {mode} -p {}` under cachegrind failed with {status}",
                    krate.package
                )
                .into());
            }
            *cell = summary(&out)? as f64 / 1e9;
        }
        counts.push(row);
    }
    Ok(counts)
}

fn write_wrapper(dir: &Path) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let path = dir.join("count-rustc.sh");
    std::fs::write(&path, WRAPPER)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(path)
}

/// The total from a cachegrind output's `summary:` line.
fn summary(out: &Path) -> Result<u64, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(out).map_err(|error| {
        format!(
            "no cachegrind output at {} ({error}): was the crate compiled at all?",
            out.display()
        )
    })?;
    text.lines()
        .find_map(|line| line.strip_prefix("summary:"))
        .and_then(|total| total.trim().parse().ok())
        .ok_or_else(|| format!("{} has no `summary:` line", out.display()).into())
}
