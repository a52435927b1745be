//! What the permission gate sees of a session: its mode, its approvals and
//! its plan. The session implements the dispatcher's gate hook and puts it
//! on each turn it builds; the dispatcher never looks into the session.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::dispatch::{GateHook, HookError};
use crate::session::event::Event;
use crate::session::event_log::EventLog;
use crate::session::mode::{Mode, ModeCell};
use crate::session::run::shared::Core;
use crate::session::run::start::Starts;
use crate::session::store::{ApprovalRecord, ApprovalState, PlanStep, ToolCallStatus};
use crate::{dispatch::Approval, dispatch::ApprovalRequest};

/// The mode a run's calls are gated in: the session's live mode, which a
/// change reaches at the next call, or `auto` for a plan being executed.
#[derive(Debug, Clone)]
pub(crate) struct RunMode {
    live: ModeCell,
    /// A plan being executed runs its steps as `auto`, whatever the mode.
    plan_override: Option<Mode>,
}

impl RunMode {
    pub(crate) fn new(live: ModeCell, plan_override: Option<Mode>) -> Self {
        Self {
            live,
            plan_override,
        }
    }

    pub(crate) fn get(&self) -> Mode {
        self.plan_override.unwrap_or_else(|| self.live.get())
    }
}

/// The session's side of the gate, passed with each call the run
/// dispatches.
pub(crate) struct SessionGate {
    pub(crate) core: Arc<Core>,
    pub(crate) session_id: String,
    pub(crate) run_id: String,
    pub(crate) mode: RunMode,
    pub(crate) events: EventLog,
    /// The run's calls' `tool.started`, sent when each call runs.
    pub(crate) starts: Starts,
}

impl GateHook for SessionGate {
    fn mode(&self) -> Mode {
        self.mode.get()
    }

    fn approval_timeout(&self) -> Duration {
        self.core.config.approval_timeout
    }

    /// Asks the human through the store-backed approval: an answer already
    /// given (e.g. while the process was down) is used at once; otherwise
    /// `tool.approval_required` goes out and the run waits for the answer.
    fn ask<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<Approval, HookError>> {
        Box::pin(async move {
            let store = &self.core.store;
            let key = (self.run_id.clone(), request.call_id.clone());
            // Register before reading the store, so an answer given in
            // between is not lost.
            let answer = self.core.approvals.wait(key.clone());
            let existing = store
                .approval(&self.run_id, &request.call_id)
                .map_err(|error| error.to_string())?;
            match existing.map(|approval| approval.state) {
                Some(ApprovalState::Approved) => return Ok(self.answered(request, true)),
                Some(ApprovalState::Rejected | ApprovalState::TimedOut) => {
                    return Ok(self.answered(request, false));
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
            match answer.await {
                Ok(approved) => Ok(self.answered(request, approved)),
                // The waiter was replaced by a resumed run of the same call,
                // which starts it there if the answer is yes.
                Err(_) => {
                    self.starts.discard(&request.call_id);
                    Err("the approval moved to a resumed run".into())
                }
            }
        })
    }

    fn timed_out(&self, request: &ApprovalRequest, waited: Duration) -> Option<Approval> {
        let store = &self.core.store;
        self.core
            .approvals
            .forget(&(self.run_id.clone(), request.call_id.clone()));
        // An answer that raced the timer wins if it was stored first.
        let decided = store
            .decide_approval(&self.run_id, &request.call_id, ApprovalState::TimedOut)
            .unwrap_or(true);
        if !decided && let Ok(Some(approval)) = store.approval(&self.run_id, &request.call_id) {
            return Some(self.answered(request, approval.state == ApprovalState::Approved));
        }
        self.starts.discard(&request.call_id);
        self.events.push(Event::ToolApprovalTimeout {
            tool_key: request.tool.clone(),
            tool_call_id: request.call_id.clone(),
            timeout_ms: millis(waited),
        });
        None
    }

    /// Records the write as the plan's next step.
    fn capture(&self, call_id: &str, tool: &str, input: &Value) -> Result<usize, HookError> {
        let store = &self.core.store;
        let index = store
            .plan(&self.session_id)
            .map_err(|error| error.to_string())?
            .len();
        let step = PlanStep {
            index,
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            input: input.clone(),
        };
        store
            .add_plan_step(&self.session_id, &step)
            .map_err(|error| error.to_string())?;
        self.starts.send(call_id, &self.events);
        self.events.push(Event::PlanStepAdded {
            plan_id: self.session_id.clone(),
            step_index: index,
            tool_key: tool.to_owned(),
            call_id: call_id.to_owned(),
            input: input.clone(),
        });
        Ok(index)
    }

    fn running(&self, call_id: &str) {
        self.starts.send(call_id, &self.events);
    }

    /// Marks the call's record `executing` before the write's body runs;
    /// a resumed run reads the mark and does not run the write again.
    fn executing(&self, call_id: &str) -> Result<(), HookError> {
        self.core
            .store
            .set_tool_call_status(&self.run_id, call_id, ToolCallStatus::Executing)
            .map(|_| ())
            .map_err(|error| error.to_string())
    }
}

impl SessionGate {
    fn answered(&self, request: &ApprovalRequest, approved: bool) -> Approval {
        self.core
            .approvals
            .forget(&(self.run_id.clone(), request.call_id.clone()));
        self.events.push(Event::ToolApprovalResponse {
            tool_call_id: request.call_id.clone(),
            approved,
        });
        // Approved, the call starts when the gate lets it run; rejected,
        // it never does.
        if !approved {
            self.starts.discard(&request.call_id);
        }
        if approved {
            Approval::Approved
        } else {
            Approval::Rejected
        }
    }
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
