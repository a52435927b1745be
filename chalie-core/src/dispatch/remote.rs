//! Asking a human a round trip later: a turn on a channel without a human
//! whose caller can still ask one (an MCP client that answers input
//! requests) carries a [`RemoteApproval`]. The first call stops at the gate
//! with the question left here; the caller asks its user and calls again
//! with the answer, which the gate then applies to exactly that call.

use std::sync::{Mutex, PoisonError};

use super::approver::{Approval, ApprovalRequest};

/// What the caller of a human-less turn can do about an `ask`.
#[derive(Debug)]
pub(crate) enum RemoteApproval {
    /// The caller can ask its user: a call that needs an approval does not
    /// run, and the question it needs is left here for the caller.
    Deferred(Mutex<Option<Box<ApprovalRequest>>>),
    /// The user's answer, which the caller made sure is about this very
    /// call (same tool, same arguments).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only MCP answers so
    Answered(Approval),
}

impl RemoteApproval {
    /// A turn whose caller will ask its user when the gate needs it.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only MCP asks so
    pub(crate) fn deferred() -> Self {
        RemoteApproval::Deferred(Mutex::new(None))
    }

    /// Leaves the question for the caller (deferred turns only).
    pub(crate) fn defer(&self, request: ApprovalRequest) {
        if let RemoteApproval::Deferred(slot) = self {
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(request));
        }
    }

    /// Whether this is the user's answer: the call was admitted (and
    /// counted against the rate limits) when it stopped to ask.
    pub(crate) fn is_answer(&self) -> bool {
        matches!(self, RemoteApproval::Answered(_))
    }

    /// The question the gate left, if the call stopped for one.
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only MCP asks so
    pub(crate) fn question(&self) -> Option<ApprovalRequest> {
        match self {
            RemoteApproval::Deferred(slot) => {
                let question = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
                question.map(|question| *question)
            }
            RemoteApproval::Answered(_) => None,
        }
    }
}
