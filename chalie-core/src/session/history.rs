//! A session's conversation as a client shows it: the user's and the
//! assistant's messages, each assistant message with its tool calls and
//! their cards, so a page reloaded mid-conversation rebuilds what the
//! events had drawn.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::error::SessionError;
use crate::session::model::Role;
use crate::session::run::call::is_background_notice;
use crate::session::sessions::Sessions;
use crate::session::store::ToolCallStatus;

/// One message of a session's history (see [`Sessions::history`]).
/// Serialised with camelCase fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryMessage {
    /// Its position in the session, from 0 (gaps are the messages only
    /// the model reads: tool results and instructions).
    pub seq: u64,
    /// The run it belongs to.
    pub run_id: String,
    /// [`Role::User`] or [`Role::Assistant`].
    pub role: Role,
    /// Its text (an assistant message that only called tools may have none).
    pub content: String,
    /// The calls the message made, in order; empty for a user message.
    pub tool_calls: Vec<HistoryToolCall>,
}

/// One tool call of a [`HistoryMessage`]: what its card shows. Never the
/// envelope the model read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryToolCall {
    /// The call's id, as the events named it.
    pub call_id: String,
    /// The ability called.
    pub tool_key: String,
    /// The arguments as the model sent them.
    pub input: Value,
    /// Where it is.
    pub status: ToolCallStatus,
    /// How long the dispatcher took, in milliseconds.
    pub execution_ms: u64,
    /// The card the ability declared, as `tool.completed` carried it;
    /// absent when it declared none (or the call has not finished).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<Value>,
}

impl Sessions {
    /// The session's messages as a client shows them, in order: the
    /// user's and the assistant's, each assistant message with the tool
    /// calls it made and their cards. Tool results, instructions and the
    /// notices delivering a background call's result, which only the model
    /// reads, are left out. Empty for a session with no
    /// message yet.
    pub fn history(&self, session_id: &str) -> Result<Vec<HistoryMessage>, SessionError> {
        let store = self.store();
        let messages = store.messages(session_id)?;
        let mut calls_by_run: HashMap<String, Vec<crate::session::store::ToolCallRecord>> =
            HashMap::new();
        let mut history = Vec::new();
        for stored in messages {
            let shown = matches!(stored.message.role, Role::User | Role::Assistant);
            if !shown || is_background_notice(&stored.message) {
                continue;
            }
            if !calls_by_run.contains_key(&stored.run_id) {
                let calls = store.tool_calls(&stored.run_id)?;
                calls_by_run.insert(stored.run_id.clone(), calls);
            }
            let recorded = &calls_by_run[&stored.run_id];
            // In the order the message made them; a call the store has no
            // record of yet (the message was just stored) shows as started.
            let tool_calls = stored
                .message
                .tool_calls
                .iter()
                .map(|call| {
                    let record = recorded.iter().find(|record| {
                        record.call_id == call.id && record.message_seq == stored.seq
                    });
                    HistoryToolCall {
                        call_id: call.id.clone(),
                        tool_key: call.name.clone(),
                        input: call.arguments.clone(),
                        status: record.map_or(ToolCallStatus::Started, |record| record.status),
                        execution_ms: record.map_or(0, |record| record.execution_ms),
                        card: record.and_then(|record| record.card.clone()),
                    }
                })
                .collect();
            history.push(HistoryMessage {
                seq: stored.seq,
                run_id: stored.run_id,
                role: stored.message.role,
                content: stored.message.content,
                tool_calls,
            });
        }
        Ok(history)
    }
}
