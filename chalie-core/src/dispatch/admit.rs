//! The **admit** step ([the steps](super::Dispatcher#the-steps-of-a-call)):
//! the tags the tool requires, then its rate limits.

use tokio::time::Instant;

use super::call::Refusal;
use super::limits::{Admission, RateLimit, RateScope};
use super::remote::RemoteApproval;
use super::session_state::lock;
use super::{Dispatcher, errors};
use crate::{ToolResult, Turn};

impl Dispatcher {
    /// Admits a call of `tool`, or says why not: the tags the tool requires
    /// (declared on the ability or configured: the builder joined both),
    /// then the session's rate limit, then the ability's own
    /// (`declared_limit`). The session's comes first so a call it refuses
    /// spends nothing of the ability's smaller allowance. A call that runs
    /// on a remote user's answer ([`RemoteApproval::Answered`]) was counted
    /// when it stopped to ask, and is not counted again.
    #[inline]
    pub(crate) fn admit(
        &self,
        turn: &Turn,
        tool: &str,
        declared_limit: Option<(&'static str, RateLimit)>,
    ) -> Result<(), (Refusal, ToolResult)> {
        let required = match self.required_tags.is_empty() {
            true => None,
            false => self.required_tags.get(tool),
        };
        if let Some(required) = required {
            let missing: Vec<&str> = required
                .iter()
                .filter(|tag| !self.granted_tags.contains(*tag))
                .map(String::as_str)
                .collect();
            if !missing.is_empty() {
                return Err((Refusal::MissingTags, errors::missing_tags(tool, &missing)));
            }
        }
        // A call run on the answer of an MCP client's user was counted
        // when it stopped to ask: its question was asked only once it was
        // admitted, and an answer runs one call at most, so the call is
        // counted once (a limit of one call a window can still be approved).
        let counted = (self.rate_limit.is_some() || declared_limit.is_some())
            && turn
                .extension::<RemoteApproval>()
                .is_some_and(RemoteApproval::is_answer);
        if counted {
            return Ok(());
        }
        // The session's state is created only by what keeps something in
        // it (a local rate window, a read's observation, a background
        // call); a write only clears what exists, and looks for nothing
        // while no session has any state.
        if let Some(limit) = self.rate_limit {
            self.admit_call(turn, RateScope::Session, limit)
                .map_err(|result| (Refusal::RateLimited, result))?;
        }
        if let Some((name, limit)) = declared_limit {
            self.admit_call(turn, RateScope::Ability(name), limit)
                .map_err(|result| (Refusal::RateLimited, result))?;
        }
        Ok(())
    }

    /// Counts a call of the turn's session against `limit` in `scope`, in
    /// the shared counter if there is one, else in this dispatcher's
    /// memory: the one path of every rate limit. The error is the result
    /// the model reads (when to retry, or that the limit could not be
    /// checked).
    pub(crate) fn admit_call(
        &self,
        turn: &Turn,
        scope: RateScope<'static>,
        limit: RateLimit,
    ) -> Result<(), ToolResult> {
        let admitted = match &self.rate_counter {
            None => {
                let session = self.session(turn.session_id());
                let now = Instant::now();
                match scope {
                    RateScope::Session => lock(&session.window).admit(limit, now),
                    RateScope::Ability(name) => lock(&session.ability_windows)
                        .entry(name)
                        .or_default()
                        .admit(limit, now),
                }
            }
            Some(counter) => match counter.admit(turn.session_id(), scope, limit) {
                Ok(Admission::Admitted) => Ok(()),
                Ok(Admission::Wait(wait)) => Err(wait),
                Err(error) => return Err(errors::rate_unchecked(&error)),
            },
        };
        admitted.map_err(|wait| {
            let (calls, per, wait) = (limit.calls(), limit.per().as_secs_f64(), wait.as_secs_f64());
            match scope {
                RateScope::Session => errors::rate_limited(calls, per, wait),
                RateScope::Ability(name) => errors::ability_rate_limited(name, calls, per, wait),
            }
        })
    }
}
