//! Checksums, staleness and the manifest round trip.

use chalie_index::{Index, Manifest};

use crate::support::{build, catalog, embedder, local};

#[test]
fn manifest_round_trips() {
    let dir = tempfile::tempdir().expect("tempdir");
    let index = build(dir.path(), &catalog());
    let read = Manifest::read(dir.path()).expect("manifest");
    assert_eq!(&read, index.manifest());
    assert_eq!(read.descriptor_count, 5);
    assert_eq!(
        read.descriptors_fingerprint,
        chalie_index::fingerprint(&catalog())
    );
    assert!(read.files.contains_key("prose.usearch"));
    assert!(read.files.contains_key("descriptors.json"));
    assert!(read.files.keys().any(|k| k.starts_with("names/")));
    // Both checksum lists cover the same files.
    assert!(read.fast_files.keys().eq(read.files.keys()));
}

#[test]
fn a_manifest_whose_checksum_lists_disagree_is_corrupt() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &catalog());
    let path = dir.path().join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    manifest["fast_files"]
        .as_object_mut()
        .expect("fast_files")
        .remove("descriptors.json");
    // Reseal it, as a careless tool rewriting the manifest would, so only the lists differ.
    manifest["self_sha256"] = "".into();
    let mut unsealed: Manifest = serde_json::from_value(manifest).expect("manifest");
    let text = serde_json::to_string(&unsealed).expect("serialise");
    unsealed.self_sha256 = sha256(text.as_bytes());
    std::fs::write(&path, serde_json::to_vec_pretty(&unsealed).expect("json")).expect("write");
    let error = Index::open(dir.path(), embedder()).expect_err("lists differ");
    assert_eq!(error.code(), "index-corrupt", "{error}");
    assert!(error.to_string().contains("checksum lists"), "{error}");
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn flipping_a_byte_in_any_artifact_is_corrupt() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &catalog());
    let manifest = Manifest::read(dir.path()).expect("manifest");
    let mut files: Vec<String> = manifest.files.keys().cloned().collect();
    files.push("manifest.json".into());
    for file in files {
        let path = dir.path().join(&file);
        let original = std::fs::read(&path).expect("read");
        let mut damaged = original.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 0x20;
        std::fs::write(&path, &damaged).expect("write");
        let error = Index::open(dir.path(), embedder()).expect_err(&file);
        assert_eq!(error.code(), "index-corrupt", "{file}: {error}");
        // The offline check (sha256 as well) sees it too.
        let error = Index::check(dir.path(), &catalog(), embedder().as_ref()).expect_err(&file);
        assert_eq!(error.code(), "index-corrupt", "{file}: {error}");
        std::fs::write(&path, &original).expect("restore");
    }
    Index::open(dir.path(), embedder()).expect("restored index opens");
}

#[test]
fn changed_descriptors_are_stale() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &catalog());
    let mut changed = catalog();
    changed.push(local("translate", "Translate text between languages"));
    let error = Index::check(dir.path(), &changed, embedder().as_ref()).expect_err("stale");
    assert_eq!(error.code(), "index-stale");
    assert!(error.to_string().contains("cargo xtask index"));
    let error = Index::open_checked(dir.path(), embedder(), &changed).expect_err("stale");
    assert_eq!(error.code(), "index-stale");
    Index::check(dir.path(), &catalog(), embedder().as_ref()).expect("fresh");
}

#[test]
fn another_embedder_is_stale_and_missing_index_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    build(dir.path(), &catalog());
    let other = std::sync::Arc::new(chalie_index::HashingEmbedder::new(64));
    assert_eq!(
        Index::open(dir.path(), other).expect_err("stale").code(),
        "index-stale"
    );
    let empty = tempfile::tempdir().expect("tempdir");
    assert_eq!(
        Index::open(empty.path(), embedder())
            .expect_err("missing")
            .code(),
        "index-missing"
    );
}

#[test]
fn invalid_names_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = vec![local("files.read", "Read files")];
    let error =
        Index::build(&bad, embedder().as_ref(), dir.path(), &mut |_| {}).expect_err("invalid");
    assert_eq!(error.code(), "invalid-descriptor");
}
