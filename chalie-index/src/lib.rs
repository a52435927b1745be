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
//!     tooltip: "Weather".into(),
//!     source: Source::Local,
//!     toolset: "travel".into(),
//!     discoverable: true,
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
//! Each query entry goes down a cascade and stops at the first rung that finds anything:
//!
//! 1. **Exact name**, after normalisation (`Web-Search` → `web_search`). A bare name that two
//!    sources own is refused as ambiguous, never guessed.
//! 2. **Name keyword**: trigram search over names (tantivy), kept only when every word of the
//!    entry lines up with a segment of the name ([`segment_gate`]).
//! 3. **Vector**: nearest summaries and examples (usearch, cosine), kept under a distance
//!    ceiling ([`DEFAULT_CEILING`]).
//!
//! A manifest beside the artifacts records their sha256, the descriptors' fingerprint and
//! the embedder's identity; [`Index::open`] verifies all of it, so a damaged index fails
//! with `index-corrupt` and an outdated one with `index-stale`, never with "nothing found".

mod abilities;
mod descriptor;
mod embed;
mod error;
mod find;
mod index;
mod keyword;
mod manifest;
mod vector;

pub use abilities::{find_skills, find_tools};
pub use descriptor::{Descriptor, MAX_NAME_LEN, Source, fingerprint, normalise_name};
pub use embed::{Embedder, HashingEmbedder, MiniLm};
pub use embed::{MINILM_DIR_NAME, MINILM_FILES};
pub use error::{EmbedError, IndexError};
pub use find::{Ambiguity, DEFAULT_CEILING, FindOptions, FindOutcome, Hit, Rung, Scope};
pub use index::{BuildProgress, BuildStage, Index, default_index_dir};
pub use keyword::segment_gate;
pub use manifest::{EmbedderInfo, MANIFEST_FILE, Manifest};
