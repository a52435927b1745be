//! [`RecordStore`] for [`PgStore`]: each principal's records, one table
//! (migration 5).

use futures::FutureExt;
use serde_json::Value;
use tokio_postgres::Row;

use super::PgStore;
use super::queries::{params, pg_error};
use crate::session::store::StoreError;
use crate::session::store::records::{
    Listing, Record, RecordStore, check_collection, decode, encode, key,
};
use crate::turn::Principal;

/// A row of `id, data, deleted`.
fn record_from(row: &Row) -> Result<Record, StoreError> {
    let id: i64 = row.try_get(0).map_err(pg_error)?;
    let data: String = row.try_get(1).map_err(pg_error)?;
    decode(id, &data, row.try_get(2).map_err(pg_error)?)
}

impl RecordStore for PgStore {
    fn insert_record(
        &self,
        owner: &Principal,
        collection: &str,
        data: &Value,
    ) -> Result<Record, StoreError> {
        check_collection(collection)?;
        let (collection, owner, text) =
            (collection.to_owned(), owner.id().to_owned(), encode(data)?);
        // Not retried like the idempotent statements: sent twice, it
        // would store the record twice. The lock of the owner's part of
        // the collection gives two replicas inserting there at once
        // distinct ids, and leaves other owners' inserts alone.
        let row = self.transaction(move |transaction| {
            async move {
                transaction
                    .execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(
                             'chalie.records.' || length($1) || ':' || $1 || $2, 0))",
                        &[&collection, &owner],
                    )
                    .await
                    .map_err(pg_error)?;
                transaction
                    .query_one(
                        "INSERT INTO user_records (collection, id, owner, data)
                         VALUES ($1, (SELECT COALESCE(MAX(id), 0) + 1 FROM user_records
                                      WHERE collection = $1 AND owner = $2), $2, $3)
                         RETURNING id, data, deleted_at IS NOT NULL",
                        &[&collection, &owner, &text],
                    )
                    .await
                    .map_err(pg_error)
            }
            .boxed()
        })?;
        record_from(&row)
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
        self.rows(
            "SELECT id, data, deleted_at IS NOT NULL FROM user_records
             WHERE collection = $1 AND id = $2 AND owner = $3 AND deleted_at IS NULL",
            params![collection.to_owned(), id, owner.id().to_owned()],
        )?
        .first()
        .map(record_from)
        .transpose()
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
        self.rows(
            "UPDATE user_records SET data = $4
             WHERE collection = $1 AND id = $2 AND owner = $3 AND deleted_at IS NULL
             RETURNING id, data, deleted_at IS NOT NULL",
            params![
                collection.to_owned(),
                id,
                owner.id().to_owned(),
                encode(data)?
            ],
        )?
        .first()
        .map(record_from)
        .transpose()
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
        let changed = self.execute(
            "UPDATE user_records SET deleted_at = now()
             WHERE collection = $1 AND id = $2 AND owner = $3 AND deleted_at IS NULL",
            params![collection.to_owned(), id, owner.id().to_owned()],
        )?;
        Ok(changed > 0)
    }

    fn records(
        &self,
        owner: &Principal,
        collection: &str,
        listing: Listing,
    ) -> Result<Vec<Record>, StoreError> {
        check_collection(collection)?;
        self.rows(
            "SELECT id, data, deleted_at IS NOT NULL FROM user_records
             WHERE collection = $2 AND owner = $1 AND ($3 OR deleted_at IS NULL) ORDER BY id",
            params![
                owner.id().to_owned(),
                collection.to_owned(),
                listing == Listing::WithDeleted
            ],
        )?
        .iter()
        .map(record_from)
        .collect()
    }
}
