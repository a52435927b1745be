//! The embedded SQLite store (feature `sqlite`): sessions survive a restart.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::session::mode::Mode;
use crate::session::model::Message;
use crate::session::store::{
    ApprovalRecord, ApprovalState, PlanStep, PolicyRecord, RunRecord, RunStatus, SessionRecord,
    SessionStore, StoreError, StoredMessage, ToolCallRecord, ToolCallStatus,
};
use crate::turn::Principal;
use crate::{Channel, dispatch::Setting};

const SCHEMA: &str = "
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
fn migrate(connection: &mut Connection) -> Result<(), StoreError> {
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

/// A [`SessionStore`] in an embedded SQLite database (bundled, no system
/// library needed). WAL journal with `synchronous = NORMAL`: a write is
/// durable against a process crash at once, and against power loss at
/// the next checkpoint.
///
/// ```
/// use chalie_core::session::{Mode, SessionRecord, SessionStore, SqliteStore};
///
/// let store = SqliteStore::in_memory().unwrap();
/// store.put_session(&SessionRecord { id: "s1".into(), mode: Mode::Plan, owner: None }).unwrap();
/// assert_eq!(store.session("s1").unwrap().unwrap().mode, Mode::Plan);
/// ```
///
/// One process at a time: [`open`](SqliteStore::open) refuses a file
/// another process holds open (two processes would each resume the same
/// unfinished runs); share a PostgreSQL database between processes
/// instead (`PgStore`). Within one process the same file may be opened
/// again, e.g. after a restart of the sessions. A file that is not a
/// database, or whose pages are damaged, is refused at open with what to
/// do, never read as an empty store. A write that does not fit (a full
/// disk, or [`max_size`](SqliteStore::max_size)) fails whole, with
/// everything written before kept.
#[derive(Debug)]
pub struct SqliteStore {
    connection: Mutex<Connection>,
    // Held while this store lives; `None` in memory.
    _lock: Option<Arc<std::fs::File>>,
}

/// A SQLite error as the store reports it: a full database says that
/// nothing of the write was kept, and what to do.
pub(crate) fn failed(error: impl std::fmt::Display) -> StoreError {
    let text = error.to_string();
    if text.contains("database or disk is full") {
        return StoreError(format!(
            "{text}: nothing of this write was stored, everything before it is kept; free disk space (or raise the store's `max_size`) and retry"
        ));
    }
    StoreError(text)
}

/// The lock files this process holds, by path: a second store on the same
/// file in this process shares the lock rather than being refused.
static HELD: Mutex<Vec<(std::path::PathBuf, std::sync::Weak<std::fs::File>)>> =
    Mutex::new(Vec::new());

/// Takes the process-wide lock on the database at `path` (a `.lock` file
/// beside it, so SQLite's own locks on the database are left alone).
fn lock_for_this_process(path: &Path) -> Result<Arc<std::fs::File>, StoreError> {
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock_path = std::path::PathBuf::from(lock_path);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|error| {
            StoreError(format!(
                "cannot open `{}` (its lock file `{}`): {error}",
                path.display(),
                lock_path.display()
            ))
        })?;
    let key = lock_path.canonicalize().unwrap_or(lock_path);
    let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
    held.retain(|(_, lock)| lock.strong_count() > 0);
    if let Some(lock) = held
        .iter()
        .find(|(path, _)| *path == key)
        .and_then(|(_, lock)| lock.upgrade())
    {
        return Ok(lock);
    }
    match file.try_lock() {
        Ok(()) => {
            let file = Arc::new(file);
            held.push((key, Arc::downgrade(&file)));
            Ok(file)
        }
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError(format!(
            "`{}` is open in another process; a SQLite store serves one process at a time (both would resume the same runs): stop the other process, or share a PostgreSQL database between processes (`PgStore`)",
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(error)) => Err(StoreError(format!(
            "cannot lock `{}`: {error}",
            key.display()
        ))),
    }
}

fn to_json(value: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(failed)
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(failed)
}

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError(format!("the database holds an unknown {what} `{value}`"))
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        let lock = lock_for_this_process(path)?;
        let damaged = |error: StoreError| {
            StoreError(format!(
                "cannot open `{}`: {}; if the file is damaged, restore it from a backup, or move it aside to start an empty store",
                path.display(),
                error.0
            ))
        };
        let connection = Connection::open(path).map_err(|error| damaged(failed(error)))?;
        let mut store = Self::prepare(connection).map_err(damaged)?;
        store._lock = Some(lock);
        Ok(store)
    }

    /// Caps the database at about `bytes` (rounded down to whole pages): a
    /// write that would grow it past the cap fails, whole, with an error
    /// saying so, and what was written before stays. For a store that must
    /// not fill its disk, or to test a full one.
    pub fn max_size(self, bytes: u64) -> Result<Self, StoreError> {
        {
            let db = self.db();
            let page: u64 = db
                .query_row("PRAGMA page_size", [], |row| row.get(0))
                .map_err(failed)?;
            db.query_row(
                &format!("PRAGMA max_page_count = {}", (bytes / page).max(1)),
                [],
                |_| Ok(()),
            )
            .map_err(failed)?;
        }
        Ok(self)
    }

    /// A private in-memory database, e.g. for tests.
    pub fn in_memory() -> Result<Self, StoreError> {
        Self::prepare(Connection::open_in_memory().map_err(failed)?)
    }

    fn prepare(mut connection: Connection) -> Result<Self, StoreError> {
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;",
            )
            .map_err(failed)?;
        // A damaged page is found now, not as an empty or partial answer
        // later (the check reads every page once).
        let check: String = connection
            .query_row("PRAGMA quick_check(1)", [], |row| row.get(0))
            .map_err(failed)?;
        if check != "ok" {
            return Err(StoreError(format!("the database is damaged ({check})")));
        }
        connection.execute_batch(SCHEMA).map_err(failed)?;
        // A table of its own, created when missing: a file written before
        // stores kept records gains it, empty, the first time it is opened.
        connection
            .execute_batch(crate::session::store::records::SQLITE_SCHEMA)
            .map_err(failed)?;
        migrate(&mut connection)?;
        Ok(Self {
            connection: Mutex::new(connection),
            _lock: None,
        })
    }

    pub(in crate::session::store) fn db(&self) -> MutexGuard<'_, Connection> {
        self.connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

fn session_row(db: &Connection, id: &str) -> Result<Option<SessionRecord>, StoreError> {
    let row: Option<(String, Option<String>)> = db
        .query_row(
            "SELECT mode, owner FROM sessions WHERE id = ?1",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .optional()
        .map_err(failed)?;
    row.map(|(mode, owner)| {
        Ok(SessionRecord {
            id: id.to_owned(),
            mode: mode.parse::<Mode>().map_err(failed)?,
            owner: owner.map(Principal::new),
        })
    })
    .transpose()
}

/// The columns [`tool_call_row`] reads, in its order: a macro, so the
/// queries naming them are literals `prepare_cached` keeps.
macro_rules! tool_call_columns {
    () => {
        "run_id, call_id, message_seq, tool, input, status, envelope, execution_ms, card"
    };
}

type ToolCallRow = (
    String,
    String,
    i64,
    String,
    String,
    String,
    Option<String>,
    i64,
    Option<String>,
);

fn tool_call_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ToolCallRow> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
    ))
}

fn tool_call_from(row: ToolCallRow) -> Result<ToolCallRecord, StoreError> {
    let (run_id, call_id, message_seq, tool, input, status, envelope, execution_ms, card) = row;
    Ok(ToolCallRecord {
        run_id,
        message_seq: message_seq as u64,
        call_id,
        tool,
        input: from_json(&input)?,
        status: ToolCallStatus::parse(&status)
            .ok_or_else(|| corrupt("tool call status", &status))?,
        envelope,
        execution_ms: execution_ms as u64,
        card: card.as_deref().map(from_json).transpose()?,
    })
}

fn approval_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<[String; 6]> {
    Ok([
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
    ])
}

fn approval_from(
    [run_id, call_id, session_id, tool, input, state]: [String; 6],
) -> Result<ApprovalRecord, StoreError> {
    Ok(ApprovalRecord {
        state: ApprovalState::parse(&state).ok_or_else(|| corrupt("approval state", &state))?,
        input: from_json::<Value>(&input)?,
        run_id,
        call_id,
        session_id,
        tool,
    })
}

impl SessionStore for SqliteStore {
    fn put_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        self.db()
            .execute(
                "INSERT INTO sessions (id, mode, owner) VALUES (?1, ?2, ?3)
                 ON CONFLICT (id) DO UPDATE SET mode = excluded.mode, owner = excluded.owner",
                params![
                    session.id,
                    session.mode.as_str(),
                    session.owner.as_ref().map(Principal::id)
                ],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn create_session(&self, session: &SessionRecord) -> Result<SessionRecord, StoreError> {
        let db = self.db();
        db.execute(
            "INSERT INTO sessions (id, mode, owner) VALUES (?1, ?2, ?3) ON CONFLICT (id) DO NOTHING",
            params![
                session.id,
                session.mode.as_str(),
                session.owner.as_ref().map(Principal::id)
            ],
        )
        .map_err(failed)?;
        session_row(&db, &session.id)?.ok_or_else(|| {
            StoreError(format!(
                "session `{}` vanished as it was created",
                session.id
            ))
        })
    }

    fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        session_row(&self.db(), id)
    }

    fn sessions_of(&self, owner: &Principal) -> Result<Vec<SessionRecord>, StoreError> {
        let db = self.db();
        // The rowid orders them by creation: an upsert keeps the row's.
        let mut statement = db
            .prepare("SELECT id, mode FROM sessions WHERE owner = ?1 ORDER BY rowid")
            .map_err(failed)?;
        let rows = statement
            .query_map([owner.id()], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(failed)?;
        rows.map(|row| {
            let (id, mode) = row.map_err(failed)?;
            Ok(SessionRecord {
                id,
                mode: mode.parse::<Mode>().map_err(failed)?,
                owner: Some(owner.clone()),
            })
        })
        .collect()
    }

    fn put_policy(&self, record: &PolicyRecord) -> Result<(), StoreError> {
        self.db()
            .execute(
                "INSERT INTO policy_settings (channel, permission, setting) VALUES (?1, ?2, ?3)
                 ON CONFLICT (channel, permission) DO UPDATE SET setting = excluded.setting",
                params![
                    record.channel.as_str(),
                    record.permission,
                    record.setting.as_str()
                ],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn policy(&self) -> Result<Vec<PolicyRecord>, StoreError> {
        let db = self.db();
        let mut statement = db
            .prepare("SELECT channel, permission, setting FROM policy_settings ORDER BY rowid")
            .map_err(failed)?;
        let rows = statement
            .query_map([], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })
            .map_err(failed)?;
        rows.map(|row| {
            let (channel, permission, setting) = row.map_err(failed)?;
            Ok(PolicyRecord {
                channel: Channel::parse(&channel).ok_or_else(|| corrupt("channel", &channel))?,
                setting: Setting::parse(&setting).ok_or_else(|| corrupt("setting", &setting))?,
                permission,
            })
        })
        .collect()
    }

    fn put_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        self.db()
            .execute(
                "INSERT INTO runs (id, session_id, status) VALUES (?1, ?2, ?3)
                 ON CONFLICT (id) DO UPDATE SET status = excluded.status",
                params![run.id, run.session_id, run.status.as_str()],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        let row: Option<(String, String)> = self
            .db()
            .query_row(
                "SELECT session_id, status FROM runs WHERE id = ?1",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(failed)?;
        row.map(|(session_id, status)| {
            Ok(RunRecord {
                id: id.to_owned(),
                session_id,
                status: RunStatus::parse(&status).ok_or_else(|| corrupt("run status", &status))?,
            })
        })
        .transpose()
    }

    fn unfinished_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let db = self.db();
        let mut statement = db
            .prepare("SELECT id, session_id FROM runs WHERE status = 'running' ORDER BY rowid")
            .map_err(failed)?;
        let rows = statement
            .query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(failed)?;
        rows.map(|row| {
            let (id, session_id) = row.map_err(failed)?;
            Ok(RunRecord {
                id,
                session_id,
                status: RunStatus::Running,
            })
        })
        .collect()
    }

    fn append_message(
        &self,
        session_id: &str,
        run_id: &str,
        message: &Message,
    ) -> Result<u64, StoreError> {
        let body = to_json(message)?;
        let seq: i64 = self
            .db()
            .query_row(
                "INSERT INTO messages (session_id, seq, run_id, body)
                 VALUES (?1, (SELECT COUNT(*) FROM messages WHERE session_id = ?1), ?2, ?3)
                 RETURNING seq",
                params![session_id, run_id, body],
                |row| row.get(0),
            )
            .map_err(failed)?;
        Ok(seq as u64)
    }

    fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        let db = self.db();
        let mut statement = db
            .prepare("SELECT seq, run_id, body FROM messages WHERE session_id = ?1 ORDER BY seq")
            .map_err(failed)?;
        let rows = statement
            .query_map([session_id], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            })
            .map_err(failed)?;
        rows.map(|row| {
            let (seq, run_id, body) = row.map_err(failed)?;
            Ok(StoredMessage {
                seq: seq as u64,
                run_id,
                message: from_json(&body)?,
            })
        })
        .collect()
    }

    fn put_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError> {
        let input = to_json(&record.input)?;
        let card = record.card.as_ref().map(to_json).transpose()?;
        self.db()
            .execute(
                "INSERT INTO tool_calls
                   (run_id, call_id, ord, message_seq, tool, input, status, envelope, execution_ms, card)
                 VALUES (?1, ?2, (SELECT COUNT(*) FROM tool_calls WHERE run_id = ?1), ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (run_id, call_id) DO UPDATE SET
                   status = excluded.status, envelope = excluded.envelope,
                   execution_ms = excluded.execution_ms, card = excluded.card",
                params![
                    record.run_id,
                    record.call_id,
                    record.message_seq as i64,
                    record.tool,
                    input,
                    record.status.as_str(),
                    record.envelope,
                    record.execution_ms as i64,
                    card,
                ],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn set_tool_call_status(
        &self,
        run_id: &str,
        call_id: &str,
        status: ToolCallStatus,
    ) -> Result<bool, StoreError> {
        let changed = self
            .db()
            .execute(
                "UPDATE tool_calls SET status = ?3 WHERE run_id = ?1 AND call_id = ?2",
                params![run_id, call_id, status.as_str()],
            )
            .map_err(failed)?;
        Ok(changed > 0)
    }

    fn tool_calls(&self, run_id: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
        let db = self.db();
        let mut statement = db
            .prepare_cached(concat!(
                "SELECT ",
                tool_call_columns!(),
                " FROM tool_calls WHERE run_id = ?1 ORDER BY ord"
            ))
            .map_err(failed)?;
        let rows = statement
            .query_map([run_id], tool_call_row)
            .map_err(failed)?;
        rows.map(|row| tool_call_from(row.map_err(failed)?))
            .collect()
    }

    /// One query, not one per run, and a cached statement: a run asks this
    /// before every model request.
    fn background_calls(&self, session_id: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
        let db = self.db();
        let mut statement = db
            .prepare_cached(concat!(
                "SELECT ",
                tool_call_columns!(),
                " FROM tool_calls
                 WHERE status IN ('background', 'finished') -- is_undelivered()
                   AND run_id IN (SELECT id FROM runs WHERE session_id = ?1)
                 ORDER BY rowid"
            ))
            .map_err(failed)?;
        let rows = statement
            .query_map([session_id], tool_call_row)
            .map_err(failed)?;
        rows.map(|row| tool_call_from(row.map_err(failed)?))
            .collect()
    }

    fn put_approval(&self, approval: &ApprovalRecord) -> Result<(), StoreError> {
        let input = to_json(&approval.input)?;
        self.db()
            .execute(
                "INSERT OR REPLACE INTO approvals (run_id, call_id, session_id, tool, input, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    approval.run_id,
                    approval.call_id,
                    approval.session_id,
                    approval.tool,
                    input,
                    approval.state.as_str(),
                ],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn approval(&self, run_id: &str, call_id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let row = self
            .db()
            .query_row(
                "SELECT run_id, call_id, session_id, tool, input, state FROM approvals
                 WHERE run_id = ?1 AND call_id = ?2",
                [run_id, call_id],
                approval_row,
            )
            .optional()
            .map_err(failed)?;
        row.map(approval_from).transpose()
    }

    fn decide_approval(
        &self,
        run_id: &str,
        call_id: &str,
        state: ApprovalState,
    ) -> Result<bool, StoreError> {
        let changed = self
            .db()
            .execute(
                "UPDATE approvals SET state = ?3
                 WHERE run_id = ?1 AND call_id = ?2 AND state = 'pending'",
                params![run_id, call_id, state.as_str()],
            )
            .map_err(failed)?;
        Ok(changed == 1)
    }

    fn pending_approvals(&self, session_id: &str) -> Result<Vec<ApprovalRecord>, StoreError> {
        let db = self.db();
        let mut statement = db
            .prepare(
                "SELECT run_id, call_id, session_id, tool, input, state FROM approvals
                 WHERE session_id = ?1 AND state = 'pending' ORDER BY rowid",
            )
            .map_err(failed)?;
        let rows = statement
            .query_map([session_id], approval_row)
            .map_err(failed)?;
        rows.map(|row| approval_from(row.map_err(failed)?))
            .collect()
    }

    fn add_plan_step(&self, session_id: &str, step: &PlanStep) -> Result<(), StoreError> {
        let input = to_json(&step.input)?;
        self.db()
            .execute(
                "INSERT OR REPLACE INTO plan_steps (session_id, idx, call_id, tool, input)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    session_id,
                    step.index as i64,
                    step.call_id,
                    step.tool,
                    input
                ],
            )
            .map_err(failed)?;
        Ok(())
    }

    fn plan(&self, session_id: &str) -> Result<Vec<PlanStep>, StoreError> {
        let db = self.db();
        let mut statement = db
            .prepare(
                "SELECT idx, call_id, tool, input FROM plan_steps WHERE session_id = ?1 ORDER BY idx",
            )
            .map_err(failed)?;
        let rows = statement
            .query_map([session_id], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                ))
            })
            .map_err(failed)?;
        rows.map(|row| {
            let (index, call_id, tool, input) = row.map_err(failed)?;
            Ok(PlanStep {
                index: index as usize,
                call_id,
                tool,
                input: from_json(&input)?,
            })
        })
        .collect()
    }

    fn clear_plan(&self, session_id: &str) -> Result<(), StoreError> {
        self.db()
            .execute("DELETE FROM plan_steps WHERE session_id = ?1", [session_id])
            .map_err(failed)?;
        Ok(())
    }
}
