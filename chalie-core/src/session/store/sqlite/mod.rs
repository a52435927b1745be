//! The embedded SQLite store (feature `sqlite`): sessions survive a restart.
//! The tables and the migration of older files are in `schema`, how rows
//! become records in `rows`.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rusqlite::{Connection, OptionalExtension, params};

use crate::session::mode::Mode;
use crate::session::model::Message;
use crate::session::store::{
    ApprovalRecord, ApprovalState, PlanStep, PolicyRecord, RunRecord, RunStatus, SessionRecord,
    SessionStore, StoreError, StoredMessage, ToolCallRecord, ToolCallStatus,
};
use crate::turn::Principal;
use crate::{Channel, dispatch::Setting};

mod rows;
mod schema;

pub(crate) use rows::failed;
use rows::{
    approval_from, approval_row, corrupt, from_json, session_row, to_json, tool_call_columns,
    tool_call_from, tool_call_row,
};
use schema::{SCHEMA, migrate};

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
