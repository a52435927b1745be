//! One tool call of a run: events before and after, the record, the
//! envelope for the model.

use serde_json::Value;

use super::core::Core;
use super::core::lock;
use super::event::{Activity, Event, EventError};
use super::model::{Message, ModelToolCall};
use super::seam::millis;
use super::store::{StoreError, ToolCallRecord, ToolCallStatus};
use super::stream::EventLog;
use crate::{ACT_SUMMARY_FIELD, CallStatus, Refusal, ToolCall, Turn};

/// What the run learns from one call.
pub(crate) struct CallOutcome {
    /// The session's rate limit refused it: no more tools this run.
    pub(crate) rate_limited: bool,
}

/// Dispatches `call`, streaming its events and recording it.
pub(crate) async fn run_call(
    core: &Core,
    turn: &Turn,
    events: &EventLog,
    message_seq: u64,
    call: &ModelToolCall,
) -> Result<CallOutcome, StoreError> {
    let registry = core.dispatcher.registry();
    let label = call
        .arguments
        .get(ACT_SUMMARY_FIELD)
        .and_then(Value::as_str)
        .filter(|summary| !summary.trim().is_empty())
        .map(str::to_owned)
        .or_else(|| {
            registry
                .get(&call.name)
                .map(|entry| entry.spec().tooltip())
                .filter(|tooltip| !tooltip.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| call.name.clone());
    events.push(Event::ToolStarted {
        tool_key: call.name.clone(),
        call_id: call.id.clone(),
        activity: Activity { label },
    });
    let mut record = ToolCallRecord {
        run_id: turn.run_id().to_owned(),
        message_seq,
        call_id: call.id.clone(),
        tool: call.name.clone(),
        input: call.arguments.clone(),
        status: ToolCallStatus::Started,
        envelope: None,
        execution_ms: 0,
    };
    core.store.put_tool_call(&record)?;

    let activated_before = turn.activated_tools().len();
    let dispatched = core
        .dispatcher
        .dispatch(
            turn,
            ToolCall::new(call.name.clone(), call.arguments.clone()).with_id(call.id.clone()),
        )
        .await;
    let trail_record = dispatched.record();
    let execution_ms = millis(trail_record.duration);
    let mut rate_limited = false;
    let in_background = trail_record.status == CallStatus::Pending;
    match dispatched.result.as_error() {
        // A receipt: `tool.completed` comes with the final result, which a
        // later request of this run (or the next run) delivers.
        None if in_background => {}
        None => {
            let added_to_plan = dispatched.is_planned();
            events.push(Event::ToolCompleted {
                tool_key: call.name.clone(),
                call_id: call.id.clone(),
                execution_ms,
                success: true,
                reused: trail_record.reused,
                added_to_plan,
            });
        }
        Some(error) => {
            let refusal = dispatched.refusal();
            let blocked = refusal == Some(Refusal::PlanBlocked);
            events.push(Event::ToolFailed {
                tool_key: call.name.clone(),
                call_id: call.id.clone(),
                execution_ms,
                error: EventError {
                    code: error.code().to_string(),
                    message: error.message().to_owned(),
                },
                blocked,
                reason: blocked.then(|| "plan_mode_read_only".to_owned()),
            });
            if refusal == Some(Refusal::RateLimited) {
                rate_limited = true;
                events.push(Event::ToolDegraded {
                    tool_key: call.name.clone(),
                    call_id: call.id.clone(),
                    reason: "rate_limited".into(),
                });
            }
        }
    }
    let activated = turn.activated_tools();
    if activated.len() > activated_before {
        events.push(Event::CapabilityResolved {
            tools: activated[activated_before..].to_vec(),
        });
    }

    record.status = if in_background {
        ToolCallStatus::Started
    } else if dispatched.result.is_success() {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    record.execution_ms = execution_ms;
    record.envelope = Some(dispatched.envelope.clone());
    core.store.put_tool_call(&record)?;
    if in_background {
        lock(&core.background).insert(call.id.clone(), record);
    }
    core.store.append_message(
        turn.session_id(),
        turn.run_id(),
        &Message::tool(call.id.clone(), dispatched.envelope),
    )?;
    Ok(CallOutcome { rate_limited })
}

/// Delivers the background calls of the session that finished since the
/// last request: each final envelope goes into the conversation (so the
/// next model request carries it, in this run or the next), its record is
/// completed, and `tool.completed` / `tool.failed` goes out.
pub(crate) fn deliver_background(
    core: &Core,
    turn: &Turn,
    events: &EventLog,
) -> Result<(), StoreError> {
    let finished = core
        .dispatcher
        .background(turn.session_id())
        .take_finished();
    for done in finished {
        let call_id = done.call_id().to_owned();
        let trail = done.record();
        let execution_ms = millis(trail.duration);
        let tool = trail.tool.clone();
        match done.result.as_error() {
            None => events.push(Event::ToolCompleted {
                tool_key: tool.clone(),
                call_id: call_id.clone(),
                execution_ms,
                success: true,
                reused: false,
                added_to_plan: false,
            }),
            Some(error) => events.push(Event::ToolFailed {
                tool_key: tool.clone(),
                call_id: call_id.clone(),
                execution_ms,
                error: EventError {
                    code: error.code().to_string(),
                    message: error.message().to_owned(),
                },
                blocked: false,
                reason: None,
            }),
        }
        if let Some(mut record) = lock(&core.background).remove(&call_id) {
            record.status = if done.result.is_success() {
                ToolCallStatus::Completed
            } else {
                ToolCallStatus::Failed
            };
            record.execution_ms = execution_ms;
            record.envelope = Some(done.envelope.clone());
            core.store.put_tool_call(&record)?;
        }
        // A user-side message, not a second tool message: the call already
        // has its answer (the receipt), and providers allow one per call.
        core.store.append_message(
            turn.session_id(),
            turn.run_id(),
            &Message::user(format!(
                "The background call `{call_id}` ({tool}) has finished. Its result:\n{}",
                done.envelope
            )),
        )?;
    }
    Ok(())
}
