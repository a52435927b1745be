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

use std::process::Command;

use crate::{Outcome, project_root};

pub(crate) fn run(args: &[String]) -> Outcome {
    let root = project_root();
    let binary = crate::ci::built_executable(
        &[
            "bench",
            "--package",
            "chalie-core",
            "--features",
            "mcp",
            "--bench",
            "mcp_serving",
            "--no-run",
        ],
        &[],
        "mcp_serving",
    )?;
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
