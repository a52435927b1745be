//! The path of one call through [the steps](super::Dispatcher#the-steps-of-a-call),
//! in their order; each step but the last is a function of its own file.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::call::{Dispatched, Recorded, Refusal, ToolCall};
use super::call_state::{CallState, Declared};
use super::execute::Prepared;
use super::gate::Gate;
use super::resolve::{Target, resolve};
use super::reuse::reuse_key;
use super::session_state::{SessionState, lock};
use super::validate::{check_action, strip_framework_fields};
use super::{Dispatcher, GateHook, errors};
use crate::ability::TurnBinding;
use crate::turn::{Name, NumberedId};
use serde_json::Value;

use crate::{Channel, Effect, ToolResult, Turn, turn::CallStatus, turn::GateDecision};

impl Dispatcher {
    /// Dispatches one call made during `turn`, through
    /// [the steps](Dispatcher#the-steps-of-a-call). Never panics;
    /// every failure is an error envelope for the model, and every call is
    /// on the turn's action trail.
    ///
    /// Runs on a tokio runtime (with the time driver, for the approval
    /// timeout); a call with `async: true` on a channel that allows
    /// background calls returns a receipt at once, and its final result is
    /// delivered through [`Dispatcher::background`].
    ///
    /// Each call is one `execute_tool` [`tracing`] span (see
    /// [`DispatcherBuilder::trace_payloads`](super::DispatcherBuilder::trace_payloads)).
    pub fn dispatch(
        &self,
        turn: &Turn,
        call: ToolCall<'_>,
    ) -> impl Future<Output = Dispatched> + Send {
        // The span's future itself, not one more layer around it that
        // would move it once more on every call.
        super::trace::traced(self, turn, call, None)
    }

    /// [`dispatch`](Self::dispatch) for a host that drives the turn (a
    /// session): `hook` lends the gate the host's mode, its approvals and
    /// its plan, for this call only.
    pub(crate) fn dispatch_with_hook<'a>(
        &'a self,
        turn: &'a Turn,
        call: ToolCall<'a>,
        hook: &'a dyn GateHook,
    ) -> impl Future<Output = Dispatched> + Send + 'a {
        super::trace::traced(self, turn, call, Some(hook))
    }

    /// Dispatches one call of `name` with `arguments` on a fresh turn of
    /// `channel`, as [`dispatch`](Self::dispatch) does: for a script, a
    /// test or a first program. A conversation builds its own [`Turn`]
    /// (session, principal, what it discovered) and calls `dispatch`.
    pub async fn call(&self, channel: Channel, name: &str, arguments: Value) -> Dispatched {
        let turn = Turn::builder(channel).build();
        self.dispatch(&turn, ToolCall::new(name, arguments)).await
    }

    /// The call's path, inside its span.
    pub(crate) async fn dispatch_untraced(
        &self,
        turn: &Turn,
        call: ToolCall<'_>,
        hook: Option<&dyn GateHook>,
    ) -> Dispatched {
        let ToolCall {
            id,
            name,
            mut arguments,
        } = call;
        let call_id = match id {
            Some(id) => Name::Shared(Arc::from(&*id)),
            None => Name::Numbered(NumberedId::new(
                self.next_call.fetch_add(1, Ordering::Relaxed),
            )),
        };
        let mut state = CallState {
            call_id,
            tool: name,
            action: None,
            derived: None,
            registered: None,
            position: None,
            decision: GateDecision::NotReached,
            refusal: None,
            background: false,
            reused: false,
            started: Instant::now(),
        };

        // Resolve.
        let target = match resolve(&self.registry, &self.external, &state.tool) {
            Ok(target) => target,
            Err(suggestions) => {
                let result = errors::unknown_tool(&state.tool, suggestions);
                return state.refuse(turn, Refusal::UnknownTool, result);
            }
        };

        // Reach: only what this turn was offered, whatever name is sent.
        state.position = match target {
            Target::Ability(position, _) => Some(position),
            Target::External(..) => None,
        };
        if !self
            .channels
            .reaches_resolved(&self.registry, turn, &state.tool, state.position)
        {
            let result = errors::not_available(&state.tool);
            return state.refuse(turn, Refusal::NotAvailable, result);
        }

        // Pre-validate: framework fields, action, typed parameters.
        let framework = match strip_framework_fields(&mut arguments) {
            Ok(framework) => framework,
            Err(problems) => {
                return state.refuse(turn, Refusal::InvalidArguments, problems.into_tool_result());
            }
        };
        let (prepared, declared) = match target {
            Target::Ability(_, entry) => {
                state.registered = Some(entry.name());
                match check_action(entry.spec(), &arguments) {
                    Ok(Some(action)) => state.action = Some(action.to_owned()),
                    Ok(None) => {}
                    Err(result) => return state.refuse(turn, Refusal::InvalidArguments, *result),
                }
                // Bound now, if the ability takes the turn: its future is
                // built when the arguments parse, and polled only after the
                // gate.
                let call_turn = || state.bind(turn).with_host_extensions(&self.extensions);
                let prepared = || entry.prepare(&arguments, TurnBinding::new(&call_turn));
                match errors::unless_panicked(&state.tool, prepared) {
                    Ok(Ok(mut call)) => {
                        if let Some(derived) = call.permission.take() {
                            if !valid_qualifier(&derived) {
                                let result = errors::bad_permission(&state.tool, &derived);
                                return state.refuse(turn, Refusal::InvalidPermission, result);
                            }
                            state.derived = Some(derived);
                        }
                        let declared = Declared {
                            effect: entry.spec().effect(),
                            internal: entry.spec().internal(),
                            rate_limit: entry
                                .spec()
                                .rate_limit()
                                .map(|limit| (entry.name(), limit)),
                        };
                        (Prepared::Ability(call.future), declared)
                    }
                    Ok(Err(problems)) => {
                        let result = problems.into_tool_result();
                        return state.refuse(turn, Refusal::InvalidArguments, result);
                    }
                    Err(panicked) => return state.finish(turn, panicked),
                }
            }
            Target::External(proxy, tool) => {
                match errors::unless_panicked(&state.tool, || proxy.validate(&tool, &arguments)) {
                    Ok(Ok(())) => {
                        let declared = Declared {
                            effect: tool.effect,
                            internal: false,
                            rate_limit: None,
                        };
                        (Prepared::External(proxy, tool), declared)
                    }
                    Ok(Err(problems)) => {
                        let result = problems.into_tool_result();
                        return state.refuse(turn, Refusal::InvalidArguments, result);
                    }
                    Err(panicked) => return state.finish(turn, panicked),
                }
            }
        };

        // Admit: the tags the tool requires, then its rate limits.
        if let Err((why, result)) = self.admit(turn, &state.tool, declared.rate_limit) {
            return state.refuse(turn, why, result);
        }

        // Gate.
        let gate = self.gate(
            turn,
            hook,
            &state,
            declared,
            framework.summary.as_deref(),
            &arguments,
        );
        let gate = match gate {
            Ok(decided) => decided,
            Err(asking) => asking.await,
        };
        match gate {
            Gate::Pass(decision) => state.decision = decision,
            Gate::Block(decision, why, result) => {
                state.decision = decision;
                return state.refuse(turn, why, result);
            }
            Gate::Planned(result) => {
                state.decision = GateDecision::Planned;
                return state.finish(turn, result);
            }
        }

        // Execute: reuse an earlier read, or run inline or in the background.
        let call_turn = || state.bind(turn).with_host_extensions(&self.extensions);
        if let Some(summary) = framework
            .summary
            .as_deref()
            .filter(|s| !s.trim().is_empty())
        {
            call_turn().report_progress(summary);
        }
        let Declared {
            effect, internal, ..
        } = declared;
        let reuse = match effect {
            Effect::Read if !turn.reuses_reads() => None,
            Effect::Read => {
                let session = self.session(turn.session_id());
                let key = reuse_key(&state.tool, &arguments);
                let looked_up = lock(&session.reuse).lookup(turn.run_id(), &key);
                match looked_up {
                    Ok(earlier) => {
                        state.reused = true;
                        return state.finish(turn, earlier);
                    }
                    Err(generation) => Some(Observation {
                        session,
                        key,
                        generation,
                    }),
                }
            }
            // A single-call turn keeps no observations to clear.
            Effect::Write if !turn.reuses_reads() => None,
            Effect::Write => {
                self.forget_observations_of(turn);
                None
            }
        };
        let started = prepared.start(&state.tool, arguments, call_turn);
        let in_background = framework.background
            && !internal
            && turn.channel().allows_background_calls()
            && tokio::runtime::Handle::try_current().is_ok();
        if !in_background {
            let result = started.finish(&state.tool).await;
            match reuse {
                Some(observation) => observation.settle(turn.run_id(), &result),
                None if effect == Effect::Write && turn.reuses_reads() => {
                    self.forget_observations_of(turn);
                }
                None => {}
            }
            return state.finish(turn, result);
        }

        // Render and record (for a background call: a receipt now, the
        // final envelope when the task ends). The receipt
        // is recorded first so the task's update always finds it.
        state.background = true;
        let receipt = ToolResult::success(format!(
            "`{}` is running in the background as call `{}`; its result will arrive in a later message. Continue meanwhile.",
            state.tool, &*state.call_id
        ))
        .with_metadata("call_id", &*state.call_id)
        .with_metadata("background", true);
        let dispatched = state
            .clone()
            .conclude(receipt, Some(CallStatus::Pending), |entry| {
                let receipt = Box::new(entry.clone());
                turn.trail().record_entry(entry);
                Recorded::Copied(receipt)
            });
        let session = self.session(turn.session_id());
        let completion = session.background.start(&state.call_id);
        let task_turn = turn.clone();
        // The task outlives the call it was given.
        let state = state.into_owned();
        tokio::spawn(async move {
            let result = started.finish(&state.tool).await;
            match reuse {
                Some(observation) => observation.settle(task_turn.run_id(), &result),
                None if effect == Effect::Write && task_turn.reuses_reads() => {
                    forget_observations(&session, task_turn.run_id());
                }
                None => {}
            }
            let call_id = state.call_id.clone();
            let done = state.conclude(result, None, |entry| {
                let done = Box::new(entry.clone());
                task_turn.trail().replace_entry(&call_id, entry);
                Recorded::Copied(done)
            });
            completion.complete(done);
        });
        dispatched
    }
}

/// A derived qualifier must read like an action name, so the permission
/// stays `tool.qualifier` and a policy file can name it.
fn valid_qualifier(qualifier: &str) -> bool {
    !qualifier.is_empty()
        && qualifier
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A read that ran: where its result is kept for reuse, and under which
/// generation of the run's cache.
struct Observation {
    session: Arc<SessionState>,
    key: String,
    generation: u64,
}

impl Observation {
    /// Keeps a success for reuse, unless a write ran meanwhile.
    fn settle(self, run_id: &str, result: &ToolResult) {
        if result.is_success() {
            lock(&self.session.reuse).store(run_id, self.key, self.generation, result.clone());
        }
    }
}

/// After a write: clears the run's observations again, since reads that
/// overlapped it may have stored stale ones.
fn forget_observations(session: &SessionState, run_id: &str) {
    lock(&session.reuse).invalidate(run_id);
}

impl Dispatcher {
    /// [`forget_observations`] in the turn's session, before a write runs
    /// and after: a session without state has nothing a read stored, and
    /// a read that starts meanwhile creates the state that the settling
    /// after the write then finds and clears.
    fn forget_observations_of(&self, turn: &Turn) {
        self.with_existing_session(turn.session_id(), |session| {
            forget_observations(session, turn.run_id());
        });
    }
}
