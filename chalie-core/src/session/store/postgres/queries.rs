//! How the store talks to the database: a statement on a pooled
//! connection, retried once on a fresh one when the connection was lost,
//! and the multi-statement steps, each in one transaction.

use deadpool_postgres::{GenericClient, Object, Pool};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::PgStore;
use crate::session::store::StoreError;

/// A statement's parameters, owned: the statement runs on the store's
/// runtime, after the caller's borrows would have ended.
pub(super) type Params = Vec<Box<dyn ToSql + Send + Sync>>;

/// Turns owned values into a statement's parameters.
macro_rules! params {
    ($($value:expr),* $(,)?) => {
        vec![$(Box::new($value) as Box<dyn tokio_postgres::types::ToSql + Send + Sync>),*]
    };
}
pub(super) use params;

fn borrowed(params: &Params) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|param| param.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

/// A failure that names what was lost, so a caller can tell a connection
/// problem from a bad statement.
pub(super) fn pg_error(error: tokio_postgres::Error) -> StoreError {
    if error.is_closed() {
        StoreError(format!(
            "PostgreSQL: the connection was lost mid-query ({error}); the call was not \
             retried because it may have been applied"
        ))
    } else {
        match error.as_db_error() {
            Some(db) => StoreError(format!(
                "PostgreSQL: {} ({})",
                db.message(),
                db.code().code()
            )),
            None => StoreError(format!("PostgreSQL: {error}")),
        }
    }
}

pub(super) async fn connection(pool: &Pool) -> Result<Object, StoreError> {
    pool.get().await.map_err(|error| {
        StoreError(format!(
            "PostgreSQL: no connection to the database: {error}"
        ))
    })
}

impl PgStore {
    /// Rows of one idempotent statement (a read, an upsert): on a connection
    /// lost mid-query it is sent again once on a fresh connection, which is
    /// safe because sending it twice changes nothing more than once.
    pub(super) fn rows(&self, sql: &'static str, params: Params) -> Result<Vec<Row>, StoreError> {
        let pool = self.pool.clone();
        self.bridge.run(async move {
            let first = connection(&pool).await?;
            match first.query(sql, &borrowed(&params)).await {
                Err(error) if error.is_closed() => {
                    drop(first);
                    let again = connection(&pool).await?;
                    again.query(sql, &borrowed(&params)).await.map_err(pg_error)
                }
                other => other.map_err(pg_error),
            }
        })
    }

    /// How many rows one idempotent statement changed (see [`rows`](Self::rows)).
    pub(super) fn execute(&self, sql: &'static str, params: Params) -> Result<u64, StoreError> {
        let pool = self.pool.clone();
        self.bridge.run(async move {
            let first = connection(&pool).await?;
            match first.execute(sql, &borrowed(&params)).await {
                Err(error) if error.is_closed() => {
                    drop(first);
                    let again = connection(&pool).await?;
                    again
                        .execute(sql, &borrowed(&params))
                        .await
                        .map_err(pg_error)
                }
                other => other.map_err(pg_error),
            }
        })
    }

    /// Runs `step` in one transaction on the store's runtime: all of it is
    /// committed or none. Not retried: a commit whose answer was lost may
    /// have been applied.
    pub(super) fn transaction<T: Send + 'static>(
        &self,
        step: impl for<'t> FnOnce(
            &'t deadpool_postgres::Transaction<'t>,
        ) -> futures::future::BoxFuture<'t, Result<T, StoreError>>
        + Send
        + 'static,
    ) -> Result<T, StoreError> {
        let pool = self.pool.clone();
        self.bridge.run(async move {
            let mut client = connection(&pool).await?;
            let transaction = client.transaction().await.map_err(pg_error)?;
            let value = step(&transaction).await?;
            transaction.commit().await.map_err(pg_error)?;
            Ok(value)
        })
    }
}

/// Appends a message in `transaction`, after the session's last, holding the
/// session's lock so two replicas appending at once get distinct `seq`s.
pub(super) async fn append_message(
    transaction: &impl GenericClient,
    session_id: &str,
    run_id: &str,
    body: &str,
) -> Result<u64, StoreError> {
    transaction
        .execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('chalie.messages.' || $1, 0))",
            &[&session_id],
        )
        .await
        .map_err(pg_error)?;
    let row = transaction
        .query_one(
            "INSERT INTO messages (session_id, seq, run_id, body)
             VALUES ($1, (SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE session_id = $1),
                     $2, $3)
             RETURNING seq",
            &[&session_id, &run_id, &body],
        )
        .await
        .map_err(pg_error)?;
    let seq: i64 = row.get(0);
    Ok(seq as u64)
}
