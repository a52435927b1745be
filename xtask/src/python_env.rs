//! `cargo xtask python-env`: a virtual environment with the official
//! Python MCP SDK, for the tests that drive chalie's MCP server with its
//! client and consume a server written with it.
//!
//! Idempotent: a venv that already has the pinned SDK is left alone, so
//! `cargo xtask test` can run it every time.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Outcome, project_root};

/// The pinned SDK, from PyPI.
const REQUIREMENT: &str = "mcp==2.3.0";
/// What the pinned SDK supports.
const MIN_PYTHON: (u32, u32) = (3, 10);

/// Where the venv lives; the MCP tests look for its interpreter there.
pub(crate) fn venv_dir() -> PathBuf {
    project_root().join(".chalie").join("venv")
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// Creates the venv and installs the SDK, unless it is there already.
pub(crate) fn run(args: &[String]) -> Outcome {
    if let Some(unknown) = args.first() {
        return Err(format!("`cargo xtask python-env` takes no options, got `{unknown}`").into());
    }
    let venv = venv_dir();
    let python = venv_python(&venv);
    let wanted = REQUIREMENT.trim_start_matches("mcp==");
    if installed_version(&python).as_deref() == Some(wanted) {
        println!("{REQUIREMENT} already installed in {}", venv.display());
        return Ok(());
    }
    if !python.exists() {
        // `CHALIE_PYTHON3` picks the interpreter the venv is made from.
        let base = std::env::var("CHALIE_PYTHON3").unwrap_or_else(|_| "python3".to_owned());
        check_version(&base)?;
        crate::system::step(
            Command::new(&base).args(["-m", "venv"]).arg(&venv),
            &format!("`{base} -m venv` (on Debian: `apt-get install python3-venv`)"),
        )?;
    }
    crate::system::step(
        Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--quiet",
            REQUIREMENT,
        ]),
        &format!("`pip install {REQUIREMENT}`"),
    )?;
    match installed_version(&python) {
        Some(version) if version == wanted => {
            println!("installed {REQUIREMENT} in {}", venv.display());
            Ok(())
        }
        other => Err(format!(
            "`pip install {REQUIREMENT}` finished but `import mcp` finds {other:?}; delete {} and run `cargo xtask python-env` again",
            venv.display()
        )
        .into()),
    }
}

/// The SDK's version as the venv's interpreter sees it.
fn installed_version(python: &Path) -> Option<String> {
    let output = Command::new(python)
        .args([
            "-c",
            "import mcp, importlib.metadata as m; print(m.version('mcp'))",
        ])
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

fn check_version(python: &str) -> Outcome {
    let output = Command::new(python)
        .args(["-c", "import sys; print(sys.version_info[0], sys.version_info[1])"])
        .output()
        .map_err(|error| {
            format!("cannot run `{python}` ({error}); install Python 3.10 or newer, or set CHALIE_PYTHON3")
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut parts = text
        .split_whitespace()
        .filter_map(|part| part.parse::<u32>().ok());
    let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if version < MIN_PYTHON {
        return Err(format!(
            "`{python}` is Python {}.{}; the MCP SDK needs {}.{} or newer (set CHALIE_PYTHON3 to another interpreter)",
            version.0, version.1, MIN_PYTHON.0, MIN_PYTHON.1
        )
        .into());
    }
    Ok(())
}
