//! Step 3: the permission gate.
//!
//! A flat lookup of the permission (`tool` or `tool.action`, derived by
//! the dispatcher from the tool and its validated action) on the turn's
//! channel. `ask` goes to the approver on a channel with a human and is
//! `deny` elsewhere. Abilities declared `internal` are not gated.
//!
//! Session modes compose here, between the policy lookup and the
//! approver, when the turn carries a session's gate (see
//! [`crate::session`]): a mode may only tighten the setting the policy
//! gave, never loosen it, and never holds back a read; the decision
//! recorded stays one of [`GateDecision`]'s. For a write:
//!
//! | policy | `approval` | `auto` | `plan` | `plan_collect` |
//! |---|---|---|---|---|
//! | `deny` | denied | denied | denied | denied |
//! | `ask` | asks | asks | blocked (`denied`) | captured (`denied`: not run now) |
//! | `allow` | asks | runs | blocked (`denied`) | captured (`denied`: not run now) |
//!
//! A read, and an `internal` ability or setting, is decided by the policy
//! alone in every mode. In a session the human is asked through the
//! session (events, the store-backed approval, its timeout), not the
//! dispatcher's approver.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde_json::Value;

use super::approver::{Approval, ApprovalRequest};
use super::errors;
use super::flow::CallState;
use super::{Dispatcher, Setting};
use crate::session::{SessionGate, plan_blocked};
use crate::{Effect, GateDecision, ToolResult, Turn};

/// What the gate decided.
pub(crate) enum Gate {
    /// Run it.
    Pass(GateDecision),
    /// Do not run it; tell the model this.
    Block(GateDecision, ToolResult),
}

impl Dispatcher {
    pub(crate) async fn gate(
        &self,
        turn: &Turn,
        state: &CallState,
        effect: Effect,
        internal: bool,
        summary: Option<&str>,
        arguments: &Value,
    ) -> Gate {
        if internal {
            return Gate::Pass(GateDecision::Internal);
        }
        let setting = self
            .policy
            .lookup(turn.channel(), &state.tool, state.action.as_deref());
        if let Some(session) = turn.extension::<SessionGate>() {
            // Boxed: the session path keeps the plain call's future small.
            return Box::pin(
                self.session_gate(session, turn, state, effect, setting, summary, arguments),
            )
            .await;
        }
        match setting {
            Setting::Allow => Gate::Pass(GateDecision::Allowed),
            Setting::Internal => Gate::Pass(GateDecision::Internal),
            Setting::Deny => Gate::Block(GateDecision::Denied, errors::denied(&state.permission())),
            Setting::Ask => {
                let permission = state.permission();
                let request = ApprovalRequest {
                    call_id: state.call_id.to_string(),
                    session_id: turn.session_id().to_owned(),
                    tool: state.tool.clone(),
                    action: state.action.clone(),
                    permission: permission.clone(),
                    summary: summary.map(str::to_owned),
                    arguments: arguments.clone(),
                };
                // Boxed: the rare path keeps every call's future small.
                match Box::pin(self.ask(request)).await {
                    Ok(()) => Gate::Pass(GateDecision::Approved),
                    Err(why) => {
                        Gate::Block(GateDecision::Rejected, errors::rejected(&permission, &why))
                    }
                }
            }
        }
    }

    /// The gate of a call in a session: the policy, tightened by the mode.
    #[expect(
        clippy::too_many_arguments,
        reason = "the gate's inputs, each read once; a struct would only rename them"
    )]
    async fn session_gate(
        &self,
        session: &SessionGate,
        turn: &Turn,
        state: &CallState,
        effect: Effect,
        setting: Setting,
        summary: Option<&str>,
        arguments: &Value,
    ) -> Gate {
        use crate::session::Mode;
        let ask = match setting {
            Setting::Deny => {
                return Gate::Block(GateDecision::Denied, errors::denied(&state.permission()));
            }
            Setting::Internal => return Gate::Pass(GateDecision::Internal),
            Setting::Ask => true,
            Setting::Allow => false,
        };
        let ask = match (effect, session.mode()) {
            (Effect::Read, _) => ask,
            (Effect::Write, Mode::Approval) => true,
            (Effect::Write, Mode::Auto) => ask,
            (Effect::Write, Mode::Plan) => {
                return Gate::Block(GateDecision::Denied, plan_blocked(&state.tool));
            }
            (Effect::Write, Mode::PlanCollect) => {
                let mut input = arguments.clone();
                if let (Some(action), Value::Object(object)) = (&state.action, &mut input) {
                    object
                        .entry("action")
                        .or_insert_with(|| Value::String(action.clone()));
                }
                let captured = session.capture(&state.call_id, &state.tool, &input);
                return Gate::Block(GateDecision::Denied, captured);
            }
        };
        if !ask {
            return Gate::Pass(GateDecision::Allowed);
        }
        let permission = state.permission();
        if !turn.channel().has_human() {
            let why = "nobody on this channel can approve it";
            return Gate::Block(GateDecision::Rejected, errors::rejected(&permission, why));
        }
        let request = ApprovalRequest {
            call_id: state.call_id.to_string(),
            session_id: turn.session_id().to_owned(),
            tool: state.tool.clone(),
            action: state.action.clone(),
            permission: permission.clone(),
            summary: summary.map(str::to_owned),
            arguments: arguments.clone(),
        };
        match session.ask(&request).await {
            Ok(()) => Gate::Pass(GateDecision::Approved),
            Err(why) => Gate::Block(GateDecision::Rejected, errors::rejected(&permission, &why)),
        }
    }

    /// Asks the approver, within the timeout; every failure is a rejection.
    async fn ask(&self, request: ApprovalRequest) -> Result<(), String> {
        let Some(approver) = &self.approver else {
            return Err("no approver is configured to ask the user".into());
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return Err("there is no async runtime to wait for the answer".into());
        }
        let timeout = self.approval_timeout;
        // Building the timer panics on a runtime without a time driver;
        // that is a configuration mistake, reported as a rejection.
        let asked = std::panic::catch_unwind(AssertUnwindSafe(|| {
            tokio::time::timeout(
                timeout,
                AssertUnwindSafe(approver.approve(request)).catch_unwind(),
            )
        }));
        let Ok(asked) = asked else {
            return Err("the runtime has no timer to bound the wait".into());
        };
        match asked.await {
            Ok(Ok(Approval::Approved)) => Ok(()),
            Ok(Ok(Approval::Rejected)) => Err("the user declined".into()),
            Ok(Err(_panic)) => Err("asking the user failed".into()),
            Err(_elapsed) => Err(format!("no answer within {}s", timeout.as_secs_f64())),
        }
    }
}
