//! What a session keeps, behind a store trait: sessions, runs, messages,
//! each message's tool calls, pending approvals and plans.

pub(crate) mod memory;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod records;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite;

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::session::event::Event;
use crate::session::mode::Mode;
use crate::session::model::Message;
use crate::turn::Principal;
use crate::{Channel, dispatch::Setting};

/// A session: an id, its mode and the principal it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The session's id.
    pub id: String,
    /// Its mode now.
    pub mode: Mode,
    /// The principal that opened it, the only one that may act on it.
    /// `None`: a session opened by the host itself, or stored before
    /// sessions had owners; only the host acts on it (see
    /// [`Sessions::as_principal`](crate::session::Sessions::as_principal)).
    #[serde(default)]
    pub owner: Option<Principal>,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Going, or interrupted (e.g. the process stopped while an approval
    /// was pending): [`Sessions::resume`](crate::session::Sessions::resume) picks it up.
    Running,
    /// The model answered.
    Completed,
    /// It stopped before a final answer (the iteration cap).
    Partial,
    /// It failed (the model could not answer).
    Failed,
}

impl RunStatus {
    /// `running`, `completed`, `partial` or `failed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
        }
    }

    /// The value named `text`, as [`as_str`](Self::as_str) writes it.
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Running, Self::Completed, Self::Partial, Self::Failed]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// One run: a user message and what the agent did about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's id.
    pub id: String,
    /// Its session.
    pub session_id: String,
    /// Where it is.
    pub status: RunStatus,
}

/// A message as stored: its place in the session and its run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage {
    /// Its position in the session, from 0.
    pub seq: u64,
    /// The run it belongs to.
    pub run_id: String,
    /// The message.
    pub message: Message,
}

/// Where a tool call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Dispatched, not finished (it may be waiting for an approval).
    Started,
    /// A write whose body began and has not finished. A run resumed after
    /// its driver stopped does not run it again: the model is told it was
    /// interrupted and may or may not have taken effect.
    Executing,
    /// It succeeded (or was captured as a plan step).
    Completed,
    /// It failed or was refused.
    Failed,
    /// It runs in the background; the model has its receipt.
    Background,
    /// It finished in the background; its final envelope is stored and
    /// reaches the model with the session's next request.
    Finished,
}

impl ToolCallStatus {
    /// The stored name (snake_case).
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolCallStatus::Started => "started",
            ToolCallStatus::Executing => "executing",
            ToolCallStatus::Completed => "completed",
            ToolCallStatus::Failed => "failed",
            ToolCallStatus::Background => "background",
            ToolCallStatus::Finished => "finished",
        }
    }

    /// A background call whose final result the model has not read yet
    /// ([`Background`](Self::Background) or [`Finished`](Self::Finished)).
    pub const fn is_undelivered(self) -> bool {
        matches!(self, ToolCallStatus::Background | ToolCallStatus::Finished)
    }

    /// The value named `text`, as [`as_str`](Self::as_str) writes it.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Started,
            Self::Executing,
            Self::Completed,
            Self::Failed,
            Self::Background,
            Self::Finished,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }
}

/// One tool call of an assistant message, enough to rebuild its card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// The run.
    pub run_id: String,
    /// The assistant message that made the call ([`StoredMessage::seq`]).
    pub message_seq: u64,
    /// The call's id.
    pub call_id: String,
    /// The ability called.
    pub tool: String,
    /// The arguments as the model sent them.
    pub input: Value,
    /// Where it is.
    pub status: ToolCallStatus,
    /// The envelope the model read, once finished.
    pub envelope: Option<String>,
    /// How long the dispatcher took, in milliseconds.
    pub execution_ms: u64,
    /// What the ability declared for the call's card
    /// ([`ToolResult::with_card`](crate::ToolResult::with_card)), once it
    /// finished; what a client shows after a reload.
    #[serde(default)]
    pub card: Option<Value>,
}

/// The state of an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    /// Waiting for the human.
    Pending,
    /// Approved: the call runs.
    Approved,
    /// Rejected: the model is told.
    Rejected,
    /// Nobody answered in time: rejected.
    TimedOut,
}

impl ApprovalState {
    /// The stored name (snake_case).
    pub const fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved => "approved",
            ApprovalState::Rejected => "rejected",
            ApprovalState::TimedOut => "timed_out",
        }
    }

    /// The value named `text`, as [`as_str`](Self::as_str) writes it.
    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Approved,
            Self::Rejected,
            Self::TimedOut,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }
}

/// A call that needs (or needed) a human's approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The run waiting.
    pub run_id: String,
    /// Its session.
    pub session_id: String,
    /// The call.
    pub call_id: String,
    /// The ability.
    pub tool: String,
    /// The validated arguments, as shown to the human.
    pub input: Value,
    /// Pending or decided.
    pub state: ApprovalState,
}

/// One step of a session's plan: a write captured in `plan_collect` mode.
/// Serialised in camelCase (`callId`), as the HTTP API answers it and as
/// the run's events name the same call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// Its position, from 0.
    pub index: usize,
    /// The call that was captured.
    #[serde(alias = "call_id")]
    pub call_id: String,
    /// The ability to call.
    pub tool: String,
    /// The arguments to call it with (the action included).
    pub input: Value,
}

/// A permission's setting on one channel, as changed through a policy
/// manager ([`Sessions::set_policy`](crate::session::Sessions::set_policy))
/// and kept with the sessions, so the change outlives the process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyRecord {
    /// The channel it applies on.
    pub channel: Channel,
    /// `tool`, `tool.action` or `tool.*`.
    pub permission: String,
    /// What the gate does with it.
    pub setting: Setting,
}

/// The store failed (the database could not be read or written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("session store: {0}")]
pub struct StoreError(pub String);

/// An approval decided, as a store shared by several processes reports it
/// to each of them (see [`SessionStore::watch_decisions`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The run waiting.
    pub run_id: String,
    /// The call.
    pub call_id: String,
    /// What was decided.
    pub state: ApprovalState,
}

/// Told of every [`Decision`] taken through any process sharing the store.
pub type DecisionSink = Arc<dyn Fn(Decision) + Send + Sync>;

/// Told that the kept policy changes may have changed through a process
/// sharing the store (a change was kept, or the store lost touch for a
/// while and cannot say): the sink reads [`SessionStore::policy`] again.
/// Called on a thread that may block on the store.
pub type PolicySink = Arc<dyn Fn() + Send + Sync>;

/// Where sessions live. [`MemoryStore`](crate::session::MemoryStore) keeps them in
/// memory; with the `sqlite` feature, `SqliteStore`
/// in an embedded database that survives a restart.
///
/// Methods are synchronous: an embedded store answers in microseconds, so
/// the run calls them inline rather than paying for a blocking-pool hop.
pub trait SessionStore: Send + Sync {
    /// Creates or replaces a session.
    fn put_session(&self, session: &SessionRecord) -> Result<(), StoreError>;
    /// Creates `session` unless a session with its id exists, in one step
    /// (two principals opening the same new id must not both become its
    /// owner); returns the session stored now, the new one or the old.
    fn create_session(&self, session: &SessionRecord) -> Result<SessionRecord, StoreError>;
    /// A session by id.
    fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError>;
    /// The sessions `owner` opened, oldest first: what a client lists.
    fn sessions_of(&self, owner: &Principal) -> Result<Vec<SessionRecord>, StoreError>;

    /// Keeps a policy change, replacing the setting the same channel and
    /// permission had; applied again over the host's policy when sessions
    /// are built on this store.
    fn put_policy(&self, record: &PolicyRecord) -> Result<(), StoreError>;
    /// Every policy change kept, in the order they were first made.
    fn policy(&self) -> Result<Vec<PolicyRecord>, StoreError>;

    /// Creates or replaces a run.
    fn put_run(&self, run: &RunRecord) -> Result<(), StoreError>;
    /// A run by id.
    fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError>;
    /// Every run still [`RunStatus::Running`], oldest first.
    fn unfinished_runs(&self) -> Result<Vec<RunRecord>, StoreError>;

    /// Appends a message to a session; returns its `seq`.
    fn append_message(
        &self,
        session_id: &str,
        run_id: &str,
        message: &Message,
    ) -> Result<u64, StoreError>;
    /// A session's messages, in order.
    fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, StoreError>;

    /// Creates or updates (by run and call id) a tool call's record.
    fn put_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError>;
    /// A run's tool calls, in the order they were first recorded.
    fn tool_calls(&self, run_id: &str) -> Result<Vec<ToolCallRecord>, StoreError>;

    /// Sets the status of a recorded call, leaving the rest of its record
    /// as it is; `false` when no such call is recorded. The default reads
    /// the run's calls and writes the one back; a store may answer it with
    /// one statement.
    fn set_tool_call_status(
        &self,
        run_id: &str,
        call_id: &str,
        status: ToolCallStatus,
    ) -> Result<bool, StoreError> {
        let Some(mut record) = self
            .tool_calls(run_id)?
            .into_iter()
            .find(|record| record.call_id == call_id)
        else {
            return Ok(false);
        };
        record.status = status;
        self.put_tool_call(&record)?;
        Ok(true)
    }

    /// The session's background calls not yet delivered to the model
    /// ([`ToolCallStatus::Background`] or [`ToolCallStatus::Finished`]), in
    /// call order. The default reads the runs of the session's messages; a
    /// store may answer it with one query.
    fn background_calls(&self, session_id: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
        let mut runs: Vec<String> = Vec::new();
        for stored in self.messages(session_id)? {
            if !runs.contains(&stored.run_id) {
                runs.push(stored.run_id);
            }
        }
        let mut calls = Vec::new();
        for run in runs {
            calls.extend(
                self.tool_calls(&run)?
                    .into_iter()
                    .filter(|call| call.status.is_undelivered()),
            );
        }
        Ok(calls)
    }

    /// Records a call's outcome and the tool message the model reads, in one
    /// step, so a run is never left with the one and not the other; returns
    /// the message's `seq`. The default writes one then the other, which is
    /// one step for a store behind a single lock held by one process.
    fn record_result(
        &self,
        record: &ToolCallRecord,
        session_id: &str,
        message: &Message,
    ) -> Result<u64, StoreError> {
        self.put_tool_call(record)?;
        self.append_message(session_id, &record.run_id, message)
    }

    /// Takes the lease on a running run for `replica` until `lease` from now,
    /// unless another replica holds a lease that has not expired; `true`:
    /// `replica` drives the run now. A store one process owns has no other
    /// replica, so the default always grants it.
    fn claim_run(&self, run_id: &str, replica: &str, lease: Duration) -> Result<bool, StoreError> {
        let _ = (run_id, replica, lease);
        Ok(true)
    }

    /// Extends, to `lease` from now, every lease `replica` holds on a
    /// running run. A replica that stops renewing (it died) loses its runs
    /// to whichever replica [resumes](crate::session::Sessions::resume) them once
    /// the leases expire.
    fn renew_leases(&self, replica: &str, lease: Duration) -> Result<(), StoreError> {
        let _ = (replica, lease);
        Ok(())
    }

    /// Registers `sink` to hear of every approval decided through another
    /// process sharing this store, so the run waiting on it here goes on.
    /// A store only one process opens has no such decisions: the default
    /// keeps nothing.
    fn watch_decisions(&self, sink: DecisionSink) {
        let _ = sink;
    }

    /// Registers `sink` to hear of every policy change kept through any
    /// process sharing this store, so each applies it to its live policy.
    /// A store only one process opens (memory, SQLite, which refuses a
    /// second process) has no such changes: the default keeps nothing.
    fn watch_policy(&self, sink: PolicySink) {
        let _ = sink;
    }

    /// Keeps an event of a run, after the run's others, for the replicas that
    /// follow the run without driving it (see [`run_events`](Self::run_events)).
    /// The default keeps nothing: with a store one process opens, the run's
    /// own event log is the only reader.
    fn put_event(&self, run_id: &str, event: &Event) -> Result<(), StoreError> {
        let _ = (run_id, event);
        Ok(())
    }

    /// The run's kept events, skipping the first `skip`, in order; `None`
    /// when this store keeps no events (the default).
    fn run_events(&self, run_id: &str, skip: u64) -> Result<Option<Vec<Event>>, StoreError> {
        let _ = (run_id, skip);
        Ok(None)
    }

    /// Creates or replaces an approval.
    fn put_approval(&self, approval: &ApprovalRecord) -> Result<(), StoreError>;
    /// An approval by run and call id.
    fn approval(&self, run_id: &str, call_id: &str) -> Result<Option<ApprovalRecord>, StoreError>;
    /// Decides a pending approval; `false` when it was not pending.
    fn decide_approval(
        &self,
        run_id: &str,
        call_id: &str,
        state: ApprovalState,
    ) -> Result<bool, StoreError>;
    /// Every approval still pending in a session.
    fn pending_approvals(&self, session_id: &str) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// Appends a step to a session's plan.
    fn add_plan_step(&self, session_id: &str, step: &PlanStep) -> Result<(), StoreError>;
    /// A session's plan, in order.
    fn plan(&self, session_id: &str) -> Result<Vec<PlanStep>, StoreError>;
    /// Empties a session's plan (executed or discarded).
    fn clear_plan(&self, session_id: &str) -> Result<(), StoreError>;
}
