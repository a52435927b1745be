//! `cargo xtask build-time`: what chalie's macros cost at compile time,
//! beside rmcp's and rig's for the same tools.
//!
//! Generates a workspace (under `target/build-time/`, not in git) of one
//! crate per framework with the same N three-field tools, and one crate of
//! the same N plain functions. Dependencies are fetched once and built
//! first; then, in one run and interleaved so the machine's load falls on
//! every crate alike, each crate alone is built cold (`cargo clean -p`,
//! then `cargo build`) and checked cold (`cargo clean -p`, then `cargo
//! check`). The table gives the median of each, its cost above the plain
//! crate, and chalie's cost above plain as a share of rmcp's and rig's: on
//! a noisy machine the ratios within one run are what compare.
//! A fifth crate, the floor, writes each tool's descriptors by hand as the
//! plain data the macros emit, with one parse-and-box function per tool
//! and no macro, trait or compile-time check: what the macros' output
//! could cost at the least.
//! `--workspace` also times a cold build of chalie's whole workspace into
//! a fresh target directory; `--instructions` also counts the instructions
//! the compiler runs for each crate (see `instructions`).

mod instructions;
mod sources;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::{Outcome, project_root};
use sources::CRATES;

/// What is timed: a cold build, and a cold check.
pub(crate) const MODES: [&str; 2] = ["build", "check"];

pub(crate) fn run(args: &[String]) -> Outcome {
    let mut tools = 200usize;
    let mut repeats = 3usize;
    let mut workspace = false;
    let mut count_instructions = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--tools" => tools = number(args.next(), "--tools")?,
            "--repeats" => repeats = number(args.next(), "--repeats")?,
            "--workspace" => workspace = true,
            "--instructions" => count_instructions = true,
            other => {
                return Err(format!(
                    "unknown option `{other}`; expected --tools N, --repeats N, --workspace or --instructions"
                )
                .into());
            }
        }
    }
    if repeats == 0 || tools == 0 {
        return Err("--tools and --repeats take a number above 0".into());
    }
    let root = project_root();
    if workspace {
        time_workspace(&root)?;
    }

    let dir = root.join("target").join("build-time");
    std::fs::create_dir_all(&dir)?;
    sources::write_workspace(&dir, &root, tools)?;
    // The one step that may use the network: afterwards every command is
    // `--frozen` (offline, on the lock as it is).
    eprintln!("fetching the dependencies of {}", dir.display());
    run_cargo(&dir, &["fetch", "--quiet"])?;
    // Each crate alone, as it is timed: built with the whole workspace, a
    // dependency shared by two crates gets the union of their features,
    // and the first timed build of one crate would rebuild it.
    for mode in MODES {
        eprintln!("building the dependencies ({mode})");
        for krate in &CRATES {
            run_cargo(&dir, &[mode, "--frozen", "--quiet", "-p", krate.package])?;
        }
    }

    // samples[crate][mode]
    let mut samples = vec![[Vec::new(), Vec::new()]; CRATES.len()];
    for round in 1..=repeats {
        eprintln!("round {round} of {repeats}");
        for (krate, row) in CRATES.iter().zip(&mut samples) {
            for (mode, cell) in MODES.iter().zip(row.iter_mut()) {
                run_cargo(&dir, &["clean", "--frozen", "--quiet", "-p", krate.package])?;
                cell.push(timed(
                    &dir,
                    &[mode, "--frozen", "--quiet", "-p", krate.package],
                )?);
            }
        }
    }
    let medians: Vec<[f64; 2]> = samples
        .iter_mut()
        .map(|row| [median(&mut row[0]), median(&mut row[1])])
        .collect();
    let caption = format!(
        "{tools} tools per crate; median of {repeats} cold builds and checks of each crate alone (dev profile, dependencies prebuilt)"
    );
    print!("{}", table(&caption, "s", &medians));
    if count_instructions {
        let counts = instructions::count(&dir)?;
        let caption = format!(
            "\n{tools} tools per crate; instructions (billions) the compiler runs for a cold build and check of each crate alone, counted by cachegrind"
        );
        print!("{}", table(&caption, "G", &counts));
    }
    Ok(())
}

fn number(value: Option<&String>, option: &str) -> Result<usize, String> {
    value
        .and_then(|value| value.parse().ok())
        .ok_or_else(|| format!("{option} takes a number"))
}

/// The table, in Markdown so it can be pasted where the figures are kept:
/// one row per crate of [build, check] figures in `unit`.
fn table(caption: &str, unit: &str, medians: &[[f64; 2]]) -> String {
    let plain = medians[0];
    let above = |row: [f64; 2], mode: usize| row[mode] - plain[mode];
    let mut out = format!(
        "{caption}\n\n| crate | build | above plain | check | above plain |\n|---|---:|---:|---:|---:|\n"
    );
    for (krate, &row) in CRATES.iter().zip(medians) {
        let cell = |mode: usize| {
            if krate.label == CRATES[0].label {
                "".to_string()
            } else {
                format!("{:.2} {unit}", above(row, mode))
            }
        };
        out.push_str(&format!(
            "| {} | {:.2} {unit} | {} | {:.2} {unit} | {} |\n",
            krate.label,
            row[0],
            cell(0),
            row[1],
            cell(1)
        ));
    }
    let chalie = medians[1];
    for (index, peer) in [(2, "rmcp"), (3, "rig")] {
        let ratio = |mode: usize| above(chalie, mode) / above(medians[index], mode);
        out.push_str(&format!(
            "\nchalie's cost above plain / {peer}'s: {:.2}x build, {:.2}x check",
            ratio(0),
            ratio(1)
        ));
    }
    let floor = medians[4];
    let ratio = |mode: usize| above(floor, mode) / above(medians[2], mode);
    out.push_str(&format!(
        "\nthe floor's cost above plain / rmcp's: {:.2}x build, {:.2}x check",
        ratio(0),
        ratio(1)
    ));
    out.push('\n');
    out
}

fn median(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64()
}

pub(crate) fn cargo(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("cargo");
    command
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"));
    command
}

pub(crate) fn run_cargo(dir: &Path, args: &[&str]) -> Outcome {
    timed(dir, args).map(|_| ())
}

fn timed(dir: &Path, args: &[&str]) -> Result<Duration, Box<dyn std::error::Error>> {
    let start = Instant::now();
    let status = cargo(dir, args).status()?;
    if !status.success() {
        return Err(format!(
            "`cargo {}` in {} failed with {status}",
            args.join(" "),
            dir.display()
        )
        .into());
    }
    Ok(start.elapsed())
}

/// A cold build of chalie's whole workspace, into a fresh target directory.
fn time_workspace(root: &Path) -> Outcome {
    let target = root.join("target").join("build-time-workspace");
    let _ = std::fs::remove_dir_all(&target);
    let start = Instant::now();
    let status = Command::new("cargo")
        .args(["build", "--workspace", "--quiet"])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", &target)
        .status()?;
    let elapsed = start.elapsed();
    let _ = std::fs::remove_dir_all(&target);
    if !status.success() {
        return Err(format!("`cargo build --workspace` failed with {status}").into());
    }
    println!(
        "cold workspace build (cargo build --workspace, dev profile): {:.1} s",
        elapsed.as_secs_f64()
    );
    Ok(())
}
