//! Asking a human: the `Approver` seam for `ask` on a channel with one.

use serde_json::Value;

use crate::BoxFuture;

/// What an approver is shown: the real permission, derived by the
/// dispatcher from the tool and its validated action, never from a field
/// the model supplied.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The call's id.
    pub call_id: String,
    /// The session asking.
    pub session_id: String,
    /// The tool called.
    pub tool: String,
    /// The declared action, for tools with actions.
    pub action: Option<String>,
    /// `tool` or `tool.action`.
    pub permission: String,
    /// The model's one-line `act_summary` of the call, if it gave one.
    pub summary: Option<String>,
    /// The validated arguments, framework fields removed.
    pub arguments: Value,
}

/// A human's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// Run the call.
    Approved,
    /// Do not run it.
    Rejected,
}

/// Asks a human whether a call may run. The dispatcher waits at most its
/// approval timeout; no answer in time counts as [`Approval::Rejected`],
/// and so does an approver that panics.
///
/// Implemented for closures `Fn(ApprovalRequest) -> BoxFuture<'static, Approval>`.
pub trait Approver: Send + Sync {
    /// Asks about one call.
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, Approval>;
}

impl<F> Approver for F
where
    F: Fn(ApprovalRequest) -> BoxFuture<'static, Approval> + Send + Sync,
{
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'static, Approval> {
        self(request)
    }
}
