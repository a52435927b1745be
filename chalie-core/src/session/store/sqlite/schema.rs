//! The SQLite store's tables, and the migration of a file an older
//! version wrote.

use rusqlite::Connection;

use super::rows::failed;
use crate::session::store::StoreError;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, mode TEXT NOT NULL, owner TEXT);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, status TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, run_id TEXT NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS tool_calls (
    run_id TEXT NOT NULL, call_id TEXT NOT NULL, ord INTEGER NOT NULL, message_seq INTEGER NOT NULL,
    tool TEXT NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL, envelope TEXT,
    execution_ms INTEGER NOT NULL, card TEXT, PRIMARY KEY (run_id, call_id)
);
CREATE TABLE IF NOT EXISTS approvals (
    run_id TEXT NOT NULL, call_id TEXT NOT NULL, session_id TEXT NOT NULL, tool TEXT NOT NULL,
    input TEXT NOT NULL, state TEXT NOT NULL, PRIMARY KEY (run_id, call_id)
);
CREATE INDEX IF NOT EXISTS approvals_by_session ON approvals (session_id, state);
CREATE TABLE IF NOT EXISTS plan_steps (
    session_id TEXT NOT NULL, idx INTEGER NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL,
    input TEXT NOT NULL, PRIMARY KEY (session_id, idx)
);
CREATE TABLE IF NOT EXISTS policy_settings (
    channel TEXT NOT NULL, permission TEXT NOT NULL, setting TEXT NOT NULL,
    PRIMARY KEY (channel, permission)
);
";

/// Brings an older database up to date: written before sessions had
/// owners, its sessions get an empty `owner`, so they open as ownerless
/// sessions only the host acts on; written before tool calls had cards,
/// its calls get none. In one immediate transaction, so two processes
/// opening the same old file do not both add a column.
pub(super) fn migrate(connection: &mut Connection) -> Result<(), StoreError> {
    let transaction = connection
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(failed)?;
    add_column_if_missing(&transaction, "sessions", "owner", "TEXT")?;
    add_column_if_missing(&transaction, "tool_calls", "card", "TEXT")?;
    // After the `owner` column exists, in a database of any age.
    transaction
        .execute_batch("CREATE INDEX IF NOT EXISTS sessions_by_owner ON sessions (owner)")
        .map_err(failed)?;
    transaction.commit().map_err(failed)
}

/// Adds `column` (declared `decl`) to `table` unless a database of this age
/// has it already. The names are this file's own constants, never input.
fn add_column_if_missing(
    transaction: &rusqlite::Transaction<'_>,
    table: &str,
    column: &str,
    decl: &str,
) -> Result<(), StoreError> {
    let has: bool = transaction
        .query_row(
            "SELECT COUNT(*) > 0 FROM pragma_table_info(?1) WHERE name = ?2",
            [table, column],
            |row| row.get(0),
        )
        .map_err(failed)?;
    if !has {
        transaction
            .execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}"))
            .map_err(failed)?;
    }
    Ok(())
}
