//! Each principal's own records: the data an application keeps for a user
//! (memories, tasks, calendar events…) in the database its sessions live
//! in, so a user's data and their sessions are backed up, shared by
//! replicas and restored together.
//!
//! A record is a JSON value in a named collection, owned by one principal.
//! Every read and write names the owner: a record another principal owns
//! answers exactly as a missing one does (`None`, `false`), so a caller
//! cannot even learn that it exists, and nothing of it changes. Deleting is
//! soft: the record is kept, hidden from reads, and listed only with
//! [`Listing::WithDeleted`].

mod memory;
#[cfg(feature = "sqlite")]
mod sqlite;

pub(crate) use memory::RecordTable;
#[cfg(feature = "sqlite")]
pub(crate) use sqlite::SCHEMA as SQLITE_SCHEMA;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::store::StoreError;
use crate::turn::Principal;

/// One record as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Its id: unique among its owner's records in its collection,
    /// numbered for that owner alone (another owner's records never show
    /// in it), never reused (a deleted record keeps its id).
    pub id: u64,
    /// What the application stored.
    pub data: Value,
    /// Whether it was deleted (soft: kept, hidden from reads).
    pub deleted: bool,
}

/// Which of an owner's records [`RecordStore::records`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Only those not deleted: what the user sees.
    Live,
    /// Deleted ones too, e.g. to audit or restore.
    WithDeleted,
}

/// The longest collection name, in bytes.
pub const MAX_COLLECTION_LEN: usize = 64;

/// Where each principal's records live. Implemented by
/// [`MemoryStore`](crate::session::MemoryStore) and, with their features,
/// `SqliteStore` (a table in the same file as the sessions) and `PgStore`
/// (migration 5), so a host hands the one store it opened to its sessions
/// and to its abilities.
///
/// ```
/// use chalie_core::session::{Listing, MemoryStore, RecordStore};
/// use chalie_core::turn::Principal;
/// use serde_json::json;
///
/// let store = MemoryStore::new();
/// let (alice, bob) = (Principal::new("alice"), Principal::new("bob"));
/// let task = store.insert_record(&alice, "tasks", &json!({ "title": "Buy milk" })).unwrap();
/// // Bob cannot read, change or delete Alice's task: it reads as missing.
/// assert_eq!(store.record(&bob, "tasks", task.id).unwrap(), None);
/// assert_eq!(store.update_record(&bob, "tasks", task.id, &json!({})).unwrap(), None);
/// assert!(!store.delete_record(&bob, "tasks", task.id).unwrap());
/// // Alice's delete is soft.
/// assert!(store.delete_record(&alice, "tasks", task.id).unwrap());
/// assert!(store.records(&alice, "tasks", Listing::Live).unwrap().is_empty());
/// assert!(store.records(&alice, "tasks", Listing::WithDeleted).unwrap()[0].deleted);
/// ```
pub trait RecordStore: Send + Sync {
    /// Stores `data` as a new record of `owner` in `collection`; returns it
    /// with its id, one more than the highest of `owner`'s there.
    fn insert_record(
        &self,
        owner: &Principal,
        collection: &str,
        data: &Value,
    ) -> Result<Record, StoreError>;

    /// The record `id` of `collection` when `owner` owns it and it is not
    /// deleted; `None` otherwise (missing, another principal's, deleted).
    fn record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
    ) -> Result<Option<Record>, StoreError>;

    /// Replaces the data of the record `id` when `owner` owns it and it is
    /// not deleted; returns it as it is now, or `None` (and nothing changed)
    /// as [`record`](Self::record) would.
    fn update_record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
        data: &Value,
    ) -> Result<Option<Record>, StoreError>;

    /// Deletes (softly) the record `id` when `owner` owns it and it is not
    /// deleted yet; `false` (and nothing changed) otherwise.
    fn delete_record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
    ) -> Result<bool, StoreError>;

    /// `owner`'s records in `collection`, in id order.
    fn records(
        &self,
        owner: &Principal,
        collection: &str,
        listing: Listing,
    ) -> Result<Vec<Record>, StoreError>;
}

/// Refuses a collection name a store could not keep apart from others: empty,
/// longer than [`MAX_COLLECTION_LEN`], or with characters other than ASCII
/// letters, digits, `_`, `-` and `.`.
pub(crate) fn check_collection(collection: &str) -> Result<(), StoreError> {
    let valid = !collection.is_empty()
        && collection.len() <= MAX_COLLECTION_LEN
        && collection
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.'));
    if valid {
        Ok(())
    } else {
        Err(StoreError(format!(
            "`{collection}` is not a collection name: use 1 to {MAX_COLLECTION_LEN} ASCII \
             letters, digits, `_`, `-` or `.`, e.g. `tasks`"
        )))
    }
}

/// What a database store looks a record up by: the collection, checked,
/// and the id as the database keeps it; `None` for an id no store could
/// have issued, which reads as missing.
pub(crate) fn key(collection: &str, id: u64) -> Result<Option<i64>, StoreError> {
    check_collection(collection)?;
    Ok(database_id(id))
}

/// A record's data as a database store keeps it: JSON text.
pub(crate) fn encode(data: &Value) -> Result<String, StoreError> {
    serde_json::to_string(data)
        .map_err(|error| StoreError(format!("a record's data cannot be stored: {error}")))
}

/// A record read back from a database store's `id`, `data` and `deleted`.
pub(crate) fn decode(id: i64, data: &str, deleted: bool) -> Result<Record, StoreError> {
    Ok(Record {
        id: stored_id(id)?,
        data: serde_json::from_str(data)
            .map_err(|error| StoreError(format!("record {id} holds invalid JSON: {error}")))?,
        deleted,
    })
}

/// A stored id as the `u64` callers see; ids start at 1, so a negative
/// one means a database written by something else.
pub(crate) fn stored_id(id: i64) -> Result<u64, StoreError> {
    u64::try_from(id)
        .map_err(|_| StoreError(format!("the database holds a negative record id {id}")))
}

/// An id as the databases keep it (`i64`); one no store could have issued
/// reads as missing rather than wrapping onto another record.
pub(crate) fn database_id(id: u64) -> Option<i64> {
    i64::try_from(id).ok()
}
