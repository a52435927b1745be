//! The example assistant's demo: `cargo xtask demo` (which fetches the
//! embedding model first) or `cargo run -p assistant`.
//!
//! It builds the discovery index of the linked abilities and skill
//! playbooks into `.chalie/index/assistant` (reused while current), then
//! prints a scripted conversation through sessions, discovery, the
//! permission gate and the envelopes.

// The abilities live in the library target; name it so they are linked.
chalie_core::link_abilities!(assistant);

use std::path::PathBuf;

use assistant::demo::{DemoPaths, prepare, run};

/// The workspace root: two folders above this crate.
fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .map_or_else(|| manifest.clone(), PathBuf::from)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::process::ExitCode {
    let root = workspace_root();
    let model_dir = chalie_index::MiniLm::default_dir(&root);
    let index_dir = chalie_index::default_index_dir(&root).join("assistant");
    let paths = DemoPaths {
        model_dir: &model_dir,
        index_dir: &index_dir,
    };
    let outcome = match prepare(&paths) {
        Ok(host) => run(&host).await,
        Err(error) => Err(error),
    };
    match outcome {
        Ok(transcript) => {
            print!("{transcript}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
