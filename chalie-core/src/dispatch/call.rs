//! What goes into the dispatcher and what comes out.

use std::borrow::Cow;

use serde_json::Value;

use crate::turn::TrailEntry;
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
    /// The trail's entry, names shared with the call: the record's strings
    /// are only copied out when [`record`](Self::record) is asked for.
    /// Boxed: the result moves through every layer of the call, and a
    /// short-lived box is cheaper than moving the entry's bytes each time.
    pub(crate) entry: Box<TrailEntry>,
    /// Why the dispatcher refused to run it, when it did.
    pub(crate) refusal: Option<Refusal>,
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
    /// The dispatcher lacks a permission tag the tool requires.
    MissingTags,
    /// The session's rate limit was reached (`rate-limited`).
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
}

impl Dispatched {
    /// The call's id.
    pub fn call_id(&self) -> &str {
        &self.entry.call_id
    }

    /// What was recorded on the turn's action trail for this call.
    pub fn record(&self) -> ActionRecord {
        self.entry.to_record()
    }

    /// Why the dispatcher refused to run the call, if it did.
    pub fn refusal(&self) -> Option<Refusal> {
        self.refusal
    }

    /// Whether the call was added to the session's plan instead of running
    /// (`plan_collect`); the result tells the model which step it became.
    pub fn is_planned(&self) -> bool {
        self.entry.decision == crate::turn::GateDecision::Planned
    }
}

impl PartialEq for Dispatched {
    fn eq(&self, other: &Self) -> bool {
        self.envelope == other.envelope
            && self.result == other.result
            && self.record() == other.record()
    }
}
