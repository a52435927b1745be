//! Discovery: the index over the linked abilities and the skill
//! playbooks, searched by chalie-index's `find_tools` and `find_skills`
//! abilities through the [`Discovery`](chalie_index::Discovery) extension.

use std::path::Path;

use chalie_core::Registry;
use chalie_index::Descriptor;
use chalie_index::catalog::{self, CatalogError};

#[cfg(feature = "discovery")]
pub use opening::{IndexMode, open};

/// The playbooks shipped in `skills/`, as `(file, text)`.
const SKILL_FILES: [(&str, &str); 3] = [
    ("plan_a_trip.md", include_str!("../skills/plan_a_trip.md")),
    (
        "research_a_topic.md",
        include_str!("../skills/research_a_topic.md"),
    ),
    (
        "weekly_review.md",
        include_str!("../skills/weekly_review.md"),
    ),
];

/// Every shipped playbook, in file name order, read by chalie-index's playbook rule: the
/// one `cargo xtask index` applies to the files of `skills/`, so the program and the build
/// see the same descriptors.
pub fn skills() -> Result<Vec<Descriptor>, CatalogError> {
    SKILL_FILES
        .iter()
        .map(|(file, text)| catalog::parse_skill(text, Path::new("skills").join(file)))
        .collect()
}

/// The descriptors the index is built from: every ability in `registry`
/// (the index leaves out the non-discoverable ones) and every playbook,
/// its steps kept for `find_skills` to return.
pub fn descriptors(registry: &Registry) -> Result<Vec<Descriptor>, CatalogError> {
    let mut all = Descriptor::from_registry(registry);
    all.extend(skills()?);
    Ok(all)
}

#[cfg(feature = "discovery")]
mod opening {
    use std::path::Path;
    use std::sync::Arc;

    use chalie_core::contracts::Profile;
    use chalie_index::{Descriptor, Discovery, Embedder, Index, IndexError};

    /// How a program gets its discovery index.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum IndexMode<'a> {
        /// Open the index `cargo xtask index` built, or stop with its error: missing, stale
        /// and corrupt indexes are refused, never rebuilt behind the user's back.
        Prebuilt,
        /// Development (`--rebuild-index`): rebuild the index in place when it is missing,
        /// stale or corrupt, saying why on stderr, with the embedding cache in `cache_dir`.
        Rebuild {
            /// The embedding cache's folder, shared with `cargo xtask index`.
            cache_dir: &'a Path,
        },
    }

    /// Opens the index in `dir`, checked against exactly `descriptors` and `embedder`
    /// (rebuilding it first only when `mode` says so), answering only with what `profile`
    /// exposes.
    pub fn open(
        descriptors: &[Descriptor],
        embedder: Arc<dyn Embedder>,
        dir: &Path,
        mode: IndexMode<'_>,
        profile: &Profile,
    ) -> Result<Discovery, IndexError> {
        let index = match mode {
            IndexMode::Prebuilt => Index::open_checked(dir, embedder, descriptors)?,
            IndexMode::Rebuild { cache_dir } => {
                Index::rebuild_if_needed(descriptors, embedder, dir, Some(cache_dir), &mut |why| {
                    eprintln!("rebuilding the discovery index at {}: {why}", dir.display())
                })?
            }
        };
        Ok(Discovery::new(Arc::new(index)).with_profile(profile))
    }
}
