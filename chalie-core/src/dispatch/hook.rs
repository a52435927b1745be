//! The gate's hook: what the gate asks of whoever runs the turn.
//!
//! The dispatcher owns this seam and the session implements it, so data
//! runs one way: dispatch never imports the session. The session passes
//! its hook with each call it dispatches
//! ([`Dispatcher::dispatch_with_hook`](super::Dispatcher::dispatch_with_hook));
//! a call dispatched without one is gated with the dispatcher's own
//! [`Approver`] as if in `auto`.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use super::approver::{Approval, ApprovalRequest, Approver};
use super::mode::Mode;

/// Why the hook could not do what the gate asked; the model reads it.
pub(crate) type HookError = String;

/// What a session (or any host that drives turns) lends the gate.
pub(crate) trait GateHook: Send + Sync {
    /// The mode the gate applies to this call.
    fn mode(&self) -> Mode;

    /// How long the gate waits for an answer before rejecting.
    fn approval_timeout(&self) -> Duration;

    /// Asks the human about `request` and waits for the answer; the gate
    /// bounds the wait by [`approval_timeout`](Self::approval_timeout).
    fn ask<'a>(
        &'a self,
        request: &'a ApprovalRequest,
    ) -> BoxFuture<'a, Result<Approval, HookError>>;

    /// The wait ran out after `waited`: records that, unless an answer
    /// raced the timer, which then wins (`Some`).
    fn timed_out(&self, request: &ApprovalRequest, waited: Duration) -> Option<Approval>;

    /// `plan_collect`: records the call as the plan's next step, returning
    /// its 0-based index.
    fn capture(&self, call_id: &str, tool: &str, input: &Value) -> Result<usize, HookError>;

    /// The call passed the gate (after the approval, when one was asked)
    /// and runs next: a session tells its client the call started, so a
    /// card never shows a call as running before the human said yes.
    fn running(&self, call_id: &str);

    /// A write passed the gate and its body runs next. The host records
    /// that before it happens, so a run resumed after its driver died does
    /// not run the write a second time; an error keeps the write from
    /// running at all (at most once, never "maybe twice").
    fn executing(&self, call_id: &str) -> Result<(), HookError>;
}

/// A call dispatched without a hook: the dispatcher's approver (if any), `auto`.
pub(crate) struct ApproverGate<'a> {
    pub(crate) approver: Option<&'a Arc<dyn Approver>>,
    pub(crate) timeout: Duration,
}

impl ApproverGate<'_> {
    pub(crate) fn mode(&self) -> Mode {
        Mode::Auto
    }

    pub(crate) async fn ask(&self, request: &ApprovalRequest) -> Result<Approval, HookError> {
        match self.approver {
            Some(approver) => Ok(approver.approve(request.clone()).await),
            None => Err("no approver is configured to ask the user".into()),
        }
    }
}
