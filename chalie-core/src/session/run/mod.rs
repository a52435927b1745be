//! The run loop: ask the model with the turn's active tools, dispatch its
//! calls, feed the envelopes back, until it answers or the cap is hit.

pub(crate) mod call;
pub(crate) mod follow;
pub(crate) mod gate_hook;
pub(crate) mod narration;
pub(crate) mod planner;
pub(crate) mod shared;
pub(crate) mod start;

use std::collections::HashSet;
use std::sync::Arc;

use futures::StreamExt;
use tokio::task::JoinHandle;

use crate::session::error::SessionError;
use crate::session::event::{Event, Phase};
use crate::session::event_log::EventLog;
use crate::session::mode::{Mode, ModeCell};
use crate::session::model::{Message, ModelChunk, ModelRequest, ModelToolCall, Role};
use crate::session::run::call::{deliver_background, report_interrupted_write, run_call};
use crate::session::run::gate_hook::{RunMode, SessionGate};
use crate::session::run::narration::{RATE_LIMITED_INSTRUCTION, RETRY_INSTRUCTION, Verdict};
use crate::session::run::shared::Core;
use crate::session::run::start::Starts;
use crate::session::store::{PlanStep, RunRecord, RunStatus, StoreError, ToolCallStatus};
use crate::{Turn, descriptor::ToolDescriptor, turn::Progress};

/// What a run does.
pub(crate) enum RunKind {
    /// Answer a user message.
    Message(String),
    /// Pick up an unfinished run from the store.
    Resume,
    /// Execute a collected plan's steps in order.
    Plan(Vec<PlanStep>),
}

struct RunCtx {
    core: Arc<Core>,
    turn: Turn,
    /// The session's side of the gate, passed with every call the run
    /// dispatches.
    gate: SessionGate,
    /// The mode the run's calls are gated in, read by the run itself (a
    /// planning run asks for a plan).
    mode: RunMode,
    events: EventLog,
    /// Shared with the session's gate hook, which sends each call's
    /// `tool.started` once the call runs.
    starts: Starts,
    tool_calls: usize,
    iterations: usize,
}

pub(crate) fn spawn_run(
    handle: &tokio::runtime::Handle,
    core: Arc<Core>,
    session_id: String,
    run_id: String,
    mode: ModeCell,
    events: EventLog,
    kind: RunKind,
) -> Result<JoinHandle<()>, SessionError> {
    // A plan's steps run as `auto`, also when its run resumes after a stop,
    // and the run may reach the tools its steps call: the user accepted
    // them, so they are pinned on its turn (a grant in code, not a name the
    // model sends).
    let plan_tools: Option<Vec<String>> = match &kind {
        RunKind::Plan(steps) => Some(steps.iter().map(|step| step.tool.clone()).collect()),
        RunKind::Resume => plan_run_tools(&core, &session_id, &run_id)?,
        RunKind::Message(_) => None,
    };
    let mode_override = plan_tools.is_some().then_some(Mode::Auto);
    // A resumed run's calls that were waiting for an approval had passed
    // the reach check before the stop, often on a tool discovery activated
    // earlier in the run, which the new process's turn has not: pinned,
    // so the approved call runs rather than failing `tool-not-available`.
    let approved_tools = match &kind {
        RunKind::Resume => awaiting_approval_tools(&core, &run_id)?,
        _ => Vec::new(),
    };
    if !matches!(kind, RunKind::Resume) {
        core.store.put_run(&RunRecord {
            id: run_id.clone(),
            session_id: session_id.clone(),
            status: RunStatus::Running,
        })?;
        // A new run is this replica's from the start (a resumed one was
        // claimed before it got here).
        core.store
            .claim_run(&run_id, &core.run_prefix, core.config.lease)?;
    }
    let progress_events = events.clone();
    let starts = Starts::default();
    // The calls run on behalf of the session's owner, so abilities can
    // check that what they touch is theirs.
    let owner = core
        .store
        .session(&session_id)?
        .and_then(|session| session.owner);
    let mut turn = Turn::builder(core.config.channel);
    if let Some(owner) = owner {
        turn = turn.principal(owner);
    }
    let turn = turn
        .session_id(session_id.clone())
        .run_id(run_id.clone())
        .progress(Arc::new(move |progress: Progress| {
            progress_events.push(Event::ToolProgress {
                tool_key: progress.tool,
                call_id: progress.call_id,
                message: progress.message,
            });
        }))
        .pin(core.config.pinned.iter().cloned())
        .pin(plan_tools.into_iter().flatten())
        .pin(approved_tools)
        // `active_tools` offers what discovery activates in the next request.
        .offers_activated_tools()
        .build();
    let mode = RunMode::new(mode, mode_override);
    let gate = SessionGate {
        core: Arc::clone(&core),
        session_id,
        run_id,
        mode: mode.clone(),
        events: events.clone(),
        starts: starts.clone(),
    };
    let mut ctx = RunCtx {
        core,
        turn,
        gate,
        mode,
        events,
        starts,
        tool_calls: 0,
        iterations: 0,
    };
    // The run's span: every model request and tool call below is a child.
    let span = tracing::info_span!(
        target: "chalie::session",
        "invoke_agent",
        "gen_ai.operation.name" = "invoke_agent",
        "chalie.session.id" = ctx.turn.session_id(),
        "chalie.run.id" = ctx.turn.run_id(),
        "chalie.channel" = ctx.turn.channel().as_str(),
        "chalie.status" = tracing::field::Empty,
        "chalie.tool_calls" = tracing::field::Empty,
    );
    let run = async move {
        ctx.events.push(Event::RunStarted {
            run_id: ctx.turn.run_id().to_owned(),
            session_id: ctx.turn.session_id().to_owned(),
        });
        let status = match ctx.drive(kind).await {
            Ok(status) => status,
            Err(error) => {
                ctx.events.push(Event::RunFailed {
                    error: error.to_string(),
                });
                RunStatus::Failed
            }
        };
        let span = tracing::Span::current();
        span.record("chalie.status", status.as_str());
        span.record("chalie.tool_calls", ctx.tool_calls);
        ctx.settle(status);
    };
    Ok(handle.spawn(tracing::Instrument::instrument(run, span)))
}

impl RunCtx {
    fn settle(&self, status: RunStatus) {
        let stored = self.core.store.put_run(&RunRecord {
            id: self.turn.run_id().to_owned(),
            session_id: self.turn.session_id().to_owned(),
            status,
        });
        if let Err(error) = stored {
            self.events.push(Event::RunFailed {
                error: error.to_string(),
            });
        }
        self.events.push(Event::RunSettlementCompleted {
            run_id: self.turn.run_id().to_owned(),
            status: status.as_str().to_owned(),
            tool_calls: self.tool_calls,
            iterations: self.iterations,
        });
    }

    fn phase(&self, phase: Phase) {
        self.events.push(Event::AgentPhaseChanged { phase });
    }

    fn append(&self, message: &Message) -> Result<u64, StoreError> {
        self.core
            .store
            .append_message(self.turn.session_id(), self.turn.run_id(), message)
    }

    async fn drive(&mut self, kind: RunKind) -> Result<RunStatus, StoreError> {
        if !self.core.model.supports_tools() {
            self.events.push(Event::RunConversational {
                reason: "the model cannot call tools; none are offered".into(),
            });
        }
        match kind {
            RunKind::Message(text) => {
                self.append(&Message::user(text))?;
            }
            RunKind::Plan(steps) => {
                self.execute_plan(steps).await?;
                return self.summarise_plan().await;
            }
            RunKind::Resume => {
                if self.finish_interrupted_calls().await? {
                    return self.summarise_plan().await;
                }
            }
        }
        self.model_loop(Vec::new(), true).await
    }

    /// Asks the model, with no tools on offer, to tell the user what the
    /// executed plan did: the step results are in the conversation, and a
    /// plan run would otherwise end without an answer.
    async fn summarise_plan(&mut self) -> Result<RunStatus, StoreError> {
        self.model_loop(vec![Message::system(PLAN_SUMMARY_INSTRUCTION)], false)
            .await
    }

    /// Dispatches the calls of the run's last assistant message that have
    /// no result yet. Returns whether that message was an executed plan's,
    /// which is summarised rather than continued.
    async fn finish_interrupted_calls(&mut self) -> Result<bool, StoreError> {
        let messages = self.core.store.messages(self.turn.session_id())?;
        let run_id = self.turn.run_id();
        let Some(last) = messages
            .iter()
            .rposition(|stored| stored.run_id == run_id && stored.message.role == Role::Assistant)
        else {
            return Ok(false);
        };
        let answered: HashSet<&str> = messages[last..]
            .iter()
            .filter_map(|stored| stored.message.tool_call_id.as_deref())
            .collect();
        let assistant = &messages[last];
        let pending: Vec<ModelToolCall> = assistant
            .message
            .tool_calls
            .iter()
            .filter(|call| !answered.contains(call.id.as_str()))
            .cloned()
            .collect();
        if !pending.is_empty() {
            self.phase(Phase::ExecutingTool);
        }
        // A write whose body had begun is not run a second time.
        let began: HashSet<String> = if pending.is_empty() {
            HashSet::new()
        } else {
            self.core
                .store
                .tool_calls(run_id)?
                .into_iter()
                .filter(|record| record.status == ToolCallStatus::Executing)
                .map(|record| record.call_id)
                .collect()
        };
        for call in &pending {
            self.tool_calls += 1;
            if began.contains(&call.id) {
                report_interrupted_write(
                    &self.core,
                    &self.turn,
                    &self.events,
                    assistant.seq,
                    call,
                )?;
            } else {
                run_call(
                    &self.core,
                    &self.turn,
                    &self.gate,
                    &self.events,
                    &self.starts,
                    assistant.seq,
                    call,
                )
                .await?;
            }
        }
        Ok(assistant.message.content == PLAN_MESSAGE)
    }

    async fn execute_plan(&mut self, steps: Vec<PlanStep>) -> Result<(), StoreError> {
        let calls: Vec<ModelToolCall> = steps
            .into_iter()
            .map(|step| ModelToolCall {
                id: step.call_id,
                name: step.tool,
                arguments: step.input,
            })
            .collect();
        // The plan's calls are stored as one assistant message first, so a
        // restart mid-plan resumes the steps not yet run.
        let seq = self.append(&Message {
            role: Role::Assistant,
            content: PLAN_MESSAGE.into(),
            tool_calls: calls.clone(),
            tool_call_id: None,
        })?;
        self.phase(Phase::ExecutingTool);
        for call in &calls {
            self.tool_calls += 1;
            run_call(
                &self.core,
                &self.turn,
                &self.gate,
                &self.events,
                &self.starts,
                seq,
                call,
            )
            .await?;
        }
        Ok(())
    }

    /// The tools the next request offers: exactly what the dispatcher lets
    /// this turn reach (the channel's core and pins, the session's pins,
    /// what discovery activated), abilities and external tools alike, so
    /// the model is never shown a tool it cannot call, nor able to call one
    /// it was not shown.
    fn active_tools(&self) -> Vec<ToolDescriptor> {
        self.core.dispatcher.offered_descriptors(&self.turn)
    }

    /// Whether the run plans (the session is in `plan` mode now).
    fn planning(&self) -> bool {
        self.mode.get() == Mode::Plan
    }

    fn request(&self, notes: &[Message], tools_on: bool) -> Result<ModelRequest, StoreError> {
        let mut messages = Vec::new();
        if let Some(prompt) = &self.core.config.system_prompt {
            messages.push(Message::system(prompt.clone()));
        }
        if self.planning() {
            messages.push(Message::system(planner::planner_instruction()));
        }
        messages.extend(
            self.core
                .store
                .messages(self.turn.session_id())?
                .into_iter()
                .map(|stored| stored.message),
        );
        messages.extend(notes.iter().cloned());
        let tools = if tools_on && self.core.model.supports_tools() {
            self.active_tools()
        } else {
            Vec::new()
        };
        Ok(ModelRequest { messages, tools })
    }

    /// `notes` are run-scoped instructions to the model, never stored in
    /// the conversation; `tools_on` offers the turn's tools.
    async fn model_loop(
        &mut self,
        mut notes: Vec<Message>,
        mut tools_on: bool,
    ) -> Result<RunStatus, StoreError> {
        let mut retried = false;
        let mut plan_asked = false;
        let mut last_text = String::new();
        while self.iterations < self.core.config.max_iterations {
            self.phase(if self.tool_calls == 0 {
                Phase::Planning
            } else {
                Phase::ReadingResult
            });
            deliver_background(&self.core, &self.turn, &self.events)?;
            let request = self.request(&notes, tools_on)?;
            // Hold prose back while it may be a narrated action, but only
            // when a retry could follow.
            let offered = !request.tools.is_empty();
            let discovery = request.tool_names().contains(&DISCOVERY);
            let mut holding = !retried && offered;
            let narration = &self.core.config.narration;
            self.iterations += 1;
            let model_span = tracing::info_span!(
                target: "chalie::session",
                "chat",
                "gen_ai.operation.name" = "chat",
                "gen_ai.request.model" = self.core.model.model_id().unwrap_or("unknown"),
                "chalie.tools.offered" = request.tools.len(),
                "chalie.tool_calls" = tracing::field::Empty,
                "gen_ai.usage.input_tokens" = tracing::field::Empty,
                "gen_ai.usage.output_tokens" = tracing::field::Empty,
                "error.type" = tracing::field::Empty,
            );
            let mut stream = self.core.model.stream(request);
            let mut text = String::new();
            let mut calls = Vec::new();
            let mut failure = None;
            // Entered only while the reply streams, never across a tool call.
            while let Some(chunk) =
                tracing::Instrument::instrument(stream.next(), model_span.clone()).await
            {
                match chunk {
                    Ok(ModelChunk::Text(delta)) => {
                        text.push_str(&delta);
                        if !holding {
                            self.events.push(Event::MessageDelta { delta });
                        } else if narration.judge(&text) == Verdict::Answer {
                            holding = false;
                            self.events.push(Event::MessageDelta {
                                delta: text.clone(),
                            });
                        }
                    }
                    Ok(ModelChunk::ToolCall(call)) => calls.push(call),
                    Ok(ModelChunk::Usage(usage)) => {
                        if let Some(tokens) = usage.input_tokens {
                            model_span.record("gen_ai.usage.input_tokens", tokens);
                        }
                        if let Some(tokens) = usage.output_tokens {
                            model_span.record("gen_ai.usage.output_tokens", tokens);
                        }
                    }
                    Err(error) => {
                        failure = Some(error);
                        break;
                    }
                }
            }
            model_span.record("chalie.tool_calls", calls.len());
            if failure.is_some() {
                model_span.record("error.type", "model_error");
            }
            drop(model_span);
            if let Some(error) = failure {
                let shown = if holding { String::new() } else { text };
                if !shown.is_empty() {
                    self.events.push(Event::MessagePartiallyCompleted {
                        content: shown,
                        reason: "model_error".into(),
                    });
                }
                self.events.push(Event::RunFailed {
                    error: format!("the model failed: {error}"),
                });
                return Ok(RunStatus::Failed);
            }

            // Calls of tools that were not offered (tools off, or a model
            // without tool support calling anyway) are not made.
            if !calls.is_empty() && offered {
                let calls = self.name_calls(calls);
                let seq = self.append(&Message {
                    role: Role::Assistant,
                    content: text.clone(),
                    tool_calls: calls.clone(),
                    tool_call_id: None,
                })?;
                self.phase(Phase::ExecutingTool);
                for call in &calls {
                    self.tool_calls += 1;
                    let outcome = run_call(
                        &self.core,
                        &self.turn,
                        &self.gate,
                        &self.events,
                        &self.starts,
                        seq,
                        call,
                    )
                    .await?;
                    if outcome.rate_limited && tools_on {
                        tools_on = false;
                        notes.push(Message::system(RATE_LIMITED_INSTRUCTION));
                    }
                }
                if !holding {
                    last_text = text;
                }
                continue;
            }

            // A text answer: is it a narrated action?
            self.phase(Phase::Verifying);
            if holding && narration.is_narration(&text) {
                retried = true;
                if discovery {
                    self.discover(&text).await;
                }
                notes.push(Message::assistant(text));
                notes.push(Message::system(RETRY_INSTRUCTION));
                continue;
            }
            if holding && !text.is_empty() {
                self.events.push(Event::MessageDelta {
                    delta: text.clone(),
                });
            }
            // A planning run's answer is the plan: asked once to complete
            // it when sections are missing; the second answer stands.
            if self.planning() && !plan_asked {
                let missing = planner::missing_sections(&text);
                if !missing.is_empty() {
                    plan_asked = true;
                    // Not `message.partially_completed`, which ends the
                    // message: the run goes on and the answer restarts.
                    self.events.push(Event::MessageDiscarded {
                        content: text.clone(),
                        reason: "plan_incomplete".into(),
                    });
                    notes.push(Message::assistant(text));
                    notes.push(Message::system(planner::completion_request(&missing)));
                    continue;
                }
            }
            self.append(&Message::assistant(text.clone()))?;
            self.events.push(Event::MessageCompleted { content: text });
            return Ok(RunStatus::Completed);
        }
        self.events.push(Event::MessagePartiallyCompleted {
            content: last_text,
            reason: "iteration_limit".into(),
        });
        Ok(RunStatus::Partial)
    }

    /// Widens the active tools by running discovery over narrated text, so
    /// the retry can call what the model described.
    async fn discover(&self, narrated: &str) {
        let query: String = narrated
            .trim()
            .chars()
            .take(DISCOVERY_QUERY_CHARS)
            .collect();
        let before = self.turn.activated_tools().len();
        let call =
            crate::ToolCall::new(DISCOVERY, serde_json::json!({ "query": [query] })).with_id(
                format!("{}-discovery-{}", self.turn.run_id(), self.iterations),
            );
        // Its envelope is not shown: the model sees the widened tool list.
        self.core
            .dispatcher
            .dispatch_with_hook(&self.turn, call, &self.gate)
            .await;
        let activated = self.turn.activated_tools();
        if activated.len() > before {
            self.events.push(Event::CapabilityResolved {
                tools: activated[before..].to_vec(),
            });
        }
    }

    /// Gives every call an id unique in the run: a model may omit ids or
    /// repeat one.
    fn name_calls(&self, calls: Vec<ModelToolCall>) -> Vec<ModelToolCall> {
        let mut seen = HashSet::new();
        calls
            .into_iter()
            .enumerate()
            .map(|(index, mut call)| {
                if call.id.is_empty() || !seen.insert(call.id.clone()) {
                    call.id = format!("{}-{}-{index}", self.turn.run_id(), self.iterations);
                    seen.insert(call.id.clone());
                }
                call
            })
            .collect()
    }
}

/// The tools of the executed plan, when the run's last assistant message
/// is an executed plan's.
fn plan_run_tools(
    core: &Core,
    session_id: &str,
    run_id: &str,
) -> Result<Option<Vec<String>>, StoreError> {
    let messages = core.store.messages(session_id)?;
    Ok(messages
        .iter()
        .rev()
        .find(|stored| stored.run_id == run_id && stored.message.role == Role::Assistant)
        .filter(|stored| stored.message.content == PLAN_MESSAGE)
        .map(|stored| {
            stored
                .message
                .tool_calls
                .iter()
                .map(|call| call.name.clone())
                .collect()
        }))
}

/// The tools of the run's unfinished calls that reached an approval: each
/// passed the reach check and the gate before the run stopped.
fn awaiting_approval_tools(core: &Core, run_id: &str) -> Result<Vec<String>, StoreError> {
    let mut tools = Vec::new();
    for call in core.store.tool_calls(run_id)? {
        if call.status == ToolCallStatus::Started
            && core.store.approval(run_id, &call.call_id)?.is_some()
            && !tools.contains(&call.tool)
        {
            tools.push(call.tool);
        }
    }
    Ok(tools)
}

/// The discovery ability a narrated action is looked up with.
const DISCOVERY: &str = "find_tools";
/// The longest query `find_tools` takes per entry.
const DISCOVERY_QUERY_CHARS: usize = 300;

/// The content of the assistant message that carries an executed plan.
const PLAN_MESSAGE: &str = "Executing the approved plan.";
/// What the model is asked once a plan's steps have run.
const PLAN_SUMMARY_INSTRUCTION: &str = "The approved plan has been executed; the result of \
each step is above. Tell the user in a few sentences what was done, naming any step that \
failed and why. Do not call tools.";
