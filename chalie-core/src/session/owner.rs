//! [`AsPrincipal`]: the sessions as one principal sees them, where every
//! action first checks that the session belongs to that principal.

use crate::session::error::SessionError;
use crate::session::history::HistoryMessage;
use crate::session::mode::Mode;
use crate::session::run::RunKind;
use crate::session::sessions::{Run, Sessions};
use crate::session::store::{PlanStep, SessionRecord};
use crate::turn::Principal;

impl Sessions {
    /// The sessions acting for `principal`, e.g. the caller an HTTP
    /// request authenticated as. A session opened through it belongs to
    /// `principal`; every action on a session (send, approve, reject, set
    /// the mode, read or run the plan, read its history, follow a run's
    /// events) is refused
    /// with [`SessionError::NotOwner`], with nothing run or changed, when
    /// the session belongs to anyone else, or to nobody. Runs' turns carry
    /// the session's owner ([`Turn::principal`](crate::Turn::principal)).
    ///
    /// `Sessions`' own methods are the host's: they act on every session,
    /// and a session they open has no owner, so no principal can act on
    /// it until [`assign_owner`](Self::assign_owner) gives it one. A
    /// session stored before sessions had owners is such a session.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use chalie_core::turn::Principal;
    /// use chalie_core::session::{Mode, Reply, ScriptedModel, SessionError, Sessions};
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let dispatcher = Arc::new(chalie_core::Dispatcher::new(chalie_core::registry().unwrap().clone()));
    /// let model = Arc::new(ScriptedModel::new([Reply::text("Hello!")]));
    /// let sessions = Sessions::builder(dispatcher, model).build();
    /// let (alice, bob) = (Principal::new("alice"), Principal::new("bob"));
    ///
    /// sessions.as_principal(&alice).send("s1", "hi").unwrap().finish().await;
    /// let refused = sessions.as_principal(&bob).set_mode("s1", Mode::Auto);
    /// assert!(matches!(refused, Err(SessionError::NotOwner { .. })));
    /// assert_eq!(sessions.mode("s1").unwrap(), Mode::Approval);
    /// # }
    /// ```
    pub fn as_principal<'a>(&'a self, principal: &'a Principal) -> AsPrincipal<'a> {
        AsPrincipal {
            sessions: self,
            principal,
        }
    }
}

/// [`Sessions`] acting for one principal; see [`Sessions::as_principal`].
#[derive(Debug, Clone, Copy)]
pub struct AsPrincipal<'a> {
    sessions: &'a Sessions,
    principal: &'a Principal,
}

impl AsPrincipal<'_> {
    /// Who this acts for.
    pub fn principal(&self) -> &Principal {
        self.principal
    }

    /// Fails unless the session belongs to this principal; a new session
    /// is opened as this principal's when `open` is set, and is
    /// [`SessionError::UnknownSession`] otherwise, so a read or a plan
    /// action on an id nobody opened stores nothing.
    fn check(&self, session_id: &str, open: bool) -> Result<(), SessionError> {
        let owner = if open {
            self.sessions
                .session(session_id, Some(self.principal))?
                .owner
        } else {
            self.sessions
                .store()
                .session(session_id)?
                .ok_or_else(|| SessionError::UnknownSession(session_id.to_owned()))?
                .owner
        };
        if owner.as_ref() == Some(self.principal) {
            Ok(())
        } else {
            Err(SessionError::NotOwner {
                session_id: session_id.to_owned(),
                principal: self.principal.clone(),
            })
        }
    }

    /// Starts a run for a user message, as [`Sessions::send`]; a new
    /// session is opened as this principal's.
    pub fn send(&self, session_id: &str, text: &str) -> Result<Run, SessionError> {
        self.check(session_id, true)?;
        self.sessions
            .start(session_id, RunKind::Message(text.to_owned()), None)
    }

    /// The session's mode, as [`Sessions::mode`].
    pub fn mode(&self, session_id: &str) -> Result<Mode, SessionError> {
        self.check(session_id, true)?;
        self.sessions.mode(session_id)
    }

    /// Changes the session's mode, as [`Sessions::set_mode`].
    pub fn set_mode(&self, session_id: &str, mode: Mode) -> Result<(), SessionError> {
        self.check(session_id, true)?;
        self.sessions.set_mode(session_id, mode)
    }

    /// Approves a pending write of one of this principal's sessions, as
    /// [`Sessions::approve`].
    pub fn approve(&self, run_id: &str, call_id: &str) -> Result<(), SessionError> {
        self.answer(run_id, call_id, true)
    }

    /// Rejects a pending write of one of this principal's sessions, as
    /// [`Sessions::reject`].
    pub fn reject(&self, run_id: &str, call_id: &str) -> Result<(), SessionError> {
        self.answer(run_id, call_id, false)
    }

    fn answer(&self, run_id: &str, call_id: &str, approved: bool) -> Result<(), SessionError> {
        // The approval names its session: the owner is checked on what
        // the store holds, never on anything the caller sent.
        let Some(approval) = self.sessions.store().approval(run_id, call_id)? else {
            return Err(SessionError::NotPending {
                run_id: run_id.to_owned(),
                call_id: call_id.to_owned(),
            });
        };
        self.check(&approval.session_id, false)?;
        self.sessions.answer(run_id, call_id, approved)
    }

    /// This principal's sessions, oldest first; never another's.
    pub fn sessions(&self) -> Result<Vec<SessionRecord>, SessionError> {
        Ok(self.sessions.store().sessions_of(self.principal)?)
    }

    /// The plans of this principal's sessions that have one, by session
    /// id (a plan's id is its session's), oldest session first; with
    /// `session_id`, that session's alone, refused with
    /// [`SessionError::NotOwner`] when it is not this principal's
    /// ([`SessionError::UnknownSession`] when it does not exist).
    pub fn plans(
        &self,
        session_id: Option<&str>,
    ) -> Result<Vec<(String, Vec<PlanStep>)>, SessionError> {
        let ids = match session_id {
            Some(id) => {
                self.check(id, false)?;
                vec![id.to_owned()]
            }
            None => self
                .sessions()?
                .into_iter()
                .map(|session| session.id)
                .collect(),
        };
        let mut plans = Vec::new();
        for id in ids {
            let steps = self.sessions.plan(&id)?;
            if !steps.is_empty() {
                plans.push((id, steps));
            }
        }
        Ok(plans)
    }

    /// The session's plan, as [`Sessions::plan`];
    /// [`SessionError::UnknownSession`] when no session has that id.
    pub fn plan(&self, session_id: &str) -> Result<Vec<PlanStep>, SessionError> {
        self.check(session_id, false)?;
        self.sessions.plan(session_id)
    }

    /// The session's messages with their tool calls and cards, as
    /// [`Sessions::history`]; [`SessionError::UnknownSession`] when no
    /// session has that id.
    pub fn history(&self, session_id: &str) -> Result<Vec<HistoryMessage>, SessionError> {
        self.check(session_id, false)?;
        self.sessions.history(session_id)
    }

    /// Runs the session's plan, as [`Sessions::execute_plan`];
    /// [`SessionError::UnknownSession`] when no session has that id.
    pub fn execute_plan(&self, session_id: &str) -> Result<Run, SessionError> {
        self.check(session_id, false)?;
        self.sessions.execute_plan(session_id)
    }

    /// Drops the session's plan, as [`Sessions::discard_plan`];
    /// [`SessionError::UnknownSession`] when no session has that id.
    pub fn discard_plan(&self, session_id: &str) -> Result<(), SessionError> {
        self.check(session_id, false)?;
        self.sessions.discard_plan(session_id)
    }

    /// A run of one of this principal's sessions that this process started
    /// or resumed, as [`Sessions::run`]; `Ok(None)` when there is none.
    pub fn run(&self, run_id: &str) -> Result<Option<Run>, SessionError> {
        let Some(run) = self.sessions.run(run_id) else {
            return Ok(None);
        };
        self.check(run.session_id(), false)?;
        Ok(Some(run))
    }
}
