//! The real all-MiniLM-L6-v2 model, from the folder `cargo xtask fetch-model` fills.

use std::path::PathBuf;
use std::sync::Arc;

use chalie_index::{Embedder, FindOptions, Index, MiniLm};

use crate::support::{entries, local};

pub(crate) fn model() -> MiniLm {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::var_os("CHALIE_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| MiniLm::default_dir(&root));
    MiniLm::load(&dir).expect("model files; run `cargo xtask fetch-model` first")
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn paraphrases_are_closer_than_unrelated_text() {
    let model = model();
    let vectors = model
        .embed_batch(&[
            "how is the weather in Paris",
            "what's the forecast for Paris today",
            "compile a Rust crate",
        ])
        .expect("embed");
    assert_eq!(vectors[0].len(), 384);
    let norm = cosine(&vectors[0], &vectors[0]);
    assert!((norm - 1.0).abs() < 1e-4);
    assert!(cosine(&vectors[0], &vectors[1]) > cosine(&vectors[0], &vectors[2]) + 0.3);
}

#[test]
fn weather_question_finds_weather() {
    let embedder: Arc<dyn Embedder> = Arc::new(model());
    let catalog = vec![
        local("weather", "Current weather and forecast for a city"),
        local("send_email", "Send an email to a recipient"),
        local("calculator", "Evaluate an arithmetic expression"),
        local("translate", "Translate text between languages"),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    Index::build(&catalog, embedder.as_ref(), dir.path(), &mut |_| {}).expect("build");
    let index = Index::open(dir.path(), embedder).expect("open");
    let outcome = index
        .find(
            &entries(&["is there a way to check the weather in another city"]),
            &FindOptions::default(),
        )
        .expect("find");
    assert!(
        outcome.injected.iter().any(|hit| hit.name == "weather"),
        "{outcome:?}"
    );
}

#[test]
fn only_the_confident_match_is_activated_and_the_rest_are_named() {
    let embedder: Arc<dyn Embedder> = Arc::new(model());
    let catalog = vec![
        local("weather", "Current weather and forecast for a city"),
        local("send_email", "Send an email to a recipient"),
        local("calculator", "Evaluate an arithmetic expression"),
        local("translate", "Translate text between languages"),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    Index::build(&catalog, embedder.as_ref(), dir.path(), &mut |_| {}).expect("build");
    let index = Index::open(dir.path(), embedder).expect("open");
    let outcome = index
        .find(
            &entries(&["is there a way to check the weather in another city"]),
            &FindOptions::default(),
        )
        .expect("find");
    let activated: Vec<&str> = outcome.injected.iter().map(|h| h.name.as_str()).collect();
    let suggested: Vec<&str> = outcome.suggested.iter().map(|h| h.name.as_str()).collect();
    // The whole ranking is shown (one neighbour passed), but only the weather tool is
    // activated; an email tool is only named.
    assert_eq!(activated, ["weather"], "{outcome:?}");
    assert!(suggested.contains(&"send_email"), "{outcome:?}");
    assert!(!suggested.contains(&"weather"), "{outcome:?}");
    // Asking for a suggested tool by its exact name activates it.
    let asked = index
        .find(&entries(&["send_email"]), &FindOptions::default())
        .expect("find");
    assert_eq!(asked.injected.len(), 1);
    assert_eq!(asked.injected[0].name, "send_email");
    assert!(asked.suggested.is_empty());
}
