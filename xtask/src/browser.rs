//! `cargo xtask browser`: the headless Chromium and its WebDriver server the
//! console's browser tests drive, from the distribution's packages.
//!
//! Idempotent: when both binaries are there nothing is installed, so
//! `cargo xtask test` runs it every time. Installing takes root (CI runs as
//! root); otherwise it says which packages to install.

use std::path::Path;
use std::process::Command;

use crate::Outcome;

/// Where Debian's `chromium` and `chromium-driver` put their binaries; the
/// browser tests look there.
const BROWSER: &str = "/usr/bin/chromium";
const DRIVER: &str = "/usr/bin/chromedriver";

pub(crate) fn run(args: &[String]) -> Outcome {
    if let Some(unknown) = args.first() {
        return Err(format!("`cargo xtask browser` takes no options, got `{unknown}`").into());
    }
    if Path::new(BROWSER).is_file() && Path::new(DRIVER).is_file() {
        println!("{BROWSER} and {DRIVER} already installed");
        return Ok(());
    }
    if !crate::postgres::is_root() {
        return Err(format!(
            "{BROWSER} or {DRIVER} is missing; install the distribution's packages \
             (`apt-get install chromium chromium-driver`) and retry"
        )
        .into());
    }
    println!("Chromium is not installed; installing the distribution's packages");
    step(Command::new("apt-get").arg("update"), "apt-get update")?;
    step(
        Command::new("apt-get")
            .args([
                "install",
                "--yes",
                "--no-install-recommends",
                "chromium",
                "chromium-driver",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive"),
        "apt-get install chromium chromium-driver",
    )?;
    for binary in [BROWSER, DRIVER] {
        if !Path::new(binary).is_file() {
            return Err(format!("the packages installed, but {binary} is still missing").into());
        }
    }
    Ok(())
}

fn step(command: &mut Command, what: &str) -> Outcome {
    let status = command.status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{what}` failed ({status})").into())
    }
}
