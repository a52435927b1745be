//! What the permission gate sees of a session: its mode, its approvals and
//! its plan. The session puts a [`SessionGate`] on each turn it builds; the
//! dispatcher's gate finds it there (see `dispatch/gate.rs`).

use std::time::Duration;

use serde_json::{Value, json};

use super::core::Core;
use super::event::Event;
use super::mode::{Mode, ModeCell};
use super::store::{ApprovalRecord, ApprovalState, PlanStep};
use super::stream::EventLog;
use crate::{ApprovalRequest, ToolResult};
use std::sync::Arc;

/// The session's side of the gate, carried by the run's turn.
pub(crate) struct SessionGate {
    pub(crate) core: Arc<Core>,
    pub(crate) session_id: String,
    pub(crate) run_id: String,
    pub(crate) mode: ModeCell,
    /// A plan being executed runs its steps as `auto`, whatever the mode.
    pub(crate) mode_override: Option<Mode>,
    pub(crate) events: EventLog,
}

impl SessionGate {
    /// The mode the gate applies now.
    pub(crate) fn mode(&self) -> Mode {
        self.mode_override.unwrap_or_else(|| self.mode.get())
    }

    /// Asks the human through the store-backed approval: an answer already
    /// given (e.g. while the process was down) is used at once; otherwise
    /// `tool.approval_required` goes out and the run waits, at most the
    /// session's approval timeout.
    pub(crate) async fn ask(&self, request: &ApprovalRequest) -> Result<(), String> {
        let store = &self.core.store;
        let key = (self.run_id.clone(), request.call_id.clone());
        // Register before reading the store, so an answer given in between
        // is not lost.
        let answer = self.core.approvals.wait(key.clone());
        let existing = store
            .approval(&self.run_id, &request.call_id)
            .map_err(|error| error.to_string())?;
        match existing.map(|approval| approval.state) {
            Some(ApprovalState::Approved) => return self.answered(request, true),
            Some(ApprovalState::Rejected | ApprovalState::TimedOut) => {
                return self.answered(request, false);
            }
            Some(ApprovalState::Pending) => {}
            None => store
                .put_approval(&ApprovalRecord {
                    run_id: self.run_id.clone(),
                    session_id: self.session_id.clone(),
                    call_id: request.call_id.clone(),
                    tool: request.tool.clone(),
                    input: request.arguments.clone(),
                    state: ApprovalState::Pending,
                })
                .map_err(|error| error.to_string())?,
        }
        self.events.push(Event::ToolApprovalRequired {
            tool_key: request.tool.clone(),
            tool_call_id: request.call_id.clone(),
            input: request.arguments.clone(),
        });
        let timeout = self.core.config.approval_timeout;
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(approved)) => self.answered(request, approved),
            // The waiter was replaced by a resumed run of the same call.
            Ok(Err(_)) => Err("the approval moved to a resumed run".into()),
            Err(_elapsed) => {
                self.core.approvals.forget(&key);
                // An answer that raced the timer wins if it was stored first.
                let decided = store
                    .decide_approval(&self.run_id, &request.call_id, ApprovalState::TimedOut)
                    .map_err(|error| error.to_string())?;
                if !decided
                    && let Ok(Some(approval)) = store.approval(&self.run_id, &request.call_id)
                {
                    return self.answered(request, approval.state == ApprovalState::Approved);
                }
                self.events.push(Event::ToolApprovalTimeout {
                    tool_key: request.tool.clone(),
                    tool_call_id: request.call_id.clone(),
                    timeout_ms: millis(timeout),
                });
                Err(format!("no answer within {}s", timeout.as_secs_f64()))
            }
        }
    }

    fn answered(&self, request: &ApprovalRequest, approved: bool) -> Result<(), String> {
        self.core
            .approvals
            .forget(&(self.run_id.clone(), request.call_id.clone()));
        self.events.push(Event::ToolApprovalResponse {
            tool_call_id: request.call_id.clone(),
            approved,
        });
        if approved {
            Ok(())
        } else {
            Err("the user declined".into())
        }
    }

    /// `plan_collect`: records the write as the plan's next step and
    /// returns what the model reads instead of the write's result.
    pub(crate) fn capture(&self, call_id: &str, tool: &str, arguments: &Value) -> ToolResult {
        let store = &self.core.store;
        let index = match store.plan(&self.session_id) {
            Ok(plan) => plan.len(),
            Err(error) => return store_failed(&error.to_string()),
        };
        let step = PlanStep {
            index,
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            input: arguments.clone(),
        };
        if let Err(error) = store.add_plan_step(&self.session_id, &step) {
            return store_failed(&error.to_string());
        }
        self.events.push(Event::PlanStepAdded {
            step_index: index,
            tool_key: tool.to_owned(),
            call_id: call_id.to_owned(),
            input: arguments.clone(),
        });
        ToolResult::success(json!({ "addedToPlan": true, "step": index + 1 }))
            .with_metadata("added_to_plan", true)
    }
}

/// `plan` mode: what the model reads for a blocked write.
pub(crate) fn plan_blocked(tool: &str) -> ToolResult {
    ToolResult::error(
        "plan-mode-read-only",
        format!("`{tool}` changes data, and this session is in plan mode: writes are blocked"),
        "do not retry; describe this step in your plan, it can run once the user leaves plan mode",
    )
    .with_metadata("blocked", true)
    .with_metadata("reason", "plan_mode_read_only")
    .with_retry(crate::Retry::Never)
}

fn store_failed(detail: &str) -> ToolResult {
    ToolResult::error(
        "plan-unavailable",
        format!("the step could not be added to the plan: {detail}"),
        "do not retry; tell the user the plan could not be saved",
    )
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
