//! How the SQLite store's rows become records, and its errors.

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use crate::session::mode::Mode;
use crate::session::store::{
    ApprovalRecord, ApprovalState, SessionRecord, StoreError, ToolCallRecord, ToolCallStatus,
};
use crate::turn::Principal;

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

pub(super) fn to_json(value: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(failed)
}

pub(super) fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(failed)
}

pub(super) fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError(format!("the database holds an unknown {what} `{value}`"))
}

pub(super) fn session_row(db: &Connection, id: &str) -> Result<Option<SessionRecord>, StoreError> {
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
pub(super) use tool_call_columns;

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

pub(super) fn tool_call_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ToolCallRow> {
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

pub(super) fn tool_call_from(row: ToolCallRow) -> Result<ToolCallRecord, StoreError> {
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

pub(super) fn approval_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<[String; 6]> {
    Ok([
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
    ])
}

pub(super) fn approval_from(
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
