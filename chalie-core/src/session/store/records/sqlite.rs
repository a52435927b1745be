//! [`RecordStore`] for [`SqliteStore`]: one table in the sessions' file.

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::{Listing, Record, RecordStore, check_collection, decode, encode, key};
use crate::session::store::StoreError;
use crate::session::store::sqlite::{SqliteStore, failed};
use crate::turn::Principal;

/// The records' table; `deleted` is 0 or 1. Keyed by collection, owner and
/// id: each owner's ids in a collection are numbered on their own, so no
/// owner learns of another's records, and every query names the owner.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS user_records (
    collection TEXT NOT NULL, owner TEXT NOT NULL, id INTEGER NOT NULL, data TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (collection, owner, id)
);
";

impl RecordStore for SqliteStore {
    fn insert_record(
        &self,
        owner: &Principal,
        collection: &str,
        data: &Value,
    ) -> Result<Record, StoreError> {
        check_collection(collection)?;
        let text = encode(data)?;
        // One statement: SQLite serialises writers, so two threads (or two
        // stores this process opened on the file; another process is
        // refused at open) never take the same id.
        let id: i64 = self
            .db()
            .query_row(
                "INSERT INTO user_records (collection, id, owner, data)
                 SELECT ?1, COALESCE(MAX(id), 0) + 1, ?2, ?3 FROM user_records
                 WHERE collection = ?1 AND owner = ?2
                 RETURNING id",
                params![collection, owner.id(), text],
                |row| row.get(0),
            )
            .map_err(failed)?;
        decode(id, &text, false)
    }

    fn record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
    ) -> Result<Option<Record>, StoreError> {
        let Some(id) = key(collection, id)? else {
            return Ok(None);
        };
        let data: Option<String> = self
            .db()
            .query_row(
                "SELECT data FROM user_records
                 WHERE collection = ?1 AND id = ?2 AND owner = ?3 AND deleted = 0",
                params![collection, id, owner.id()],
                |row| row.get(0),
            )
            .optional()
            .map_err(failed)?;
        data.map(|data| decode(id, &data, false)).transpose()
    }

    fn update_record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
        data: &Value,
    ) -> Result<Option<Record>, StoreError> {
        let Some(id) = key(collection, id)? else {
            return Ok(None);
        };
        let text = encode(data)?;
        let changed = self
            .db()
            .execute(
                "UPDATE user_records SET data = ?4
                 WHERE collection = ?1 AND id = ?2 AND owner = ?3 AND deleted = 0",
                params![collection, id, owner.id(), text],
            )
            .map_err(failed)?;
        if changed == 0 {
            return Ok(None);
        }
        decode(id, &text, false).map(Some)
    }

    fn delete_record(
        &self,
        owner: &Principal,
        collection: &str,
        id: u64,
    ) -> Result<bool, StoreError> {
        let Some(id) = key(collection, id)? else {
            return Ok(false);
        };
        let changed = self
            .db()
            .execute(
                "UPDATE user_records SET deleted = 1
                 WHERE collection = ?1 AND id = ?2 AND owner = ?3 AND deleted = 0",
                params![collection, id, owner.id()],
            )
            .map_err(failed)?;
        Ok(changed > 0)
    }

    fn records(
        &self,
        owner: &Principal,
        collection: &str,
        listing: Listing,
    ) -> Result<Vec<Record>, StoreError> {
        check_collection(collection)?;
        let db = self.db();
        let mut statement = db
            .prepare_cached(
                "SELECT id, data, deleted FROM user_records
                 WHERE collection = ?2 AND owner = ?1 AND (?3 OR deleted = 0) ORDER BY id",
            )
            .map_err(failed)?;
        let rows = statement
            .query_map(
                params![owner.id(), collection, listing == Listing::WithDeleted],
                |row| {
                    Ok((
                        row.get::<_, i64>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, bool>(2)?,
                    ))
                },
            )
            .map_err(failed)?;
        rows.map(|row| {
            let (id, data, deleted) = row.map_err(failed)?;
            decode(id, &data, deleted)
        })
        .collect()
    }
}
