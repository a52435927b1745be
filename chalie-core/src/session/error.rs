//! [`SessionError`]: why a call on [`Sessions`](crate::session::Sessions)
//! failed. Its own module, so the run loop and the host's handle both use
//! it without using each other.

use crate::session::store::StoreError;
use crate::turn::Principal;

/// Why a session call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No call of that run is waiting for an approval.
    #[error("call `{call_id}` of run `{run_id}` is not waiting for an approval")]
    NotPending {
        /// The run.
        run_id: String,
        /// The call.
        call_id: String,
    },
    /// The plan has no step to execute.
    #[error("session `{0}` has no plan to execute; collect one in `plan_collect` mode first")]
    EmptyPlan(String),
    /// The session belongs to another principal, or to none (a session
    /// the host opened, or one stored before sessions had owners): nothing
    /// was done. Only its owner acts on it through
    /// [`Sessions::as_principal`](crate::session::Sessions::as_principal).
    #[error(
        "session `{session_id}` does not belong to `{principal}`; only the principal that opened it may act on it"
    )]
    NotOwner {
        /// The session.
        session_id: String,
        /// Who asked.
        principal: Principal,
    },
    /// No session has that id, and the call reads or acts on a session
    /// without opening one (its plan, its history): nothing was done, and
    /// no session was opened. A session is opened by sending to it or
    /// setting its mode.
    #[error(
        "no session `{0}`; open one by sending it a message (e.g. POST /sessions, then POST /sessions/{{id}}/messages)"
    )]
    UnknownSession(String),
    /// The process already drives as many runs as it is configured to
    /// ([`SessionsBuilder::max_running`](crate::session::SessionsBuilder::max_running)):
    /// nothing was started; retry when one has ended.
    #[error("this process already drives its limit of {limit} runs; retry when one has ended")]
    Overloaded {
        /// The configured limit.
        limit: usize,
    },
    /// A policy change named a permission that is not `tool`,
    /// `tool.action` or `tool.*`.
    #[error("{0}")]
    BadPermission(String),
    /// There is no tokio runtime to drive the run on.
    #[error("runs need a tokio runtime; call this from inside one")]
    NoRuntime,
}
