//! The assistant binary opens the index `cargo xtask index` built and
//! refuses a missing, stale or corrupt one with chalie-index's error and the
//! command that fixes it; only `--rebuild-index` rebuilds, and a damaged
//! embedding cache stops that rebuild instead of being used.

use std::path::Path;
use std::process::{Command, Output};

use chalie_index::{Index, Manifest, MiniLm};

/// Runs the assistant binary with `args`.
fn assistant(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_assistant"))
        .args(args)
        .output()
        .expect("the assistant binary runs")
}

fn path(dir: &Path) -> &str {
    dir.to_str().expect("a UTF-8 temporary path")
}

/// Fails unless `output` is a refusal with `code` and the fix.
fn assert_refused(output: &Output, code: &str, what: &str) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{what}: the assistant ran");
    assert!(
        output.stdout.is_empty(),
        "{what}: the demo printed before refusing"
    );
    assert!(stderr.contains(&format!("({code})")), "{what}: {stderr}");
    assert!(stderr.contains("`cargo xtask index`"), "{what}: {stderr}");
    assert!(
        !stderr.contains("rebuilding"),
        "{what}: rebuilt without being asked: {stderr}"
    );
}

/// An index of the assistant's descriptors in a temporary folder, built by
/// the binary's own development opt-in, with its embedding cache.
fn built() -> (tempfile::TempDir, tempfile::TempDir) {
    let (index, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let output = assistant(&[
        "--index",
        path(index.path()),
        "--cache",
        path(cache.path()),
        "--rebuild-index",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the rebuild failed: {stderr}");
    assert!(
        stderr.contains("rebuilding the discovery index") && stderr.contains("(index-missing)"),
        "the rebuild says why: {stderr}"
    );
    (index, cache)
}

#[test]
fn a_missing_index_is_refused_and_only_the_opt_in_builds_it() {
    let empty = tempfile::tempdir().unwrap();
    assert_refused(
        &assistant(&["--index", path(empty.path())]),
        "index-missing",
        "no index",
    );
    let (index, _cache) = built();
    let output = assistant(&["--index", path(index.path())]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stderr.is_empty(), "nothing rebuilt the second time");
}

#[test]
fn every_corrupt_artifact_is_refused() {
    let (index, _cache) = built();
    let manifest = Manifest::read(index.path()).unwrap();
    let mut files: Vec<String> = manifest.files.keys().cloned().collect();
    files.push(chalie_index::MANIFEST_FILE.to_owned());
    for file in files {
        let target = index.path().join(&file);
        let original = std::fs::read(&target).unwrap();
        let mut damaged = original.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 0x20;
        std::fs::write(&target, &damaged).unwrap();
        let output = assistant(&["--index", path(index.path())]);
        assert_refused(&output, "index-corrupt", &file);
        std::fs::write(&target, &original).unwrap();
    }
    let output = assistant(&["--index", path(index.path())]);
    assert!(output.status.success(), "the restored index opens");
}

#[test]
fn an_index_of_other_descriptors_is_stale() {
    let index = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let embedder =
        MiniLm::load(&MiniLm::default_dir(&root)).expect("run `cargo xtask fetch-model`");
    // The linked abilities without the playbooks: what an xtask that forgot the skills
    // folder would build.
    let linked = chalie_index::Descriptor::from_registry(chalie_core::registry().unwrap());
    Index::build(&linked, &embedder, index.path(), &mut |_| {}).unwrap();
    assert_refused(
        &assistant(&["--index", path(index.path())]),
        "index-stale",
        "built without the skills",
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
    let mut bytes = std::fs::read(&cache_file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    std::fs::write(&cache_file, &bytes).unwrap();

    // The program never reads the cache to open a current index.
    let output = assistant(&["--index", path(index.path())]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // A rebuild needs it, and refuses it rather than use or silently drop it.
    std::fs::remove_file(index.path().join(chalie_index::MANIFEST_FILE)).unwrap();
    let output = assistant(&[
        "--index",
        path(index.path()),
        "--cache",
        path(cache.path()),
        "--rebuild-index",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the rebuild used a damaged cache");
    assert!(stderr.contains("(index-corrupt)"), "{stderr}");
    assert!(
        stderr.contains(path(&cache_file)),
        "names the cache: {stderr}"
    );
    assert!(stderr.contains("`cargo xtask index`"), "{stderr}");
}
