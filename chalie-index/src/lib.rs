//! Discovery for chalie: find the abilities and skills that fit a request, from an index
//! built offline.
//!
//! ```no_run
//! use std::path::Path;
//! use std::sync::Arc;
//!
//! use chalie_index::{Descriptor, FindOptions, Index, MiniLm, Source};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let embedder = Arc::new(MiniLm::load(Path::new(".chalie/models/all-MiniLM-L6-v2"))?);
//! let weather = Descriptor {
//!     name: "weather".into(),
//!     summary: "Current weather and forecast for a city.".into(),
//!     examples: vec!["will it rain in Lyon tomorrow".into()],
//!     source: Source::Local,
//!     discoverable: true,
//!     ..Descriptor::default()
//! };
//! Index::build(&[weather], embedder.as_ref(), Path::new("target/index"), &mut |_| {})?;
//!
//! let index = Index::open(Path::new("target/index"), embedder)?;
//! let outcome = index.find(&["is it sunny in Oslo".into()], &FindOptions::default())?;
//! assert_eq!(outcome.injected[0].name, "weather");
//! # Ok(())
//! # }
//! ```
//!
//! # Giving `find_tools` and `find_skills` to a dispatcher
//!
//! Both are `#[ability]` functions of this crate, linked into every program that uses it
//! (internal, `effect = read`, not discoverable themselves). They read the index from the
//! host as a [`Discovery`] extension; without one they answer `not-configured`.
//!
//! ```no_run
//! use std::path::Path;
//! use std::sync::Arc;
//!
//! use chalie_core::Dispatcher;
//! use chalie_index::{Discovery, MiniLm, default_index_dir};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let root = Path::new(".");
//! let embedder = Arc::new(MiniLm::load(&MiniLm::default_dir(root))?);
//! let registry = chalie_core::registry()?;
//! // Built by `cargo xtask index`; also `index-stale` if the linked abilities changed since.
//! let discovery = Discovery::open_linked(&default_index_dir(root), embedder, registry);
//! if let Some(error) = discovery.error() {
//!     // The calls still answer, with this error's code and a hint for the model.
//!     eprintln!("discovery unavailable: {error}");
//! }
//! let dispatcher = Dispatcher::builder(registry.clone()).extension(discovery).build();
//! # let _ = dispatcher;
//! # Ok(())
//! # }
//! ```
//!
//! `find_tools` activates what it injects on the turn (`Turn::activated_tools`) and returns
//! `{"injected":[{"name","summary"}],"not_found":[…]}` (plus `ambiguous` with the qualified
//! names to ask for), with the counts in the envelope header. A session's turn offers what
//! was activated in its next request (`TurnBuilder::offers_activated_tools`), so the model
//! reads the full definitions there (a linked ability's or an external tool's) and `summary`
//! is the summary's first sentence; on any other turn (a call on its own, the MCP proxy)
//! each entry carries the whole summary and `parameters`, the JSON Schema a client needs to
//! call the tool. [`Discovery::with_profile`] limits local abilities to a profile's
//! toolsets and external tools to its servers and names; [`Discovery::with_skill_rules`] adds
//! the host's personalisation rules to the playbooks `find_skills` returns.
//!
//! Each query entry goes down a cascade and stops at the first rung that finds anything:
//!
//! 1. **Exact name**, after normalisation (`Web-Search` → `web_search`). A bare name that two
//!    sources own is refused as ambiguous, never guessed.
//! 2. **Name keyword**: trigram search over names (tantivy), kept only when every word of the
//!    entry lines up with a segment of the name ([`segment_gate`]).
//! 3. **Vector**: nearest summaries and examples (usearch, cosine), kept by a rule on their
//!    distances ([`DEFAULT_KEEP`], [`KeepRule`]).
//!
//! # Features
//!
//! `engine` (default) is the index itself: tantivy, usearch, the MiniLM encoder and the
//! `xtask` entry. Without it the crate holds only what a contract check reads (the
//! `find_tools` and `find_skills` abilities, descriptors, catalogs, the [`Embedder`]
//! trait), so a tool that lints or locks the linked abilities builds in seconds; the two
//! abilities then answer `not-configured`. `mcp` adds [`servers`]: connecting the MCP servers
//! `chalie.toml` configures, so `cargo xtask index` indexes their tools and a program checks
//! its index against them.
//!
//! A manifest beside the artifacts records their sha256, the descriptors' fingerprint and
//! the embedder's identity; [`Index::open`] verifies all of it, so a damaged index fails
//! with `index-corrupt` and an outdated one with `index-stale`, never with "nothing found".

mod abilities;
#[cfg(feature = "engine")]
mod build;
#[cfg(feature = "engine")]
mod cache;
pub mod catalog;
mod descriptor;
#[cfg(feature = "engine")]
mod discovery;
mod embed;
mod error;
#[cfg(feature = "engine")]
mod find;
#[cfg(feature = "engine")]
mod index;
#[cfg(feature = "engine")]
mod keep;
#[cfg(feature = "engine")]
mod keyword;
mod linked;
#[cfg(feature = "engine")]
mod manifest;
#[cfg(feature = "engine")]
mod playground;
#[cfg(feature = "engine")]
mod rebuild;
#[cfg(feature = "mcp")]
pub mod servers;
#[cfg(feature = "engine")]
mod vector;
#[cfg(feature = "engine")]
pub mod xtask;

pub use abilities::{FindParams, MAX_ENTRY_CHARS, MAX_QUERY_ENTRIES, find_skills, find_tools};
#[cfg(feature = "engine")]
pub use build::{BuildProgress, BuildReport, BuildStage, GraphBuild};
#[cfg(feature = "engine")]
pub use cache::{CACHE_FORMAT_VERSION, EmbeddingCache, default_cache_dir};
pub use descriptor::{
    Descriptor, MAX_NAME_LEN, Source, fingerprint, local_fingerprint, normalise_name,
};
#[cfg(feature = "engine")]
pub use discovery::{Discovery, SkillRules};
#[cfg(feature = "openai")]
pub use embed::{DEFAULT_BATCH_SIZE, OpenAiEmbedder, OpenAiEmbedderBuilder};
pub use embed::{Embedder, HashingEmbedder};
#[cfg(feature = "engine")]
pub use embed::{EncoderWork, MINILM_DIR_NAME, MINILM_FILES, MiniLm};
pub use error::{EmbedError, EndpointFailure, IndexError};
#[cfg(feature = "engine")]
pub use find::{
    Ambiguity, CENTROID_WEIGHT, DEFAULT_ACTIVATION, DEFAULT_KEEP, FindOptions, FindOutcome, Hit,
    POOL_TEMPERATURE, Rung, SUMMARY_ONLY_CREDIT, Scope,
};
#[cfg(feature = "engine")]
pub use index::{Index, default_index_dir};
#[cfg(feature = "engine")]
pub use keep::{Activation, Ceiling, KeepRule};
#[cfg(feature = "engine")]
pub use keyword::segment_gate;
#[cfg(feature = "engine")]
pub use manifest::{EmbedderInfo, MANIFEST_FILE, Manifest};
