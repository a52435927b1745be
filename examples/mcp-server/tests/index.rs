//! The `mcp-server` program opens the index `cargo xtask index` built and
//! refuses a missing, stale or corrupt one before serving, with
//! chalie-index's error and the command that fixes it; only
//! `--rebuild-index` rebuilds, and a damaged embedding cache stops that
//! rebuild instead of being used.

// A failed unwrap is a failed test, with its line.
#![allow(clippy::unwrap_used)]

// The assistant's abilities, for the descriptors of the index built here.
chalie_core::link_abilities!(assistant);

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use assistant::IndexMode;
use assistant::demo::{DemoPaths, prepare};
use chalie_core::dispatch::ExternalTools;
use chalie_core::mcp::{McpSource, ServerSpec};

/// Runs the server with `args` and no client: what it prints when it
/// refuses to start (a server that starts fails too, its input closed
/// before a client said anything).
fn server(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-server"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the mcp-server binary runs")
}

/// Whether the server started on the index at `index` and lists its tools
/// to a client.
fn serves(index: &Path) -> bool {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let spec = ServerSpec::stdio(
            "demo",
            env!("CARGO_BIN_EXE_mcp-server"),
            ["--index", path(index)],
        )
        .with_timeout(Duration::from_secs(120));
        match McpSource::connect(spec).await {
            Ok(source) => {
                let listed = !source.tools().is_empty();
                source.disconnect().await;
                listed
            }
            Err(_) => false,
        }
    })
}

fn path(dir: &Path) -> &str {
    dir.to_str().expect("a UTF-8 temporary path")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Fails unless `output` is a refusal with `code` and the fix, before any
/// protocol traffic.
fn assert_refused(output: &Output, code: &str, what: &str) {
    let stderr = stderr(output);
    assert!(!output.status.success(), "{what}: the server started");
    assert!(output.stdout.is_empty(), "{what}: the server spoke first");
    assert!(stderr.contains(&format!("({code})")), "{what}: {stderr}");
    assert!(stderr.contains("`cargo xtask index`"), "{what}: {stderr}");
    assert!(!stderr.contains("rebuilding"), "{what}: {stderr}");
}

/// The index and cache folders, the index built by the assistant's
/// development opt-in.
fn built() -> (tempfile::TempDir, tempfile::TempDir) {
    let (index, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let model_dir = chalie_index::MiniLm::default_dir(&root);
    let profiles = assistant::Profiles::workspace(chalie_core::registry().unwrap()).unwrap();
    prepare(&DemoPaths {
        model_dir: &model_dir,
        index_dir: index.path(),
        mode: IndexMode::Rebuild {
            cache_dir: cache.path(),
        },
        external: &[],
        profile: &profiles.everyday,
    })
    .unwrap();
    (index, cache)
}

/// The files of the index: every artifact its manifest lists, and the manifest.
fn artifacts(index: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(index.join("manifest.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut files: Vec<String> = manifest["files"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    files.push("manifest.json".to_owned());
    files
}

fn flip_a_byte(file: &Path) -> Vec<u8> {
    let original = std::fs::read(file).unwrap();
    let mut damaged = original.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x20;
    std::fs::write(file, &damaged).unwrap();
    original
}

#[test]
fn a_missing_index_is_refused() {
    let empty = tempfile::tempdir().unwrap();
    assert_refused(
        &server(&["--index", path(empty.path())]),
        "index-missing",
        "no index",
    );
}

#[test]
fn every_corrupt_artifact_is_refused_and_the_restored_index_serves() {
    let (index, _cache) = built();
    let files = artifacts(index.path());
    assert!(files.len() > 3, "{files:?}");
    for file in files {
        let target = index.path().join(&file);
        let original = flip_a_byte(&target);
        assert_refused(
            &server(&["--index", path(index.path())]),
            "index-corrupt",
            &file,
        );
        std::fs::write(&target, original).unwrap();
    }
    assert!(serves(index.path()), "the restored index serves");
}

#[test]
fn an_index_built_for_other_tools_is_stale() {
    let (index, _cache) = built();
    // Tools of an external server the index was never built with.
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        config.path(),
        format!(
            "[servers.inner]\ncommand = \"{}\"\nargs = [\"--mode\", \"full\", \"--index\", \"{}\"]\n",
            env!("CARGO_BIN_EXE_mcp-server"),
            path(index.path())
        ),
    )
    .unwrap();
    assert_refused(
        &server(&[
            "--index",
            path(index.path()),
            "--external",
            path(config.path()),
        ]),
        "index-stale",
        "external tools not indexed",
    );
}

#[test]
fn an_index_without_the_servers_of_chalie_toml_is_stale() {
    let (index, _cache) = built();
    // The workspace's profiles, plus a server under `[[mcp.servers]]` whose
    // tools the index was never built with.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut text = std::fs::read_to_string(root.join("chalie.toml")).unwrap();
    text.push_str(&format!(
        "\n[[mcp.servers]]\nname = \"inner\"\ncommand = \"{}\"\nargs = [\"--mode\", \"full\", \"--index\", \"{}\"]\n",
        env!("CARGO_BIN_EXE_mcp-server"),
        path(index.path())
    ));
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(config.path(), text).unwrap();
    assert_refused(
        &server(&[
            "--index",
            path(index.path()),
            "--config",
            path(config.path()),
        ]),
        "index-stale",
        "chalie.toml's servers not indexed",
    );
}

#[test]
fn a_damaged_cache_stops_the_rebuild_and_never_the_prebuilt_index() {
    let (index, cache) = built();
    let cache_file = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|file| file.extension().is_some_and(|ext| ext == "bin"))
        .expect("the rebuild saved its embedding cache");
    flip_a_byte(&cache_file);
    // The server never reads the cache to open a current index.
    assert!(
        serves(index.path()),
        "a damaged cache stopped a current index"
    );

    std::fs::remove_file(index.path().join("manifest.json")).unwrap();
    let output = server(&[
        "--index",
        path(index.path()),
        "--cache",
        path(cache.path()),
        "--rebuild-index",
    ]);
    let text = stderr(&output);
    assert!(!output.status.success(), "the rebuild used a damaged cache");
    assert!(text.contains("(index-corrupt)"), "{text}");
    assert!(text.contains(path(&cache_file)), "names the cache: {text}");
    assert!(text.contains("`cargo xtask index`"), "{text}");
}

/// `--export-tools` writes a server's skills beside its tools, and an index
/// built on that export holds each as a `server__skill` playbook, the way
/// `cargo xtask index --external` reads it.
#[test]
fn the_export_carries_a_servers_skills_into_the_index() {
    use chalie_core::mcp::{Exposure, McpServer, ServedSkill};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let http = runtime.block_on(async {
        let registry = chalie_core::Registry::from_entries(Vec::new()).unwrap();
        let dispatcher = chalie_core::Dispatcher::builder(registry).build();
        McpServer::builder(std::sync::Arc::new(dispatcher))
            .exposure(Exposure::Full)
            .skills([ServedSkill::new(
                "pack_for_rain",
                "Packs a bag for a rainy trip: umbrella, boots and a coat.",
                "1. Check the forecast.\n2. Pack the umbrella first.\n",
            )])
            .build()
            .unwrap()
            .serve_http(([127, 0, 0, 1], 0).into())
            .await
            .unwrap()
    });
    let work = tempfile::tempdir().unwrap();
    let config = work.path().join("servers.toml");
    std::fs::write(
        &config,
        format!("[servers.packing]\nurl = {:?}\n", http.url()),
    )
    .unwrap();
    let export = work.path().join("tools.json");
    let output = server(&["--external", path(&config), "--export-tools", path(&export)]);
    assert!(output.status.success(), "{}", stderr(&output));
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(
        exported,
        serde_json::json!([{
            "server": "packing",
            "name": "packing__pack_for_rain",
            "description": "Packs a bag for a rainy trip: umbrella, boots and a coat.",
            "playbook": "1. Check the forecast.\n2. Pack the umbrella first.\n",
        }])
    );

    let external = chalie_index::catalog::read_external(&export).unwrap();
    let (index, cache) = (work.path().join("index"), work.path().join("cache"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let model_dir = chalie_index::MiniLm::default_dir(&root);
    let profiles = assistant::Profiles::workspace(chalie_core::registry().unwrap()).unwrap();
    prepare(&DemoPaths {
        model_dir: &model_dir,
        index_dir: &index,
        mode: IndexMode::Rebuild { cache_dir: &cache },
        external: &external,
        profile: &profiles.everyday,
    })
    .unwrap();
    let embedder = std::sync::Arc::new(chalie_index::MiniLm::load(&model_dir).unwrap());
    let opened = chalie_index::Index::open(&index, embedder).unwrap();
    let skill = opened
        .skills()
        .find(|(name, _, _)| *name == "packing__pack_for_rain")
        .unwrap_or_else(|| panic!("not indexed: {:?}", opened.skills().collect::<Vec<_>>()));
    assert_eq!(
        skill.2,
        "1. Check the forecast.\n2. Pack the umbrella first.\n"
    );
    runtime.block_on(http.shutdown()).unwrap();
}
