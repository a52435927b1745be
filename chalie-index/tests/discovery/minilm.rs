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
