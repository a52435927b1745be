//! Project automation for chalie, in the [cargo-xtask] style: `cargo xtask
//! <command>` runs this binary (the alias lives in `.cargo/config.toml`).
//!
//! [cargo-xtask]: https://github.com/matklad/cargo-xtask

mod bench_dispatch;
mod bench_mcp;
mod bench_replicas;
mod browser;
mod build_time;
mod ci;
mod cycles;
mod index;
mod lint;
mod manifest;
mod node_env;
mod postgres;
mod python_env;
mod serve_bench;
mod soak;
mod system;

use std::path::PathBuf;
use std::process::ExitCode;

// The abilities the shipped programs serve: the assistant and the MCP server
// link exactly these (chalie-index's are `find_tools` and `find_skills`), so the
// manifest and the lint cover what they serve. Both crates are built without
// their index engine here; `xtask-index` builds the index.
chalie_core::link_abilities!(assistant, chalie_index);

/// A subcommand's outcome; the message of an error is printed as it is.
type Outcome = Result<(), Box<dyn std::error::Error>>;

/// The workspace root, from this crate's manifest directory.
fn project_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(PathBuf::from)
        .unwrap_or(manifest_dir)
}

const USAGE: &str = "usage: cargo xtask <command> [options]

commands:
  test                         every test, then the contract checks (what CI runs)
  demo                         the example, after preparing what it needs
  bench-dispatch [--calls N] [--no-criterion] [--annotate]   instructions per call under
                               callgrind for chalie, rmcp and the no-framework floor
  bench-mcp [--rounds N] [--seconds S] [--only NAME] [--instructions]   requests per second
                               and p50/p99 of chalie's MCP server beside rmcp's at 1, 10 and
                               50 clients; --instructions: each server's instructions per
                               request under callgrind instead
  bench-replicas [CRITERION ARGS]   tool-call records per second and approval-to-write
                               latency, PostgreSQL (across replicas) beside SQLite, one run
  serve-bench [--runs N] [--sessions N]   what `assistant serve` adds to a run with a scripted
                               model (p50/p99 to the first SSE event and to the settlement)
                               and its resident memory with N sessions (release build)
  build-time [--tools N] [--repeats N] [--workspace]   cold build and check time of N
                               generated tools for chalie, rmcp and rig beside N plain functions
  manifest [--out FILE]        print the discovery manifest of every linked ability
  manifest --check             fail when a contract changed without its version bump (CI)
  manifest --update            rewrite contracts.lock.json and its deployment version, refused
                               while a bump is missing
  fetch-model [--dir DIR]      download and verify the default embedding model
  postgres start|stop|url      a throwaway PostgreSQL cluster in target/postgres for the
                               `postgres` store's tests (installs the distribution's package)
  soak [--full]                hostile HTTP, many SSE clients, a damaged, full and shared SQLite
                               file, processes killed: one table (CI size; --full: 1M requests,
                               1,000 clients)
  python-env                   a venv with the official Python MCP SDK, for the MCP tests
  node-env                     the official TypeScript MCP SDK client (npm ci), for the MCP tests
  browser                      headless Chromium and chromedriver (the distribution's packages),
                               for the console's browser tests
  index [--skills D] [--external F] [--check]   build (or check) the discovery index of the
                               linked abilities, skill playbooks and external tools
  eval --tools F --queries F [--examples-from F --examples N]   retrieval quality of the cascade
  golden [FILE] [--min-recall X] [--min-abstention X]   find_tools over the assistant's golden
                               requests on the built index (default: its set and CI's gate)
  cycles [--report]            import cycles between the files of each crate; fails on any
                               (--report: list them and pass)
  lint [--similarity X]        no import cycle (as `cycles`), then review summaries, field
                               descriptions and look-alike abilities (CI)
  tokens [--abilities N]       tokens (o200k_base) of tool definitions and results per request of
                               the demo, per provider; fails when a token goal is missed";

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_default();
    let rest: Vec<String> = args.collect();
    let outcome: Outcome = match command.as_str() {
        "test" => ci::test(&rest),
        "demo" => ci::demo(&rest),
        "bench-dispatch" => bench_dispatch::run(&rest),
        "bench-mcp" => bench_mcp::run(&rest),
        "bench-replicas" => bench_replicas::run(&rest),
        "build-time" => build_time::run(&rest),
        "manifest" => manifest::run(&rest),
        "lint" => lint::run(&rest),
        "cycles" => cycles::run(&rest),
        "index" | "eval" | "golden" | "fetch-model" | "tokens" => index::run(&command, &rest),
        "python-env" => python_env::run(&rest),
        "node-env" => node_env::run(&rest),
        "postgres" => postgres::run(&rest),
        "soak" => soak::run(&rest),
        "browser" => browser::run(&rest),
        "serve-bench" => serve_bench::run(&rest),
        "" | "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n\n{USAGE}").into()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
