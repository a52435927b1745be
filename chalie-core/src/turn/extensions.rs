//! `Extensions`: the host application's state, handed to abilities.
//!
//! An ability takes only its parameters and the `&Turn`, so anything it
//! needs from the host — a database pool, an index, a data folder — is put
//! into the dispatcher (or one turn) as an extension and read back by type
//! with [`Turn::extension`](crate::Turn::extension). One value per type, as
//! in `http::Extensions` and axum's state: wrap two values of the same type
//! in newtypes.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use crate::ToolResult;

/// A map from a type to one shared value of that type.
#[derive(Clone, Default)]
pub struct Extensions {
    values: HashMap<TypeId, Entry, BuildHasherDefault<TypeIdHasher>>,
}

/// Hashes a [`TypeId`] by passing its bits through: a `TypeId` is already
/// a hash of the type, so hashing it again (std's SipHash) only costs
/// time on every lookup, and a turn's extensions are read on every call.
#[derive(Default)]
struct TypeIdHasher(u64);

impl Hasher for TypeIdHasher {
    fn write_u64(&mut self, bits: u64) {
        self.0 = bits;
    }

    /// `TypeId` writes one `u64` today; should it write otherwise, the
    /// bytes are folded in so lookups stay correct, only slower.
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[derive(Clone)]
struct Entry {
    value: Arc<dyn Any + Send + Sync>,
    type_name: &'static str,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<_> = self.values.values().map(|e| e.type_name).collect();
        names.sort_unstable();
        f.debug_set().entries(names).finish()
    }
}

impl Extensions {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `value`, replacing (and returning) an earlier value of its type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<Arc<T>> {
        self.insert_shared(Arc::new(value))
    }

    /// Stores an already shared `value`, replacing an earlier one of its type.
    pub fn insert_shared<T: Send + Sync + 'static>(&mut self, value: Arc<T>) -> Option<Arc<T>> {
        let entry = Entry {
            value,
            type_name: type_name::<T>(),
        };
        self.values
            .insert(TypeId::of::<T>(), entry)
            .and_then(|old| old.value.downcast::<T>().ok())
    }

    /// The value of type `T`, if one was stored.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|entry| entry.value.downcast_ref::<T>())
    }

    /// The value of type `T` as a shared handle, e.g. to move into a task.
    pub fn get_shared<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|entry| Arc::clone(&entry.value).downcast::<T>().ok())
    }

    /// How many values are stored.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// The error result an ability returns when the host did not provide an
/// extension it needs. The model cannot fix this, so it is told not to
/// retry; the type name in the message tells the developer what is missing.
pub(crate) fn missing_extension<T: 'static>() -> ToolResult {
    ToolResult::error(
        "not-configured",
        format!(
            "this tool is not set up on this host (it needs `{}`)",
            type_name::<T>()
        ),
        "do not retry; tell the user this tool is unavailable here",
    )
}

#[cfg(test)]
mod tests {
    use super::Extensions;

    #[test]
    fn each_type_reads_back_its_own_value() {
        struct Pool(u8);
        struct Folder(&'static str);
        let mut extensions = Extensions::new();
        extensions.insert(Pool(7));
        extensions.insert(Folder("data"));
        extensions.insert(3_u32);
        assert_eq!(extensions.get::<Pool>().map(|pool| pool.0), Some(7));
        assert_eq!(
            extensions.get::<Folder>().map(|folder| folder.0),
            Some("data")
        );
        assert_eq!(extensions.get::<u32>(), Some(&3));
        assert!(extensions.get::<u64>().is_none());
        assert_eq!(extensions.insert(4_u32).as_deref(), Some(&3));
        assert_eq!(extensions.len(), 3);
    }
}
