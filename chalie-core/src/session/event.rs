//! The typed events of a run, as a UI renders them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the agent is doing, for a status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Waiting for the model to decide what to do.
    Planning,
    /// Running tool calls.
    ExecutingTool,
    /// The model is reading tool results.
    ReadingResult,
    /// Checking the model's answer before it is final.
    Verifying,
}

/// What a tool card shows while the call runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// The model's `act_summary`, else the ability's tooltip, else its name.
    pub label: String,
}

/// An error as a tool card shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventError {
    /// The kebab-case error code (`approval-rejected`, `plan-mode-read-only`).
    pub code: String,
    /// What went wrong.
    pub message: String,
}

/// One event of a run. Serialised as an object whose `type` is the event's
/// [`name`](Event::name), with camelCase fields:
///
/// ```
/// use chalie_core::session::{Activity, Event};
///
/// let event = Event::ToolStarted {
///     tool_key: "lookup".into(),
///     call_id: "call-1".into(),
///     activity: Activity { label: "Looking it up".into() },
/// };
/// assert_eq!(event.name(), "tool.started");
/// assert_eq!(
///     serde_json::to_string(&event).unwrap(),
///     r#"{"type":"tool.started","toolKey":"lookup","callId":"call-1","activity":{"label":"Looking it up"}}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum Event {
    /// Discovery activated abilities; their descriptors reach the next request.
    #[serde(rename = "capability.resolved")]
    CapabilityResolved {
        /// The newly active abilities, in activation order.
        tools: Vec<String>,
    },
    /// In `plan_collect` mode, a write was captured as a plan step.
    #[serde(rename = "plan.step_added")]
    PlanStepAdded {
        /// The plan the step joined. A session holds one plan at a time, so
        /// this is the session's id: `GET /sessions/{planId}/plan` reads
        /// it, `POST /sessions/{planId}/plan/execute` runs it.
        plan_id: String,
        /// The step's position in the plan, from 0.
        step_index: usize,
        /// The ability the step calls.
        tool_key: String,
        /// The call that was captured.
        call_id: String,
        /// The validated arguments the step will run with.
        input: Value,
    },
    /// A tool call passed every check and any approval: it runs now. A
    /// call that asked comes here after `tool.approval_response`; a call
    /// rejected (or timed out) never does. A call refused before the gate
    /// (an unknown tool, bad arguments, a denial) is started and failed at
    /// once, so its card opens and closes.
    #[serde(rename = "tool.started")]
    ToolStarted {
        /// The ability called.
        tool_key: String,
        /// The call's id.
        call_id: String,
        /// What the card shows.
        activity: Activity,
    },
    /// A running ability reported progress through its `Turn`.
    #[serde(rename = "tool.progress")]
    ToolProgress {
        /// The ability reporting.
        tool_key: String,
        /// The call reporting.
        call_id: String,
        /// What it said.
        message: String,
    },
    /// A tool call succeeded.
    #[serde(rename = "tool.completed")]
    ToolCompleted {
        /// The ability called.
        tool_key: String,
        /// The call's id.
        call_id: String,
        /// How long the dispatcher took, in milliseconds.
        execution_ms: u64,
        /// Always `true`: a failure is [`Event::ToolFailed`].
        success: bool,
        /// An earlier read of the same run was reused instead of running it.
        #[serde(default, skip_serializing_if = "is_false")]
        reused: bool,
        /// The write was captured as a plan step, not run.
        #[serde(default, skip_serializing_if = "is_false")]
        added_to_plan: bool,
        /// What the ability declared for the call's card
        /// ([`ToolResult::with_card`](crate::ToolResult::with_card)):
        /// bounded and sanitized, never the envelope the model read.
        /// Absent when the ability declared none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        card: Option<Value>,
    },
    /// A tool call failed or was refused; the model reads why.
    #[serde(rename = "tool.failed")]
    ToolFailed {
        /// The ability called.
        tool_key: String,
        /// The call's id.
        call_id: String,
        /// How long the dispatcher took, in milliseconds.
        execution_ms: u64,
        /// What went wrong.
        error: EventError,
        /// The mode blocked it (`plan` mode).
        #[serde(default, skip_serializing_if = "is_false")]
        blocked: bool,
        /// Why it was blocked: `plan_mode_read_only`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The run goes on without tools from here (the session's rate limit).
    #[serde(rename = "tool.degraded")]
    ToolDegraded {
        /// The call that hit the limit.
        tool_key: String,
        /// Its id.
        call_id: String,
        /// Why: `rate_limited`.
        reason: String,
    },
    /// A write waits for the human (`approval` mode, or a policy `ask`).
    #[serde(rename = "tool.approval_required")]
    ToolApprovalRequired {
        /// The ability to run.
        tool_key: String,
        /// The call waiting; approve or reject it by this id.
        tool_call_id: String,
        /// The validated arguments.
        input: Value,
    },
    /// The human answered.
    #[serde(rename = "tool.approval_response")]
    ToolApprovalResponse {
        /// The call answered.
        tool_call_id: String,
        /// Whether it may run.
        approved: bool,
    },
    /// Nobody answered in time: the call is rejected.
    #[serde(rename = "tool.approval_timeout")]
    ToolApprovalTimeout {
        /// The ability that did not run.
        tool_key: String,
        /// The call.
        tool_call_id: String,
        /// How long the run waited, in milliseconds.
        timeout_ms: u64,
    },
    /// A piece of the answer's text.
    #[serde(rename = "message.delta")]
    MessageDelta {
        /// The new text.
        delta: String,
    },
    /// The answer is complete.
    #[serde(rename = "message.completed")]
    MessageCompleted {
        /// The whole answer.
        content: String,
    },
    /// The text streamed so far is withdrawn: the model is asked to answer
    /// again, and the `message.delta`s that follow replace it (a planning
    /// run's plan missing sections). Not the end of the message.
    #[serde(rename = "message.discarded")]
    MessageDiscarded {
        /// The text withdrawn.
        content: String,
        /// Why: `plan_incomplete`.
        reason: String,
    },
    /// The run stopped before a final answer; this is what there is. The
    /// message's last event: only `run.failed` and the settlement follow.
    #[serde(rename = "message.partially_completed")]
    MessagePartiallyCompleted {
        /// The text so far (may be empty).
        content: String,
        /// Why: `iteration_limit` or `model_error`.
        reason: String,
    },
    /// The run began: always the first event, carrying the ids a client
    /// needs before anything else happens.
    #[serde(rename = "run.started")]
    RunStarted {
        /// The run.
        run_id: String,
        /// Its session.
        session_id: String,
    },
    /// The model cannot call tools (`Model::supports_tools` is false): the
    /// run offers none and the model answers conversationally. Not an
    /// error; in such a run, the event right after `run.started`.
    #[serde(rename = "run.conversational")]
    RunConversational {
        /// Why no tools are offered.
        reason: String,
    },
    /// The run failed.
    #[serde(rename = "run.failed")]
    RunFailed {
        /// What went wrong.
        error: String,
    },
    /// The run is over: always the last event.
    #[serde(rename = "run.settlement.completed")]
    RunSettlementCompleted {
        /// The run.
        run_id: String,
        /// `completed`, `partial`, `failed`.
        status: String,
        /// How many tool calls the run made.
        tool_calls: usize,
        /// How many model requests it made.
        iterations: usize,
    },
    /// The agent's phase changed.
    #[serde(rename = "agent.phase.changed")]
    AgentPhaseChanged {
        /// The new phase.
        phase: Phase,
    },
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl Event {
    /// The event's wire name, e.g. `tool.started`; handy to assert a run:
    /// `events.iter().map(Event::name)`.
    pub fn name(&self) -> &'static str {
        match self {
            Event::CapabilityResolved { .. } => "capability.resolved",
            Event::PlanStepAdded { .. } => "plan.step_added",
            Event::ToolStarted { .. } => "tool.started",
            Event::ToolProgress { .. } => "tool.progress",
            Event::ToolCompleted { .. } => "tool.completed",
            Event::ToolFailed { .. } => "tool.failed",
            Event::ToolDegraded { .. } => "tool.degraded",
            Event::ToolApprovalRequired { .. } => "tool.approval_required",
            Event::ToolApprovalResponse { .. } => "tool.approval_response",
            Event::ToolApprovalTimeout { .. } => "tool.approval_timeout",
            Event::MessageDelta { .. } => "message.delta",
            Event::MessageCompleted { .. } => "message.completed",
            Event::MessageDiscarded { .. } => "message.discarded",
            Event::MessagePartiallyCompleted { .. } => "message.partially_completed",
            Event::RunStarted { .. } => "run.started",
            Event::RunConversational { .. } => "run.conversational",
            Event::RunFailed { .. } => "run.failed",
            Event::RunSettlementCompleted { .. } => "run.settlement.completed",
            Event::AgentPhaseChanged { .. } => "agent.phase.changed",
        }
    }

    /// The event as JSON text, e.g. for an SSE `data:` line.
    pub fn to_json(&self) -> String {
        // Every field is a string, number, bool or JSON value: this cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| format!("{{\"type\":\"{}\"}}", self.name()))
    }

    /// Whether this is the run's last event.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Event::RunSettlementCompleted { .. })
    }
}
