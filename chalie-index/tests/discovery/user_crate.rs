//! A user's own crate, outside this workspace, indexed by its own few-line xtask.
//!
//! The test writes a small workspace into a temporary folder: a crate `my_tools` with two
//! abilities and a program that opens the prebuilt index and calls `find_tools` through
//! the dispatcher, and an `xtask` whose source is the README's "Your own crate's index"
//! block, verbatim, so the README cannot drift from what works. Cargo then builds it
//! offline, as a user would run it: `cargo xtask index`, `cargo xtask index --check`, the
//! program; then one ability's summary is edited and both must report `index-stale` until
//! the index is rebuilt. The same xtask runs the contract checks chalie's own runs:
//! `manifest --update` writes the lock, `manifest --check` refuses a contract changed
//! without its version bump, and `lint` flags a summary a model could not use.
//!
//! The generated workspace shares this build's dependency artifacts (cargo's build
//! directory), so only the two new crates and what their feature set changes compile.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ABILITIES: &str = r#"//! Two abilities of a user's crate.
use chalie_core::{Params, ToolResult, ability};

/// Parameters of [`tide_times()`].
#[derive(Params)]
pub struct TideParams {
    /// The harbour, e.g. `Marsaxlokk`.
    pub harbour: String,
    TIDE_EXTRA_FIELD
}

/// SUMMARY_OF_TIDES
#[ability(
    effect = read,
    examples = [
        "when is high tide in Marsaxlokk",
        "tide table for the harbour",
        "low water times tomorrow",
        "is the tide coming in",
        "tides this weekend at the port",
        "what time does the tide turn",
    ],
)]
pub async fn tide_times(params: TideParams) -> ToolResult {
    ToolResult::success(params.harbour)
}

/// Parameters of [`harbour_berths()`].
#[derive(Params)]
pub struct BerthParams {
    /// The harbour, e.g. `Grand Harbour`.
    pub harbour: String,
}

/// SUMMARY_OF_BERTHS
#[ability(
    effect = read,
    examples = [
        "is there a free berth in Grand Harbour",
        "where can I moor my sailboat",
        "book a mooring for tonight",
        "free spots in the marina",
        "visitor berths available",
        "can I dock my yacht here",
    ],
)]
pub async fn harbour_berths(params: BerthParams) -> ToolResult {
    ToolResult::success(params.harbour)
}
"#;

const TIDES_SUMMARY: &str = "Tide times (high and low water) for a harbour. Use it when the \
                             user asks when the tide turns.";
const TIDES_SUMMARY_EDITED: &str = "High and low water times for a harbour, a week ahead. Use \
                                    it when the user asks about tides.";
const BERTHS_SUMMARY: &str =
    "Lists free berths in a harbour for visiting boats. Use it when the user wants to moor.";
/// A summary the description lint refuses: it says neither what nor when.
const BERTHS_SUMMARY_BAD: &str = "Berths.";
/// A new required parameter: a breaking change of `tide_times`'s contract.
const TIDE_DAYS_FIELD: &str = "/// How many days ahead, 1 to 7.\n    pub days: u32,";

/// The user's abilities with these summaries and, when given, the extra field.
fn abilities(tides: &str, berths: &str, tide_extra_field: &str) -> String {
    ABILITIES
        .replace("SUMMARY_OF_TIDES", tides)
        .replace("SUMMARY_OF_BERTHS", berths)
        .replace("TIDE_EXTRA_FIELD", tide_extra_field)
}

/// The user's program: opens the prebuilt index, then asks `find_tools` for each
/// request on the command line and prints the names it injected, one per line. A
/// missing, stale or corrupt index ends it with the error's code and exit status 2.
const PROGRAM: &str = r#"use std::process::ExitCode;
use std::sync::Arc;

use chalie_core::dispatch::Policy;
use chalie_core::{Channel, Dispatcher, ToolCall, Turn};
use chalie_index::{Discovery, MiniLm, default_index_dir};

chalie_core::link_abilities!(my_tools);

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("a parent");
    let registry = chalie_core::registry().expect("unique ability names");
    let embedder = match MiniLm::load(&MiniLm::default_dir(root)) {
        Ok(embedder) => Arc::new(embedder),
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(3);
        }
    };
    let discovery = Discovery::open_linked(&default_index_dir(root), embedder, registry);
    if let Some(error) = discovery.error() {
        eprintln!("{}: {error}", error.code());
        return ExitCode::from(2);
    }
    let dispatcher = Dispatcher::builder(registry.clone())
        .policy(Policy::new())
        .extension(discovery)
        .build();
    let turn = Turn::builder(Channel::Chat).build();
    let requests: Vec<String> = std::env::args().skip(1).collect();
    let call = ToolCall::new("find_tools", serde_json::json!({ "query": requests }));
    let done = dispatcher.dispatch(&turn, call).await;
    let Some(body) = done.envelope.lines().nth(1) else {
        eprintln!("{}", done.envelope);
        return ExitCode::FAILURE;
    };
    let body: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    for hit in body["injected"].as_array().into_iter().flatten() {
        println!("{}", hit["name"].as_str().unwrap_or_default());
    }
    ExitCode::SUCCESS
}
"#;

/// The README block after `### Your own crate's index`: the whole of the user's xtask.
fn readme_xtask() -> String {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let section = readme
        .split_once("### Your own crate's index")
        .expect("README has a `### Your own crate's index` section")
        .1;
    let block = section
        .split_once("```rust")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("the section opens with a rust block")
        .0;
    assert!(
        block.contains("link_abilities!(my_tools)"),
        "the README's xtask links the crate this test generates, `my_tools`:\n{block}"
    );
    block.to_owned()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("chalie-index sits in the workspace")
        .to_owned()
}

/// This workspace's `[profile.*]` tables: the user is told to copy them (the encoder is
/// slow unoptimised), and equal profiles let the generated build reuse our artifacts.
fn profiles(manifest: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            inside = line.starts_with("[profile.");
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("create folder");
    std::fs::write(path, text).expect("write file");
}

fn generate(root: &Path) {
    let ours = workspace_root();
    let manifest = std::fs::read_to_string(ours.join("Cargo.toml")).expect("Cargo.toml");
    let core = ours.join("chalie-core");
    let index = ours.join("chalie-index");
    write(
        &root.join("Cargo.toml"),
        &format!(
            "[workspace]\nmembers = [\"my_tools\", \"xtask\"]\nresolver = \"3\"\n\n\
             [workspace.dependencies]\n\
             chalie-core = {{ path = {core:?} }}\n\
             chalie-index = {{ path = {index:?} }}\n\n{}",
            profiles(&manifest)
        ),
    );
    // Our lock pins every version the two crates need, so the offline build resolves.
    std::fs::copy(ours.join("Cargo.lock"), root.join("Cargo.lock")).expect("copy Cargo.lock");
    write(
        &root.join(".cargo/config.toml"),
        "[alias]\nxtask = \"run --quiet --package xtask --\"\n",
    );
    write(
        &root.join("my_tools/Cargo.toml"),
        "[package]\nname = \"my_tools\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\nchalie-core.workspace = true\nchalie-index.workspace = true\n\
         serde_json = \"1\"\ntokio = { version = \"1\", features = [\"macros\", \"rt\"] }\n",
    );
    write(
        &root.join("my_tools/src/lib.rs"),
        &abilities(TIDES_SUMMARY, BERTHS_SUMMARY, ""),
    );
    // The namespace `cargo xtask manifest` publishes the capabilities in.
    write(&root.join("chalie.toml"), "namespace = \"my-tools\"\n");
    write(&root.join("my_tools/src/main.rs"), PROGRAM);
    write(
        &root.join("xtask/Cargo.toml"),
        "[package]\nname = \"xtask\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dependencies]\nchalie-core.workspace = true\nchalie-index.workspace = true\n\
         my_tools = { path = \"../my_tools\" }\n",
    );
    write(&root.join("xtask/src/main.rs"), &readme_xtask());
    // `cargo xtask fetch-model` downloads the model; this workspace has it already.
    let models = root.join(".chalie/models");
    std::fs::create_dir_all(&models).expect("create model folder");
    let model = chalie_index::MiniLm::default_dir(&ours);
    let link = models.join(model.file_name().expect("a model folder name"));
    std::os::unix::fs::symlink(&model, link).expect("link the model");
}

/// The build directory of this test binary (`target/`, or `CARGO_BUILD_BUILD_DIR`):
/// the executable is `<build dir>/<profile>/deps/<name>`.
fn build_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    exe.ancestors()
        .nth(3)
        .expect("the test runs from <build dir>/<profile>/deps")
        .to_owned()
}

fn cargo(root: &Path, args: &[&str]) -> Output {
    let build_dir = build_dir();
    Command::new(env!("CARGO"))
        .args(args)
        .current_dir(root)
        .env("CARGO_BUILD_BUILD_DIR", &build_dir)
        .env("CARGO_TARGET_DIR", build_dir.join("user-crate-test"))
        .env("CARGO_NET_OFFLINE", "true")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("run cargo")
}

fn text(output: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn succeeds(root: &Path, args: &[&str]) -> String {
    let output = cargo(root, args);
    assert!(
        output.status.success(),
        "cargo {args:?} failed:\n{}",
        text(&output)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

const FIND: [&str; 5] = ["run", "--quiet", "--package", "my_tools", "--"];

fn find(root: &Path, requests: &[&str]) -> Output {
    let args: Vec<&str> = FIND.iter().chain(requests).copied().collect();
    cargo(root, &args)
}

#[test]
fn a_users_crate_is_indexed_checked_and_found_by_its_own_xtask() {
    let folder = tempfile::tempdir().expect("tempdir");
    let root = folder.path();
    generate(root);

    succeeds(root, &["xtask", "index"]);
    succeeds(root, &["xtask", "index", "--check"]);

    let requests = [
        "when does the water rise at the port",
        "somewhere to tie up my boat",
    ];
    let output = find(root, &requests);
    assert!(output.status.success(), "{}", text(&output));
    let found = String::from_utf8_lossy(&output.stdout);
    let found: Vec<&str> = found.lines().collect();
    assert!(found.contains(&"tide_times"), "{found:?}");
    assert!(found.contains(&"harbour_berths"), "{found:?}");

    // One ability changes: the check and the program refuse the old index by name.
    let lib = root.join("my_tools/src/lib.rs");
    write(&lib, &abilities(TIDES_SUMMARY_EDITED, BERTHS_SUMMARY, ""));
    let check = cargo(root, &["xtask", "index", "--check"]);
    assert!(
        !check.status.success(),
        "a stale index passed the check:\n{}",
        text(&check)
    );
    assert!(text(&check).contains("index-stale"), "{}", text(&check));
    let stale = find(root, &requests);
    assert_eq!(stale.status.code(), Some(2), "{}", text(&stale));
    assert!(text(&stale).contains("index-stale"), "{}", text(&stale));

    succeeds(root, &["xtask", "index"]);
    succeeds(root, &["xtask", "index", "--check"]);
    let output = find(root, &["tide table for next week"]);
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("tide_times"),
        "{}",
        text(&output)
    );

    contract_checks(root);
}

/// The contract checks through the same few-line xtask: the lock, a breaking change
/// without its bump, and the description lint.
fn contract_checks(root: &Path) {
    let lock = root.join("contracts.lock.json");
    let missing = cargo(root, &["xtask", "manifest", "--check"]);
    assert!(!missing.status.success(), "{}", text(&missing));
    assert!(
        text(&missing).contains("contracts.lock.json is missing"),
        "{}",
        text(&missing)
    );
    let wrote = succeeds(root, &["xtask", "manifest", "--update"]);
    assert!(wrote.contains("deployment 1.0.0"), "{wrote}");
    let locked = std::fs::read_to_string(&lock).expect("the lock is written");
    assert!(locked.contains("\"my-tools.tide-times\""), "{locked}");
    succeeds(root, &["xtask", "manifest", "--check"]);
    succeeds(root, &["xtask", "lint"]);

    // A new required parameter, version left at 1.0.0; a summary that says nothing.
    write(
        &root.join("my_tools/src/lib.rs"),
        &abilities(TIDES_SUMMARY_EDITED, BERTHS_SUMMARY_BAD, TIDE_DAYS_FIELD),
    );
    let check = cargo(root, &["xtask", "manifest", "--check"]);
    assert!(
        !check.status.success(),
        "a breaking change without its bump passed:\n{}",
        text(&check)
    );
    for expected in [
        "`my-tools.tide-times` changed its schema and needs a major version bump",
        "set `version = \"2.0.0\"`",
        "input field `days`: new required field",
    ] {
        assert!(
            text(&check).contains(expected),
            "{expected}:\n{}",
            text(&check)
        );
    }
    let update = cargo(root, &["xtask", "manifest", "--update"]);
    assert!(!update.status.success(), "{}", text(&update));
    assert_eq!(
        std::fs::read_to_string(&lock).expect("the lock"),
        locked,
        "a refused update left the lock as it was"
    );
    let lint = cargo(root, &["xtask", "lint"]);
    assert!(
        !lint.status.success(),
        "a bad summary passed:\n{}",
        text(&lint)
    );
    assert!(
        text(&lint).contains("summary-too-short: `harbour_berths`"),
        "{}",
        text(&lint)
    );
}
