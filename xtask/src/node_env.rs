//! `cargo xtask node-env`: the official TypeScript MCP SDK client
//! (`@modelcontextprotocol/client`, the SDK's 2026-07-28 release line), for
//! the test that drives chalie's MCP server with it and answers an approval.
//!
//! Installs exactly what `chalie-core/tests/mcp/node/package-lock.json`
//! pins (`npm ci`) into that folder's `node_modules`. Idempotent: an
//! install newer than the lock file is left alone, so `cargo xtask test`
//! can run it every time. Without `node`/`npm`, root installs Debian's
//! `nodejs` and `npm` packages; the SDK needs Node.js 20 or newer.

use std::path::PathBuf;
use std::process::Command;

use crate::{Outcome, project_root};

/// The oldest Node.js the pinned SDK supports (its `engines`).
const MIN_NODE: u32 = 20;

/// The project folder with `package.json` and `package-lock.json`.
fn node_dir() -> PathBuf {
    project_root()
        .join("chalie-core")
        .join("tests")
        .join("mcp")
        .join("node")
}

/// Installs the locked packages, unless they are installed already.
pub(crate) fn run(args: &[String]) -> Outcome {
    if let Some(unknown) = args.first() {
        return Err(format!("`cargo xtask node-env` takes no options, got `{unknown}`").into());
    }
    let dir = node_dir();
    let lock = dir.join("package-lock.json");
    // npm writes this copy of the lock on every install.
    let installed = dir.join("node_modules").join(".package-lock.json");
    let modified = |path: &PathBuf| {
        std::fs::metadata(path)
            .and_then(|meta| meta.modified())
            .ok()
    };
    if let (Some(installed), Some(locked)) = (modified(&installed), modified(&lock))
        && installed >= locked
    {
        println!(
            "the TypeScript MCP SDK is already installed in {}",
            dir.display()
        );
        return Ok(());
    }
    ensure_node()?;
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .status()
        .map_err(|error| format!("cannot run `npm ci`: {error}"))?;
    if !status.success() {
        return Err(format!("`npm ci` in {} failed ({status})", dir.display()).into());
    }
    println!("installed the TypeScript MCP SDK in {}", dir.display());
    Ok(())
}

/// `node` of at least [`MIN_NODE`] and `npm`, installed from Debian when
/// missing and allowed.
fn ensure_node() -> Outcome {
    if node_major().is_none() || Command::new("npm").arg("--version").output().is_err() {
        crate::system::apt_install(
            &["nodejs", "npm"],
            &format!("Node.js ({MIN_NODE} or newer) and npm were not found"),
        )?;
    }
    match node_major() {
        Some(major) if major >= MIN_NODE => Ok(()),
        Some(major) => Err(format!(
            "Node.js {major} is installed; the TypeScript MCP SDK needs {MIN_NODE} or newer"
        )
        .into()),
        None => Err("`node --version` still fails after installing Node.js".into()),
    }
}

/// The major version `node --version` reports (`v20.1.0` is 20).
fn node_major() -> Option<u32> {
    let output = Command::new("node").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.trim()
        .trim_start_matches('v')
        .split('.')
        .next()?
        .parse()
        .ok()
}
