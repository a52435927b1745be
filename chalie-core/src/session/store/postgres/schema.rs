//! Versioned migrations: `chalie_schema` holds the version the database is
//! at; each migration runs once, in order, in one transaction with the
//! version it brings, so replicas starting together migrate once.

use deadpool_postgres::Object;

use super::failed;
use crate::session::store::StoreError;

/// The migrations, the one at index `i` bringing the schema to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: everything a session keeps, the runs' leases, the rate window.
    "
    CREATE TABLE sessions (id TEXT PRIMARY KEY, mode TEXT NOT NULL, owner TEXT);
    CREATE TABLE runs (
        id TEXT PRIMARY KEY, ord BIGSERIAL, session_id TEXT NOT NULL, status TEXT NOT NULL,
        lease_owner TEXT, lease_until TIMESTAMPTZ
    );
    CREATE INDEX runs_by_status ON runs (status, ord);
    CREATE INDEX runs_by_session ON runs (session_id);
    CREATE TABLE messages (
        session_id TEXT NOT NULL, seq BIGINT NOT NULL, run_id TEXT NOT NULL, body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE tool_calls (
        run_id TEXT NOT NULL, call_id TEXT NOT NULL, ord BIGSERIAL, message_seq BIGINT NOT NULL,
        tool TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL, envelope TEXT,
        execution_ms BIGINT NOT NULL, PRIMARY KEY (run_id, call_id)
    );
    CREATE INDEX tool_calls_by_status ON tool_calls (status);
    CREATE TABLE approvals (
        run_id TEXT NOT NULL, call_id TEXT NOT NULL, ord BIGSERIAL, session_id TEXT NOT NULL,
        tool TEXT NOT NULL, input TEXT NOT NULL, state TEXT NOT NULL, decided_at TIMESTAMPTZ,
        PRIMARY KEY (run_id, call_id)
    );
    CREATE INDEX approvals_by_session ON approvals (session_id, state);
    CREATE INDEX approvals_by_decision ON approvals (decided_at);
    CREATE TABLE plan_steps (
        session_id TEXT NOT NULL, idx BIGINT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL,
        input TEXT NOT NULL, PRIMARY KEY (session_id, idx)
    );
    CREATE TABLE rate_calls (session_id TEXT NOT NULL, at TIMESTAMPTZ NOT NULL);
    CREATE INDEX rate_calls_by_session ON rate_calls (session_id, at);
    ",
    // 2: runs' events, for replicas that follow a run another drives.
    "
    CREATE TABLE run_events (run_id TEXT NOT NULL, ord BIGSERIAL, body TEXT NOT NULL);
    CREATE INDEX run_events_by_run ON run_events (run_id, ord);
    ",
    // 3: the rate windows of abilities that declare a limit, beside the
    // session's (the ability `''`).
    "
    ALTER TABLE rate_calls ADD COLUMN ability TEXT NOT NULL DEFAULT '';
    DROP INDEX rate_calls_by_session;
    CREATE INDEX rate_calls_by_scope ON rate_calls (session_id, ability, at);
    ",
    // 4: the card an ability declares for each call, for a client's history.
    "
    ALTER TABLE tool_calls ADD COLUMN card TEXT;
    ",
    // 5: each principal's records (`RecordStore`), soft-deleted with a
    // timestamp; ids are numbered per owner in a collection, so no owner
    // learns of another's records.
    "
    CREATE TABLE user_records (
        collection TEXT NOT NULL, owner TEXT NOT NULL, id BIGINT NOT NULL, data TEXT NOT NULL,
        deleted_at TIMESTAMPTZ, PRIMARY KEY (collection, owner, id)
    );
    ",
    // 6: a principal's sessions in the order they were opened, and the
    // policy changes made through a policy manager.
    "
    ALTER TABLE sessions ADD COLUMN ord BIGSERIAL;
    CREATE INDEX sessions_by_owner ON sessions (owner, ord);
    CREATE TABLE policy_settings (
        channel TEXT NOT NULL, permission TEXT NOT NULL, setting TEXT NOT NULL, ord BIGSERIAL,
        PRIMARY KEY (channel, permission)
    );
    ",
];

/// The version this code brings a database to.
pub(super) const LATEST: i32 = MIGRATIONS.len() as i32;

/// Any number, the same in every replica: the advisory lock migrations
/// hold, so two replicas starting together do not both migrate.
const MIGRATION_LOCK: i64 = 0x6368_616c_6965;

pub(super) async fn migrate(mut client: Object) -> Result<(), StoreError> {
    let transaction = client.transaction().await.map_err(failed)?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(failed)?;
    transaction
        .batch_execute("CREATE TABLE IF NOT EXISTS chalie_schema (version INTEGER NOT NULL)")
        .await
        .map_err(failed)?;
    let current: i32 = transaction
        .query_one("SELECT COALESCE(MAX(version), 0) FROM chalie_schema", &[])
        .await
        .map_err(failed)?
        .get(0);
    if current > LATEST {
        return Err(StoreError(format!(
            "the database's schema is at version {current}, newer than the {LATEST} this \
             chalie knows: a newer chalie migrated it; run that version (or a database of \
             its own) rather than let older code write to a schema it does not know"
        )));
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        transaction
            .batch_execute(migration)
            .await
            .map_err(|error| {
                StoreError(format!(
                    "PostgreSQL: migration {} failed: {error}",
                    index + 1
                ))
            })?;
    }
    if current < LATEST {
        transaction
            .execute("DELETE FROM chalie_schema", &[])
            .await
            .map_err(failed)?;
        transaction
            .execute(
                "INSERT INTO chalie_schema (version) VALUES ($1)",
                &[&LATEST],
            )
            .await
            .map_err(failed)?;
    }
    transaction.commit().await.map_err(failed)
}
