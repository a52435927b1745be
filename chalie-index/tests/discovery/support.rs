//! Small catalogs and helpers shared by the test modules.

use std::path::Path;
use std::sync::Arc;

use chalie_index::{Descriptor, Embedder, HashingEmbedder, Index, Source};

pub fn local(name: &str, summary: &str) -> Descriptor {
    Descriptor {
        name: name.into(),
        summary: summary.into(),
        examples: Vec::new(),
        tooltip: String::new(),
        source: Source::Local,
        toolset: "test".into(),
        discoverable: true,
        ..Descriptor::default()
    }
}

pub fn external(server: &str, name: &str, summary: &str) -> Descriptor {
    Descriptor {
        source: Source::External {
            server: server.into(),
        },
        ..local(name, summary)
    }
}

pub fn catalog() -> Vec<Descriptor> {
    let mut hidden = local("secret_admin", "Deletes every user account");
    hidden.discoverable = false;
    vec![
        local("web_search", "Search the web for pages about a topic"),
        local("review_tool_calls", "Review the tool calls an agent made"),
        local("weather", "Current weather and forecast for a city"),
        local("read_file", "Read a file from disk"),
        external("github", "read_file", "Read a file from a repository"),
        hidden,
    ]
}

pub fn embedder() -> Arc<dyn Embedder> {
    Arc::new(HashingEmbedder::default())
}

pub fn build(dir: &Path, descriptors: &[Descriptor]) -> Index {
    let embedder = embedder();
    Index::build(descriptors, embedder.as_ref(), dir, &mut |_| {}).expect("build");
    Index::open(dir, embedder).expect("open")
}

pub fn entries(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}
