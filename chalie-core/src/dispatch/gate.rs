//! The **gate** step ([the steps](super::Dispatcher#the-steps-of-a-call)).
//!
//! A flat lookup of the permission (`tool` or `tool.qualifier`, built by
//! [`permission`](crate::turn::permission)) on the turn's channel,
//! tightened by the mode of the [`GateHook`] the call was dispatched with
//! (a session's; a call without one is `auto` with the dispatcher's
//! approver), as [the gate table](crate::session#modes-and-the-permission-gate)
//! says: it has its one home there, with the sessions whose modes it
//! reads. There is one way to ask: the hook's `ask`, bounded by its
//! timeout.

use std::ops::Deref;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt;
use serde_json::{Value, json};

use super::approver::{Approval, ApprovalRequest};
use super::call::Refusal;
use super::call_state::{CallState, Declared};
use super::errors;
use super::hook::{ApproverGate, GateHook, HookError};
use super::mode::Mode;
use super::remote::RemoteApproval;
use super::{Dispatcher, Setting};
use crate::{BoxFuture, Effect, ToolResult, Turn, turn::GateDecision};

/// What the gate decided.
pub(crate) enum Gate {
    /// Run it.
    Pass(GateDecision),
    /// Do not run it; tell the model this.
    Block(GateDecision, Refusal, ToolResult),
    /// Added to the plan; the model reads which step it became.
    Planned(ToolResult),
}

/// What the call still needs once the policy and the mode spoke.
enum Need {
    /// Nothing: run it.
    Nothing(GateDecision),
    /// A human's yes.
    Approval,
}

/// Either hook; the plain turn's keeps the common call's future small.
enum Hook<'a> {
    Session(&'a dyn GateHook),
    Plain(ApproverGate<'a>),
}

impl Hook<'_> {
    fn mode(&self) -> Mode {
        match self {
            Hook::Session(hook) => hook.mode(),
            Hook::Plain(plain) => plain.mode(),
        }
    }
}

/// A question the gate still has to ask before it decides: the approval,
/// bounded by its timeout. Boxed, so that the common call, which asks
/// nobody, carries none of its state.
pub(crate) type Asking<'a> = BoxFuture<'a, Gate>;

impl Dispatcher {
    /// Decides the call at once, or returns the question to await first.
    #[allow(clippy::too_many_arguments)] // the call's parts, borrowed where each lives
    pub(crate) fn gate<'a>(
        &'a self,
        turn: &'a Turn,
        hook: Option<&'a dyn GateHook>,
        state: &CallState<'_>,
        Declared {
            effect, internal, ..
        }: Declared,
        summary: Option<&str>,
        arguments: &Value,
    ) -> Result<Gate, Asking<'a>> {
        // An ability declared `internal` is the framework's own (discovery,
        // memory): the policy does not gate it, the mode still does.
        let setting = match internal {
            true => Setting::Internal,
            false => self.policy.lookup(
                turn.channel(),
                &state.tool,
                state.position,
                state.qualifier(),
            ),
        };
        // `ask` is `deny` where nobody can answer, unless the caller will
        // ask its user a round trip later; only then is it looked up again.
        let setting = match setting {
            Setting::Deny
                if !turn.channel().has_human()
                    && turn.extension::<RemoteApproval>().is_some()
                    && self
                        .policy
                        .written(turn.channel(), &state.tool, state.qualifier())
                        == Setting::Ask =>
            {
                Setting::Ask
            }
            setting => setting,
        };
        if setting == Setting::Deny {
            return Ok(Gate::Block(
                GateDecision::Denied,
                Refusal::Denied,
                errors::denied(&state.permission()),
            ));
        }
        let hook = match hook {
            Some(hook) => Hook::Session(hook),
            None => Hook::Plain(ApproverGate {
                approver: self.approver.as_ref(),
                timeout: self.approval_timeout,
            }),
        };
        let internal = setting == Setting::Internal;
        let need = match (effect, hook.mode()) {
            (Effect::Write, Mode::Plan) => {
                return Ok(Gate::Block(
                    GateDecision::Denied,
                    Refusal::PlanBlocked,
                    errors::plan_blocked(&state.tool),
                ));
            }
            (Effect::Write, Mode::PlanCollect) => {
                let Hook::Session(hook) = hook else {
                    // Only a session's hook collects plans.
                    return Ok(Gate::Block(
                        GateDecision::Denied,
                        Refusal::PlanUnavailable,
                        errors::plan_unavailable("this turn has no session to keep a plan"),
                    ));
                };
                return Ok(capture(hook, state, arguments));
            }
            _ if internal => Need::Nothing(GateDecision::Internal),
            (_, _) if setting == Setting::Ask => Need::Approval,
            (Effect::Write, Mode::Approval) => Need::Approval,
            _ => Need::Nothing(GateDecision::Allowed),
        };
        if let Need::Nothing(decision) = need {
            return Ok(executing(
                &hook,
                effect,
                &state.call_id,
                &state.tool,
                decision,
            ));
        }
        let permission = state.permission();
        let request = |permission: String| ApprovalRequest {
            call_id: state.call_id.to_string(),
            session_id: turn.session_id().to_owned(),
            tool: state.tool.to_string(),
            action: state.action.clone(),
            permission,
            summary: summary.map(str::to_owned),
            arguments: arguments.clone(),
        };
        if !turn.channel().has_human() {
            // Nobody here can answer, unless the caller asks its user a
            // round trip later (an MCP client that answers input requests).
            return Ok(match turn.extension::<RemoteApproval>() {
                None => Gate::Block(
                    GateDecision::Rejected,
                    Refusal::Rejected,
                    errors::rejected(&permission, "nobody on this channel can approve it"),
                ),
                Some(remote @ RemoteApproval::Deferred(_)) => {
                    let blocked = errors::rejected(&permission, "the user is being asked");
                    remote.defer(request(permission));
                    Gate::Block(GateDecision::Rejected, Refusal::Rejected, blocked)
                }
                // The caller checked the answer is about this very call.
                Some(RemoteApproval::Answered(Approval::Approved)) => executing(
                    &hook,
                    effect,
                    &state.call_id,
                    &state.tool,
                    GateDecision::Approved,
                ),
                Some(RemoteApproval::Answered(Approval::Rejected)) => Gate::Block(
                    GateDecision::Rejected,
                    Refusal::Rejected,
                    errors::rejected(&permission, "the user declined"),
                ),
            });
        }
        let request = request(permission);
        Err(Box::pin(async move {
            match ask(&hook, &request).await {
                Ok(Approval::Approved) => executing(
                    &hook,
                    effect,
                    &request.call_id,
                    &request.tool,
                    GateDecision::Approved,
                ),
                Ok(Approval::Rejected) => Gate::Block(
                    GateDecision::Rejected,
                    Refusal::Rejected,
                    errors::rejected(&request.permission, "the user declined"),
                ),
                Err(why) => Gate::Block(
                    GateDecision::Rejected,
                    Refusal::Rejected,
                    errors::rejected(&request.permission, &why),
                ),
            }
        }))
    }
}

/// A call about to run in a session: a write is recorded first (see
/// [`GateHook::executing`]; when it cannot be, it does not run), then the
/// session hears that the call runs ([`GateHook::running`]).
///
/// The call's id is read only then: a numbered id is only made text for a
/// session's write.
// On every call's path, which for a plain turn it leaves at once.
#[inline(always)]
fn executing(
    hook: &Hook<'_>,
    effect: Effect,
    call_id: &impl Deref<Target = str>,
    tool: &str,
    decision: GateDecision,
) -> Gate {
    let Hook::Session(hook) = hook else {
        return Gate::Pass(decision);
    };
    if effect != Effect::Write {
        hook.running(call_id);
        return Gate::Pass(decision);
    }
    match hook.executing(call_id) {
        Ok(()) => {
            hook.running(call_id);
            Gate::Pass(decision)
        }
        Err(why) => Gate::Block(
            GateDecision::Rejected,
            Refusal::NotRecorded,
            errors::not_recorded(tool, &why),
        ),
    }
}

/// `plan_collect`: the write becomes the plan's next step, with its action
/// written into the input so the step runs as called.
fn capture(hook: &dyn GateHook, state: &CallState<'_>, arguments: &Value) -> Gate {
    let mut input = arguments.clone();
    if let (Some(action), Value::Object(object)) = (&state.action, &mut input) {
        object
            .entry("action")
            .or_insert_with(|| Value::String(action.clone()));
    }
    match hook.capture(&state.call_id, &state.tool, &input) {
        Ok(index) => Gate::Planned(
            ToolResult::success(json!({ "addedToPlan": true, "step": index + 1 }))
                .with_metadata("added_to_plan", true),
        ),
        Err(why) => Gate::Block(
            GateDecision::Denied,
            Refusal::PlanUnavailable,
            errors::plan_unavailable(&why),
        ),
    }
}

/// The one way to ask: the hook's question, bounded by its timeout; a
/// panicking approver or a runtime without a timer is a rejection.
async fn ask(hook: &Hook<'_>, request: &ApprovalRequest) -> Result<Approval, HookError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err("there is no async runtime to wait for the answer".into());
    }
    let timeout = match hook {
        Hook::Session(hook) => hook.approval_timeout(),
        Hook::Plain(plain) => plain.timeout,
    };
    let asked = async {
        match hook {
            Hook::Session(hook) => hook.ask(request).await,
            Hook::Plain(plain) => plain.ask(request).await,
        }
    };
    // Building the timer panics on a runtime without a time driver; that
    // is a configuration mistake, reported as a rejection.
    let bounded = std::panic::catch_unwind(AssertUnwindSafe(|| {
        tokio::time::timeout(timeout, AssertUnwindSafe(asked).catch_unwind())
    }));
    let Ok(bounded) = bounded else {
        return Err("the runtime has no timer to bound the wait".into());
    };
    match bounded.await {
        Ok(Ok(answer)) => answer,
        Ok(Err(_panic)) => Err("asking the user failed".into()),
        Err(_elapsed) => {
            let raced = match hook {
                Hook::Session(hook) => hook.timed_out(request, timeout),
                Hook::Plain(_) => None,
            };
            raced.ok_or_else(|| no_answer(timeout))
        }
    }
}

fn no_answer(timeout: Duration) -> HookError {
    format!("no answer within {}s", timeout.as_secs_f64())
}
