//! [`RecordStore`] for [`MemoryStore`]: the records in a table in memory,
//! gone with the process.

use std::collections::BTreeMap;
use std::sync::{MutexGuard, PoisonError};

use serde_json::Value;

use super::{Listing, Record, RecordStore, check_collection};
use crate::session::store::StoreError;
use crate::session::store::memory::MemoryStore;
use crate::turn::Principal;

/// Every record, by collection and owner, then id: each owner's ids are
/// numbered on their own, so nobody learns of another's records.
#[derive(Debug, Default)]
pub(crate) struct RecordTable {
    collections: BTreeMap<(String, Principal), BTreeMap<u64, Record>>,
}

impl MemoryStore {
    fn table(&self) -> MutexGuard<'_, RecordTable> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The live record `id` of `collection` if `owner` owns it.
fn owned<'t>(
    table: &'t mut RecordTable,
    owner: &Principal,
    collection: &str,
    id: u64,
) -> Option<&'t mut Record> {
    table
        .collections
        .get_mut(&(collection.to_owned(), owner.clone()))?
        .get_mut(&id)
        .filter(|record| !record.deleted)
}

impl RecordStore for MemoryStore {
    fn insert_record(
        &self,
        owner: &Principal,
        collection: &str,
        data: &Value,
    ) -> Result<Record, StoreError> {
        check_collection(collection)?;
        let mut table = self.table();
        let records = table
            .collections
            .entry((collection.to_owned(), owner.clone()))
            .or_default();
        let id = records.keys().next_back().map_or(1, |last| last + 1);
        let record = Record {
            id,
            data: data.clone(),
            deleted: false,
        };
        records.insert(id, record.clone());
        Ok(record)
    }

    fn record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
    ) -> Result<Option<Record>, StoreError> {
        check_collection(collection)?;
        Ok(owned(&mut self.table(), owner, collection, id).map(|record| record.clone()))
    }

    fn update_record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
        data: &Value,
    ) -> Result<Option<Record>, StoreError> {
        check_collection(collection)?;
        let mut table = self.table();
        Ok(owned(&mut table, owner, collection, id).map(|record| {
            record.data = data.clone();
            record.clone()
        }))
    }

    fn delete_record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
    ) -> Result<bool, StoreError> {
        check_collection(collection)?;
        let mut table = self.table();
        Ok(owned(&mut table, owner, collection, id)
            .map(|record| record.deleted = true)
            .is_some())
    }

    fn records(
        &self,
        owner: &Principal,
        collection: &str,
        listing: Listing,
    ) -> Result<Vec<Record>, StoreError> {
        check_collection(collection)?;
        let table = self.table();
        Ok(table
            .collections
            .get(&(collection.to_owned(), owner.clone()))
            .into_iter()
            .flat_map(|records| records.values())
            .filter(|record| listing == Listing::WithDeleted || !record.deleted)
            .cloned()
            .collect())
    }
}
