//! `cargo xtask test` and `cargo xtask demo`: the two commands the README
//! gives, each doing all of its own set-up on a fresh machine.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::{Outcome, project_root};

/// Runs `cargo` with `args` in the workspace root, failing on failure.
pub(crate) fn cargo(args: &[&str]) -> Outcome {
    cargo_with(args, &[])
}

/// [`cargo`] with extra environment variables for the command.
pub(crate) fn cargo_with(args: &[&str], env: &[(&str, &str)]) -> Outcome {
    println!("\n$ cargo {}", args.join(" "));
    let status = Command::new(env!("CARGO"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(project_root())
        .status()?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")).into())
    }
}

/// Builds with `cargo ARGS --message-format=json` (and `env`) in the
/// workspace root and returns the path of the executable of the target
/// named `target`, wherever the configured target directory puts it.
/// Cargo's progress and errors go to the terminal.
pub(crate) fn built_executable(
    args: &[&str],
    env: &[(&str, &str)],
    target: &str,
) -> Result<PathBuf, Box<dyn std::error::Error>> {
    println!("\n$ cargo {}", args.join(" "));
    let output = Command::new(env!("CARGO"))
        .args(args)
        .arg("--message-format=json")
        .envs(env.iter().copied())
        .current_dir(project_root())
        .stderr(Stdio::inherit())
        .output()?;
    if !output.status.success() {
        return Err(format!("`cargo {}` failed ({})", args.join(" "), output.status).into());
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["target"]["name"] == target)
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("`cargo {}` built no `{target}` executable", args.join(" ")).into())
}

/// The workspace members with `publish = false`: examples and automation.
const UNPUBLISHED: [&str; 5] = [
    "assistant",
    "mcp-server",
    "quickstart",
    "xtask",
    "xtask-index",
];

/// Every test, then the contract checks CI enforces.
pub(crate) fn test(args: &[String]) -> Outcome {
    if let Some(unknown) = args.first() {
        return Err(format!("`cargo xtask test` takes no options, got `{unknown}`").into());
    }
    // The layout first: it takes a second, and an import cycle between
    // files fails before the long steps (`lint` checks it again).
    println!("$ cargo xtask cycles");
    crate::cycles::check()?;
    prepare()?;
    prepare_python()?;
    println!("\n$ cargo xtask node-env");
    crate::node_env::run(&[])?;
    prepare_browser()?;
    // The `postgres` store's tests run against a real server, started here
    // and stopped when `postgres` drops, whether the tests pass or not.
    let postgres = crate::postgres::started(crate::postgres::Durability::Throwaway)?;
    // Every feature: the optional integrations (SQLite, PostgreSQL, HTTP,
    // MCP) are tested too, not only the default build. The assistant's and
    // the MCP server's tests run the programs on the index `prepare` built.
    cargo_with(
        &[
            "test",
            "--workspace",
            "--all-features",
            "--locked",
            "--no-fail-fast",
        ],
        &[(crate::postgres::URL_VARIABLE, &postgres.url)],
    )?;
    drop(postgres);
    // Faults and load at the size CI affords, with their table: the only
    // run of `chalie-core`'s `faults` binary (`test = false` keeps it out of
    // the workspace run above).
    println!("\n$ cargo xtask soak");
    crate::soak::run(&[])?;
    // The API docs build without a warning: a broken or private intra-doc
    // link fails here, not on docs.rs.
    cargo_with(
        &[
            "doc",
            "--workspace",
            "--no-deps",
            "--all-features",
            "--locked",
        ],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    // A release stays one command away: every publishable crate packages
    // (metadata, readme, no file from outside its folder). `cargo package`
    // packages `publish = false` members too, so they are named here; a new
    // member is packaged until it says which it is.
    let mut package = vec!["package", "--workspace", "--no-verify", "--locked"];
    for unpublished in UNPUBLISHED {
        package.extend(["--exclude", unpublished]);
    }
    cargo(&package)?;
    println!("\n$ cargo xtask manifest --check");
    crate::manifest::run(&["--check".to_owned()])?;
    // The index the programs open, checked the way a deployment would: the build and the
    // check must agree on every field.
    println!("\n$ cargo xtask index --check");
    crate::index::run("index", &["--check".to_owned()])?;
    // Retrieval quality is a gate, not a report: find_tools over the golden requests.
    println!("\n$ cargo xtask golden");
    crate::index::run("golden", &[])?;
    // So is what every request costs: the token goals of the demo's turns.
    println!("\n$ cargo xtask tokens");
    crate::index::run("tokens", &[])?;
    // The import cycles were checked first thing: lint's other half only.
    println!("\n$ cargo xtask lint");
    crate::lint::abilities(&[])?;
    // A newcomer's first five minutes: the README's two commands are these
    // two, `.ci/run` is the test one, and the demo runs to the end.
    readme_commands_are_true()?;
    println!("\n$ cargo xtask demo");
    demo(&[])
}

/// Fails when the README's "Two commands" or `.ci/run` drifted from what
/// `cargo xtask test` and `cargo xtask demo` are.
fn readme_commands_are_true() -> Outcome {
    let root = project_root();
    let readme = std::fs::read_to_string(root.join("README.md"))?;
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Two commands"))
        .ok_or("README.md has no \"## Two commands\" section")?;
    for command in ["`cargo xtask demo`", "`cargo xtask test`"] {
        if !section.contains(command) {
            return Err(format!("README.md's \"Two commands\" no longer gives {command}").into());
        }
    }
    let ci = std::fs::read_to_string(root.join(".ci/run"))?;
    if !ci.lines().any(|line| line.trim() == "cargo xtask test") {
        return Err(
            ".ci/run must run exactly the README's test command, `cargo xtask test`".into(),
        );
    }
    Ok(())
}

/// The example assistant, after preparing what it needs: the model files
/// and the discovery index it opens.
pub(crate) fn demo(args: &[String]) -> Outcome {
    if let Some(unknown) = args.first() {
        return Err(format!("`cargo xtask demo` takes no options, got `{unknown}`").into());
    }
    prepare()?;
    cargo(&["run", "--quiet", "--locked", "--package", "assistant"])
}

/// What both need before they start: the model, then the index the
/// programs open (they refuse a missing or stale one). Idempotent: a second
/// run checks the hashes, downloads nothing and embeds only what changed.
pub(crate) fn prepare() -> Outcome {
    println!("\n$ cargo xtask fetch-model");
    crate::index::run("fetch-model", &[])?;
    println!("\n$ cargo xtask index");
    crate::index::run("index", &[])
}

/// The headless Chromium the console's browser tests drive.
fn prepare_browser() -> Outcome {
    println!("\n$ cargo xtask browser");
    crate::browser::run(&[])
}

/// The Python MCP SDK the MCP interop tests drive chalie with.
fn prepare_python() -> Outcome {
    println!("\n$ cargo xtask python-env");
    crate::python_env::run(&[])
}
