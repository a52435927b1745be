//! A newcomer's first crate: the README's `[dependencies]` lines and its
//! first example, as a new crate outside this workspace, built and run.
//!
//! The test writes a crate into a temporary folder whose `Cargo.toml` takes
//! the README's dependency block as it is, except for one rewrite: every
//! chalie dependency given as `git = "..."` gets `path = "<this checkout>/<crate>"`
//! instead, keeping its other keys. The test runs offline and must try this
//! commit, not whatever the repository's default branch holds; the git
//! form is the one place the two differ. Its `src/main.rs` is the README's
//! first `rust` block, whose asserts then run: `cargo run --offline` must
//! succeed.
//!
//! The generated crate shares this build's dependency artifacts (cargo's
//! build directory, and this workspace's `[profile.*]` tables, which change
//! no behaviour), so only chalie's own crates compile again.

// A failed unwrap is a failed test, which is what a test should do.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_owned()
}

/// The body of the first fenced block opening with `fence` (e.g. "```toml").
fn first_block<'a>(text: &'a str, fence: &str) -> &'a str {
    text.split_once(fence)
        .and_then(|(_, rest)| rest.split_once('\n'))
        .and_then(|(_, rest)| rest.split_once("```"))
        .unwrap_or_else(|| panic!("README.md has a {fence} block"))
        .0
}

/// The README's dependency lines with each chalie `git` source replaced by
/// the crate's folder in this checkout.
fn dependencies_on_this_checkout(block: &str, checkout: &Path) -> String {
    let table: toml::Table = toml::from_str(block).expect("the README's block is TOML");
    let mut table = table;
    let dependencies = table
        .get_mut("dependencies")
        .and_then(toml::Value::as_table_mut)
        .expect("the README's block is a [dependencies] table");
    assert!(
        dependencies.contains_key("chalie-core"),
        "the README's dependency lines name chalie-core:\n{block}"
    );
    for (name, source) in dependencies.iter_mut() {
        let Some(source) = source.as_table_mut() else {
            // A version requirement: a crate from crates.io, in the local cache.
            assert!(
                !name.starts_with("chalie"),
                "`{name} = {source}` is a registry version, but chalie is not published; \
                 give the git (or path) dependency"
            );
            continue;
        };
        if source.remove("git").is_some() {
            let folder = checkout.join(name);
            assert!(
                folder.join("Cargo.toml").is_file(),
                "`{name}` is not a crate of this checkout"
            );
            source.insert(
                "path".into(),
                toml::Value::String(folder.display().to_string()),
            );
        }
    }
    toml::to_string(&table).expect("TOML back")
}

/// This workspace's `[profile.*]` tables.
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

/// The build directory of this test binary: it runs from
/// `<build dir>/<profile>/deps/<name>`.
fn build_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    exe.ancestors()
        .nth(3)
        .expect("the test runs from <build dir>/<profile>/deps")
        .to_owned()
}

#[test]
fn the_readme_s_dependency_lines_and_first_example_build_and_run_as_a_new_crate() {
    let checkout = workspace_root();
    let readme = std::fs::read_to_string(checkout.join("README.md")).unwrap();
    let dependencies = dependencies_on_this_checkout(first_block(&readme, "```toml"), &checkout);
    let example = first_block(&readme, "```rust");
    assert!(
        example.contains("fn main()"),
        "the README's first example is a whole program:\n{example}"
    );

    let folder = tempfile::tempdir().unwrap();
    let root = folder.path();
    let workspace_manifest = std::fs::read_to_string(checkout.join("Cargo.toml")).unwrap();
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[package]\nname = \"first-abilities\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             {dependencies}\n{}",
            profiles(&workspace_manifest)
        ),
    )
    .unwrap();
    // Our lock pins every version chalie needs, so the offline build resolves.
    std::fs::copy(checkout.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), example).unwrap();

    let build_dir = build_dir();
    let output = Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--offline"])
        .current_dir(root)
        .env("CARGO_BUILD_BUILD_DIR", &build_dir)
        .env("CARGO_TARGET_DIR", build_dir.join("readme-crate-test"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the README's first example failed as a new crate ({})\n--- Cargo.toml\n{}\n--- stdout\n{}--- stderr\n{}",
        output.status,
        std::fs::read_to_string(root.join("Cargo.toml")).unwrap(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
