//! The development opt-in of a program that serves an index: rebuild it in place when it is
//! missing, stale or corrupt, and say why. Without it a program opens the prebuilt index
//! with [`Index::open_checked`] and stops on the error, whose message names the fix.

use std::path::Path;
use std::sync::Arc;

use crate::cache::EmbeddingCache;
use crate::descriptor::Descriptor;
use crate::embed::Embedder;
use crate::error::IndexError;
use crate::index::Index;
use crate::manifest::corrupt;

impl Index {
    /// Opens the index at `dir` if it was built from exactly `descriptors` with `embedder`;
    /// otherwise tells `warn` why and rebuilds it there, as `cargo xtask index` would, with
    /// the embedding cache of `cache_dir` when one is given.
    ///
    /// For development only (a program's `--rebuild-index`): nothing rebuilds unless the
    /// program asked for it. A damaged cache is refused with `index-corrupt` rather than
    /// discarded here: `cargo xtask index` discards it loudly and rebuilds.
    ///
    /// ```no_run
    /// use std::path::Path;
    /// use std::sync::Arc;
    ///
    /// use chalie_index::{Descriptor, Index, MiniLm};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let embedder = Arc::new(MiniLm::load(&MiniLm::default_dir(Path::new(".")))?);
    /// let descriptors = Descriptor::from_registry(chalie_core::registry()?);
    /// let index = Index::rebuild_if_needed(
    ///     &descriptors,
    ///     embedder,
    ///     Path::new(".chalie/index"),
    ///     Some(Path::new(".chalie/cache")),
    ///     &mut |why| eprintln!("rebuilding the discovery index: {why}"),
    /// )?;
    /// # let _ = index;
    /// # Ok(())
    /// # }
    /// ```
    pub fn rebuild_if_needed(
        descriptors: &[Descriptor],
        embedder: Arc<dyn Embedder>,
        dir: &Path,
        cache_dir: Option<&Path>,
        warn: &mut dyn FnMut(&str),
    ) -> Result<Index, IndexError> {
        let error = match Index::open_checked(dir, Arc::clone(&embedder), descriptors) {
            Ok(index) => return Ok(index),
            Err(error) => error,
        };
        warn(&format!("{error} ({})", error.code()));
        match cache_dir {
            None => {
                Index::build(descriptors, embedder.as_ref(), dir, &mut |_| {})?;
            }
            Some(cache_dir) => {
                let path = EmbeddingCache::path_in(cache_dir, embedder.as_ref());
                let mut cache = EmbeddingCache::open(&path, embedder.as_ref());
                if let Some(reason) = cache.discarded() {
                    return Err(corrupt(&path, reason));
                }
                Index::build_cached(descriptors, embedder.as_ref(), dir, &mut cache, &mut |_| {})?;
                cache.save()?;
            }
        }
        Index::open_checked(dir, embedder, descriptors)
    }
}
