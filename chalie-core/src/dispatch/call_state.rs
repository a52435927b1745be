//! What the dispatcher knows about one call as it goes through the steps,
//! and how it concludes: the envelope, and the entry on the turn's trail.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use super::call::{Dispatched, Recorded, Refusal};
use super::limits::RateLimit;
use crate::turn::{Name, Timing, TrailEntry, permission};
use crate::{
    Effect, ToolResult, Turn, envelope::render_envelope, turn::CallStatus, turn::GateDecision,
};

/// What the called tool declares that the later steps read: the gate its
/// effect and whether it is internal, the admission its own rate limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Declared {
    pub(crate) effect: Effect,
    pub(crate) internal: bool,
    /// The ability's name and its `#[ability(rate_limit = ...)]`.
    pub(crate) rate_limit: Option<(&'static str, RateLimit)>,
}

/// What is known about a call so far, for its record.
#[derive(Debug, Clone)]
pub(crate) struct CallState<'a> {
    /// Shared or copied inline, never reallocated, by the call-bound turn,
    /// the trail and the result.
    pub(crate) call_id: Name,
    /// As called: borrowed from the call until something must outlive it.
    pub(crate) tool: Cow<'a, str>,
    pub(crate) action: Option<String>,
    /// The qualifier the ability derived from the parsed values (see
    /// [`Ability::permission`](crate::Ability::permission)); it replaces
    /// the action in the permission.
    pub(crate) derived: Option<String>,
    /// The registry's name for the tool, once it resolved to an ability:
    /// the call-bound turn and the trail borrow it instead of copying.
    pub(crate) registered: Option<&'static str>,
    /// The ability's registry position, once resolved: reach and the
    /// policy read by it rather than by the name.
    pub(crate) position: Option<usize>,
    pub(crate) decision: GateDecision,
    pub(crate) refusal: Option<Refusal>,
    pub(crate) background: bool,
    pub(crate) reused: bool,
    pub(crate) started: Instant,
}

impl CallState<'_> {
    /// What qualifies the tool in its permission: the derived qualifier,
    /// else the action.
    pub(crate) fn qualifier(&self) -> Option<&str> {
        self.derived.as_deref().or(self.action.as_deref())
    }

    /// The permission the call is gated on: `tool`, `tool.action` or
    /// `tool.derived`.
    pub(crate) fn permission(&self) -> String {
        permission(&self.tool, self.qualifier())
    }

    /// The turn the ability runs with, bound to this call.
    pub(crate) fn bind(&self, turn: &Turn) -> Turn {
        let tool = match self.registered {
            Some(name) => Name::Static(name),
            None => Name::Shared(Arc::from(&*self.tool)),
        };
        turn.bound(self.call_id.clone(), tool)
    }

    /// Renders the envelope and builds the trail's entry, which shares the
    /// call's names rather than copying them, and hands the entry to
    /// `record`, which says where the dispatched call finds it (on the
    /// trail, by position, for a call that ended). Recording here, rather
    /// than returning both, spares every call a move of the pair. The
    /// entry is not shared through an `Arc`: a trail keeps its entries,
    /// and that allocation, never freed during the turn, costs more than
    /// the position does.
    pub(crate) fn conclude(
        self,
        result: ToolResult,
        status: Option<CallStatus>,
        record: impl FnOnce(TrailEntry) -> Recorded,
    ) -> Dispatched {
        let envelope = render_envelope(&self.tool, self.action.as_deref(), &result);
        let status = status.unwrap_or(if result.is_success() {
            CallStatus::Success
        } else {
            CallStatus::Error
        });
        let error_code = result.as_error().map(|error| error.code().to_shared());
        let derived_permission = self.derived.is_some().then(|| self.permission());
        let entry = TrailEntry {
            call_id: self.call_id.clone(),
            tool: match self.registered {
                Some(name) => Name::Static(name),
                None => Name::Shared(Arc::from(&*self.tool)),
            },
            action: self.action.map(|action| Name::Shared(Arc::from(action))),
            // Unless the ability derived it, it is derived again from the
            // tool and action when read.
            permission: derived_permission,
            decision: self.decision,
            status,
            error_code,
            duration: Timing::Measured {
                started: self.started,
                ended: Instant::now(),
            },
            background: self.background,
            reused: self.reused,
        };
        Dispatched {
            envelope,
            result,
            decision: entry.decision,
            entry: record(entry),
            call_id: self.call_id,
            refusal: self.refusal,
        }
    }

    /// The same state, owning its tool name, for a task that outlives the
    /// call.
    pub(crate) fn into_owned(self) -> CallState<'static> {
        CallState {
            tool: Cow::Owned(self.tool.into_owned()),
            call_id: self.call_id,
            action: self.action,
            derived: self.derived,
            registered: self.registered,
            position: self.position,
            decision: self.decision,
            refusal: self.refusal,
            background: self.background,
            reused: self.reused,
            started: self.started,
        }
    }

    /// Refuses the call for `why`: concluded with `result`, on the trail.
    pub(crate) fn refuse(mut self, turn: &Turn, why: Refusal, result: ToolResult) -> Dispatched {
        self.refusal = Some(why);
        self.finish(turn, result)
    }

    /// Concludes the call and records it on the turn's trail.
    pub(crate) fn finish(self, turn: &Turn, result: ToolResult) -> Dispatched {
        self.conclude(result, None, |entry| {
            let trail = turn.trail();
            Recorded::OnTrail(trail.clone(), trail.record_entry(entry))
        })
    }
}
