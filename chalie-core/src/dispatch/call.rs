//! What goes into the dispatcher and what comes out.

use std::borrow::Cow;

use serde_json::Value;

use crate::turn::{ActionTrail, GateDecision, Name, TrailEntry};
use crate::{ToolResult, turn::ActionRecord};

/// One tool call as a model (or the framework) made it.
///
/// The name and id are borrowed or owned: a call built from a literal, or
/// from a provider's message the caller keeps, copies neither (the
/// dispatcher copies them only for what outlives the call, such as a
/// background task).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall<'a> {
    /// The provider's call id; the dispatcher makes one when absent.
    pub id: Option<Cow<'a, str>>,
    /// The tool name as called.
    pub name: Cow<'a, str>,
    /// The JSON arguments, framework fields (`act_summary`, `async`) included.
    pub arguments: Value,
}

impl<'a> ToolCall<'a> {
    /// A call of `name` (a `&str` or a `String`) with `arguments`.
    pub fn new(name: impl Into<Cow<'a, str>>, arguments: Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    /// Uses the provider's call id (a `&str` or a `String`).
    pub fn with_id(mut self, id: impl Into<Cow<'a, str>>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// What the dispatcher returns for one call.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Dispatched {
    /// The envelope the model reads. For a background call, first the
    /// receipt, later (through [`BackgroundCalls`](crate::dispatch::BackgroundCalls))
    /// the final envelope.
    pub envelope: String,
    /// The result the envelope was rendered from, e.g. for its media.
    pub result: ToolResult,
    /// The call's id, shared with its trail entry.
    pub(crate) call_id: Name,
    /// Where the call's record is: the record's strings are only copied
    /// out when [`record`](Self::record) is asked for.
    pub(crate) entry: Recorded,
    /// What the gate decided, for [`is_planned`](Self::is_planned).
    pub(crate) decision: GateDecision,
    /// Why the dispatcher refused to run it, when it did.
    pub(crate) refusal: Option<Refusal>,
}

/// Where a [`Dispatched`] finds its trail entry.
#[derive(Debug, Clone)]
pub(crate) enum Recorded {
    /// At this position of the turn's trail, which only ever grows. A
    /// handle rather than a copy: a copy of the entry would cost every
    /// call an allocation, a clone and a free.
    OnTrail(ActionTrail, usize),
    /// A copy: a background call's receipt, whose entry on the trail the
    /// final result replaces, and that final result itself.
    Copied(Box<TrailEntry>),
}

/// Why the dispatcher did not run a call: a typed reason for the host, beside
/// the error envelope the model reads. A call the ability itself failed is
/// not a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// No ability or external tool has the name (`unknown-tool`).
    UnknownTool,
    /// The tool exists but this turn may not reach it: not offered on the
    /// channel, not pinned, not activated by `find_tools`, or outside the
    /// channel's profile (`tool-not-available`).
    NotAvailable,
    /// The arguments did not validate (`invalid-arguments` and kin).
    InvalidArguments,
    /// The dispatcher lacks a permission tag the tool requires, declared
    /// on the ability (`#[ability(tags = [...])]`) or configured
    /// (`missing-permission-tag`).
    MissingTags,
    /// The session's rate limit, or the one the ability declares
    /// (`#[ability(rate_limit = "3/hour")]`), was reached (`rate-limited`),
    /// or could not be checked, which is not a waiver
    /// (`rate-limit-unavailable`).
    RateLimited,
    /// The permission policy denies it (`permission-denied`).
    Denied,
    /// A human rejected it, or nobody could be asked, or nobody answered
    /// in time (`approval-rejected`).
    Rejected,
    /// A write in a session in `plan` mode (`plan-mode-read-only`).
    PlanBlocked,
    /// A write in `plan_collect` that could not be added to the plan.
    PlanUnavailable,
    /// A write in a session whose start could not be recorded, so a resumed
    /// run could not tell whether it ran (`write-not-recorded`).
    NotRecorded,
    /// The ability derived a permission qualifier no policy could name
    /// (`invalid-permission`): its bug, so the gate cannot decide and the
    /// call does not run.
    InvalidPermission,
}

impl Dispatched {
    /// The call's id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// What was recorded on the turn's action trail for this call.
    pub fn record(&self) -> ActionRecord {
        match &self.entry {
            // A trail only grows, so the position is always there; were
            // that ever broken, the call still reads as what it was.
            Recorded::OnTrail(trail, position) => trail
                .record_at(*position)
                .unwrap_or_else(|| self.unrecorded()),
            Recorded::Copied(entry) => entry.to_record(),
        }
    }

    /// The record as far as the result knows it, without its trail entry.
    fn unrecorded(&self) -> ActionRecord {
        ActionRecord {
            call_id: self.call_id.to_string(),
            tool: String::new(),
            action: None,
            permission: String::new(),
            decision: self.decision,
            status: match self.result.is_success() {
                true => crate::turn::CallStatus::Success,
                false => crate::turn::CallStatus::Error,
            },
            error_code: self
                .result
                .as_error()
                .map(|error| error.code().as_str().to_owned()),
            duration: std::time::Duration::ZERO,
            background: false,
            reused: false,
        }
    }

    /// Why the dispatcher refused to run the call, if it did.
    pub fn refusal(&self) -> Option<Refusal> {
        self.refusal
    }

    /// Whether the call was added to the session's plan instead of running
    /// (`plan_collect`); the result tells the model which step it became.
    pub fn is_planned(&self) -> bool {
        self.decision == GateDecision::Planned
    }
}

impl PartialEq for Dispatched {
    fn eq(&self, other: &Self) -> bool {
        self.envelope == other.envelope
            && self.result == other.result
            && self.record() == other.record()
    }
}
