//! The action trail: the calls made during one turn, in order, with what
//! the gate decided and how each ended.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use super::call_id::Name;

/// How the permission gate decided a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateDecision {
    /// The policy allowed it.
    Allowed,
    /// A human approved it.
    Approved,
    /// A human rejected it, or did not answer in time.
    Rejected,
    /// The policy denied it.
    Denied,
    /// An internal ability or setting: no approval asked.
    Internal,
    /// Captured as a step of the session's plan (`plan_collect`): not run
    /// now.
    Planned,
    /// Refused before the gate (unknown or unreachable tool, bad
    /// arguments, rate limit).
    NotReached,
}

impl GateDecision {
    /// The decision's name, as it is serialised (`not_reached`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            GateDecision::Allowed => "allowed",
            GateDecision::Approved => "approved",
            GateDecision::Rejected => "rejected",
            GateDecision::Denied => "denied",
            GateDecision::Internal => "internal",
            GateDecision::Planned => "planned",
            GateDecision::NotReached => "not_reached",
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// It returned a success.
    Success,
    /// It returned an error, or was refused.
    Error,
    /// It was started in the background and has not finished.
    Pending,
}

impl CallStatus {
    /// The status's name, as it is serialised (`success`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            CallStatus::Success => "success",
            CallStatus::Error => "error",
            CallStatus::Pending => "pending",
        }
    }
}

/// The permission a call is gated on and recorded under: `tool`, or
/// `tool.qualifier` for a call with an action or a qualifier the ability
/// derived. The one place the string is built: the gate looks it up, the
/// trail records it and the policy's listing names it this way.
pub(crate) fn permission(tool: &str, qualifier: Option<&str>) -> String {
    match qualifier {
        Some(qualifier) => {
            let mut permission = String::with_capacity(tool.len() + 1 + qualifier.len());
            permission.push_str(tool);
            permission.push('.');
            permission.push_str(qualifier);
            permission
        }
        None => tool.to_owned(),
    }
}

/// One call on the turn's action trail.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ActionRecord {
    /// The call's id.
    pub call_id: String,
    /// The ability called.
    pub tool: String,
    /// The action, for abilities with actions.
    pub action: Option<String>,
    /// The permission it was gated on (`tool` or `tool.action`).
    pub permission: String,
    /// What the gate decided.
    pub decision: GateDecision,
    /// How it ended.
    pub status: CallStatus,
    /// The error code, for an error.
    pub error_code: Option<String>,
    /// How long it took.
    pub duration: Duration,
    /// Whether it ran in the background.
    pub background: bool,
    /// Whether an earlier observation was reused instead of running it.
    pub reused: bool,
}

/// One call as the trail stores it: an [`ActionRecord`] whose names are
/// shared with the call rather than copied, since every call is recorded
/// and the copy only matters when someone reads the trail. Storing the
/// owned record instead (converting each entry through `to_record`) cost
/// 570 more instructions per call, 6,996 to 7,566 (+8%), by
/// `cargo xtask bench-dispatch --no-criterion --calls 2000`: the
/// difference between meeting the dispatch goal (0.9x rmcp) and not.
#[derive(Debug, Clone)]
pub(crate) struct TrailEntry {
    pub(crate) call_id: Name,
    pub(crate) tool: Name,
    pub(crate) action: Option<Name>,
    /// `None`: `tool`, or `tool.action` for a call with an action.
    pub(crate) permission: Option<String>,
    pub(crate) decision: GateDecision,
    pub(crate) status: CallStatus,
    /// The result's code, borrowed when it is a literal (as the
    /// dispatcher's own are) rather than copied on every error.
    pub(crate) error_code: Option<Cow<'static, str>>,
    pub(crate) duration: Timing,
    pub(crate) background: bool,
    pub(crate) reused: bool,
}

/// How long a call took: measured by the dispatcher as the two clock
/// readings, subtracted only when the record is read, or as given.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Timing {
    Measured {
        started: std::time::Instant,
        ended: std::time::Instant,
    },
    Given(Duration),
}

impl Timing {
    /// The call's duration.
    pub(crate) fn duration(self) -> Duration {
        match self {
            Timing::Measured { started, ended } => ended.saturating_duration_since(started),
            Timing::Given(duration) => duration,
        }
    }
}

impl TrailEntry {
    pub(crate) fn to_record(&self) -> ActionRecord {
        let permission = match &self.permission {
            Some(permission) => permission.clone(),
            None => permission(&self.tool, self.action.as_deref()),
        };
        ActionRecord {
            call_id: self.call_id.to_string(),
            tool: self.tool.to_string(),
            action: self.action.as_deref().map(str::to_owned),
            permission,
            decision: self.decision,
            status: self.status,
            error_code: self.error_code.as_deref().map(str::to_owned),
            duration: self.duration.duration(),
            background: self.background,
            reused: self.reused,
        }
    }
}

impl From<ActionRecord> for TrailEntry {
    fn from(record: ActionRecord) -> Self {
        Self {
            call_id: Name::Owned(record.call_id),
            tool: Name::Owned(record.tool),
            action: record.action.map(Name::Owned),
            permission: Some(record.permission),
            decision: record.decision,
            status: record.status,
            error_code: record.error_code.map(Cow::Owned),
            duration: Timing::Given(record.duration),
            background: record.background,
            reused: record.reused,
        }
    }
}

/// The calls made during one turn, in order. Cheap to clone; clones share.
#[derive(Debug, Clone, Default)]
pub struct ActionTrail {
    entries: Arc<Mutex<TrailEntries>>,
}

/// Inline room for the first entries: a turn's first call then records
/// without a heap allocation of its own. Entries are never removed: a
/// dispatched call finds its own by position.
type TrailEntries = smallvec::SmallVec<[TrailEntry; 2]>;

impl ActionTrail {
    fn entries(&self) -> std::sync::MutexGuard<'_, TrailEntries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends a record.
    pub fn record(&self, record: ActionRecord) {
        let _ = self.record_entry(record.into());
    }

    /// Appends an entry without copying its names; returns its position.
    pub(crate) fn record_entry(&self, entry: TrailEntry) -> usize {
        let mut entries = self.entries();
        entries.push(entry);
        entries.len() - 1
    }

    /// The record at `position` (see [`record_entry`](Self::record_entry)).
    pub(crate) fn record_at(&self, position: usize) -> Option<ActionRecord> {
        self.entries().get(position).map(TrailEntry::to_record)
    }

    /// Runs `change` on the latest entry of `call_id`; `false` when there is none.
    fn change_entry(&self, call_id: &str, change: impl FnOnce(&mut TrailEntry)) -> bool {
        let mut entries = self.entries();
        match entries
            .iter_mut()
            .rev()
            .find(|stored| &*stored.call_id == call_id)
        {
            Some(stored) => {
                change(stored);
                true
            }
            None => false,
        }
    }

    /// Replaces the entry of `call_id` with `entry`, names still shared.
    pub(crate) fn replace_entry(&self, call_id: &str, entry: TrailEntry) -> bool {
        self.change_entry(call_id, |stored| *stored = entry)
    }

    /// Replaces the record of `call_id` (e.g. when a background call ends).
    pub fn update(&self, call_id: &str, update: impl FnOnce(&mut ActionRecord)) -> bool {
        self.change_entry(call_id, |stored| {
            let mut record = stored.to_record();
            update(&mut record);
            *stored = record.into();
        })
    }

    /// A copy of every record so far.
    pub fn snapshot(&self) -> Vec<ActionRecord> {
        self.entries().iter().map(TrailEntry::to_record).collect()
    }

    /// How many calls were recorded.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether no call was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::{CallStatus, GateDecision};

    #[test]
    fn as_str_is_the_serialised_name() {
        use GateDecision::*;
        for decision in [
            Allowed, Approved, Rejected, Denied, Internal, Planned, NotReached,
        ] {
            assert_eq!(serde_json::json!(decision), decision.as_str());
        }
        for status in [CallStatus::Success, CallStatus::Error, CallStatus::Pending] {
            assert_eq!(serde_json::json!(status), status.as_str());
        }
    }
}
