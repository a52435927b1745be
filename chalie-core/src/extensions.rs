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
use std::sync::Arc;

use crate::ToolResult;

/// A map from a type to one shared value of that type.
#[derive(Clone, Default)]
pub struct Extensions {
    values: HashMap<TypeId, Entry>,
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
