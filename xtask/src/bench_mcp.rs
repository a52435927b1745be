//! `cargo xtask bench-mcp`: chalie's MCP server beside a plain rmcp
//! `#[tool]` server under the same load, in one run.
//!
//! Builds chalie-core's `mcp_serving` bench (release) and runs it: it starts
//! both servers on 127.0.0.1 (streamable HTTP, each in a process of its
//! own), drives them alternately with the same load generator (rmcp clients,
//! one MCP session per concurrent client) and prints requests per second
//! and p50 / p99 latency of `tools/call` at 1, 10 and 50 clients and of
//! `tools/list` over 150 tools, with chalie's ratio to rmcp and whether the
//! goals hold. Options (`--rounds N`, `--seconds S`, `--only NAME`) go to
//! the bench.

use std::path::PathBuf;
use std::process::Command;

use crate::{Outcome, project_root};

pub(crate) fn run(args: &[String]) -> Outcome {
    let root = project_root();
    let binary = build(&root)?;
    let status = Command::new(&binary)
        .args(args)
        .current_dir(root.join("chalie-core"))
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the MCP serving bench failed ({status})").into())
    }
}

/// Builds the bench once and returns the path of its binary.
fn build(root: &std::path::Path) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let output = Command::new(env!("CARGO"))
        .args([
            "bench",
            "--package",
            "chalie-core",
            "--features",
            "mcp",
            "--bench",
            "mcp_serving",
            "--no-run",
            "--message-format=json",
        ])
        .current_dir(root)
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "building the mcp_serving bench failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["target"]["name"] == "mcp_serving")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| "cargo built no `mcp_serving` bench binary".into())
}
