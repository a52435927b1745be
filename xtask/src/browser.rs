//! `cargo xtask browser`: the headless Chromium and its WebDriver server the
//! console's browser tests drive, from the distribution's packages.
//!
//! Idempotent: when both binaries are there nothing is installed, so
//! `cargo xtask test` runs it every time. Installing takes root (CI runs as
//! root); otherwise it says which packages to install.

use std::path::Path;

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
    crate::system::apt_install(
        &["chromium", "chromium-driver"],
        &format!("{BROWSER} or {DRIVER} is missing"),
    )?;
    for binary in [BROWSER, DRIVER] {
        if !Path::new(binary).is_file() {
            return Err(format!("the packages installed, but {binary} is still missing").into());
        }
    }
    Ok(())
}
