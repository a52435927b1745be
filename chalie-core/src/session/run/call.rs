//! One tool call of a run: events before and after, the record, the
//! envelope for the model.

use std::sync::Arc;

use serde_json::Value;

use crate::session::event::{Activity, Event, EventError};
use crate::session::event_log::EventLog;
use crate::session::model::{Message, ModelToolCall};
use crate::session::run::gate_hook::{SessionGate, millis};
use crate::session::run::shared::Core;
use crate::session::run::start::Starts;
use crate::session::store::{StoreError, ToolCallRecord, ToolCallStatus};
use crate::{ToolCall, Turn, descriptor::ACT_SUMMARY_FIELD, dispatch::Refusal, turn::CallStatus};

/// What the run learns from one call.
pub(crate) struct CallOutcome {
    /// The session's rate limit refused it: no more tools this run.
    pub(crate) rate_limited: bool,
}

/// Dispatches `call`, streaming its events and recording it. Its
/// `tool.started` goes out when the call runs (see [`Starts`]), after any
/// approval, and before its outcome.
pub(crate) async fn run_call(
    core: &Core,
    turn: &Turn,
    gate: &SessionGate,
    events: &EventLog,
    starts: &Starts,
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
    starts.prepare(
        &call.id,
        Event::ToolStarted {
            tool_key: call.name.clone(),
            call_id: call.id.clone(),
            activity: Activity { label },
        },
    );
    let mut record = ToolCallRecord {
        run_id: turn.run_id().to_owned(),
        message_seq,
        call_id: call.id.clone(),
        tool: call.name.clone(),
        input: call.arguments.clone(),
        status: ToolCallStatus::Started,
        envelope: None,
        execution_ms: 0,
        card: None,
    };
    core.store.put_tool_call(&record)?;

    let activated_before = turn.activated_tools().len();
    let dispatched = core
        .dispatcher
        .dispatch_with_hook(
            turn,
            ToolCall::new(&*call.name, call.arguments.clone()).with_id(&*call.id),
            gate,
        )
        .await;
    // A call refused before the gate starts now, just before its outcome.
    starts.settle(&call.id, events);
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
                card: dispatched.result.card().cloned(),
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
        ToolCallStatus::Background
    } else if dispatched.result.is_success() {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    record.execution_ms = execution_ms;
    record.envelope = Some(dispatched.envelope.clone());
    record.card = dispatched.result.card().cloned();
    // The outcome and the message the model reads are stored together: a
    // run resumed elsewhere never finds a finished call without its result
    // (and runs it again) nor a result without its record.
    core.store.record_result(
        &record,
        turn.session_id(),
        &Message::tool(call.id.clone(), dispatched.envelope),
    )?;
    if in_background {
        keep_when_finished(core, turn.session_id(), record);
    }
    Ok(CallOutcome { rate_limited })
}

/// Stores the final envelope of a background call as soon as it finishes
/// (`finished`), whether or not a run is going: it then survives a restart
/// and reaches the model with the session's next request.
fn keep_when_finished(core: &Core, session_id: &str, mut record: ToolCallRecord) {
    let background = core.dispatcher.background(session_id);
    let store = Arc::clone(&core.store);
    tokio::spawn(async move {
        // `None`: the runtime is shutting down; the record stays
        // `background` and a later run reports the call as interrupted.
        let Some(done) = background.wait(&record.call_id).await else {
            return;
        };
        record.status = ToolCallStatus::Finished;
        record.execution_ms = millis(done.record().duration);
        record.card = done.result.card().cloned();
        record.envelope = Some(done.envelope);
        // A store that fails here leaves the call `background`, which the
        // next run reports as interrupted rather than losing silently.
        let _ = store.put_tool_call(&record);
        // Only now: until the record says `finished`, the slot tells a run
        // that this process still holds the call.
        background.forget(&record.call_id);
    });
}

/// How the message delivering a background call's result to the model
/// begins. It is stored as the user's (the call already has its one tool
/// answer, the receipt), so [`is_background_notice`] tells it apart.
const BACKGROUND_NOTICE: &str = "The background call ";

/// Whether `message` delivers a background call's result to the model:
/// the user never wrote it, and a client's history leaves it out (the
/// call's card stands for it).
pub(crate) fn is_background_notice(message: &Message) -> bool {
    message.role == crate::session::model::Role::User
        && message.content.starts_with(BACKGROUND_NOTICE)
}

/// Delivers the session's background calls that finished since the last
/// request (also before a restart): each final envelope goes into the
/// conversation, so the next model request carries it, in this run or the
/// next; its record is completed and `tool.completed` / `tool.failed` goes
/// out. A call this process is not running and that never finished was
/// cut off by a stop; the model is told so, and can call it again.
pub(crate) fn deliver_background(
    core: &Core,
    turn: &Turn,
    events: &EventLog,
) -> Result<(), StoreError> {
    let records = core.store.background_calls(turn.session_id())?;
    if records.is_empty() {
        return Ok(());
    }
    let held = core.dispatcher.background(turn.session_id());
    let running = held.pending();
    for mut record in records {
        let (envelope, message) = match record.status {
            ToolCallStatus::Finished => {
                let envelope = record.envelope.clone().unwrap_or_default();
                let message = format!(
                    "{BACKGROUND_NOTICE}`{}` ({}) has finished. Its result:\n{envelope}",
                    record.call_id, record.tool
                );
                (envelope, message)
            }
            // Still running here, or finished and being stored.
            _ if running.contains(&record.call_id) || held.poll(&record.call_id).is_some() => {
                continue;
            }
            _ => {
                let result = crate::ToolResult::error(
                    "background-interrupted",
                    format!(
                        "the background call `{}` ({}) was cut off when the program stopped; it has no result",
                        record.call_id, record.tool
                    ),
                    "call the tool again if its result is still needed",
                );
                let envelope = crate::envelope::render_envelope(&record.tool, None, &result);
                let message = format!(
                    "{BACKGROUND_NOTICE}`{}` ({}) did not finish:\n{envelope}",
                    record.call_id, record.tool
                );
                (envelope, message)
            }
        };
        let parsed = crate::envelope::Envelope::parse(&envelope).ok();
        let failure = match &parsed {
            Some(parsed) if parsed.is_success() => None,
            Some(parsed) => Some(parsed.code().unwrap_or("failed").to_owned()),
            None => Some("non-canonical-result".to_owned()),
        };
        match &failure {
            None => events.push(Event::ToolCompleted {
                tool_key: record.tool.clone(),
                call_id: record.call_id.clone(),
                execution_ms: record.execution_ms,
                success: true,
                reused: false,
                added_to_plan: false,
                card: record.card.clone(),
            }),
            Some(code) => events.push(Event::ToolFailed {
                tool_key: record.tool.clone(),
                call_id: record.call_id.clone(),
                execution_ms: record.execution_ms,
                error: EventError {
                    code: code.clone(),
                    message: parsed
                        .as_ref()
                        .map(|parsed| parsed.content.clone())
                        .unwrap_or_default(),
                },
                blocked: false,
                reason: None,
            }),
        }
        // A user-side message, not a second tool message: the call already
        // has its one tool answer (the receipt).
        core.store
            .append_message(turn.session_id(), turn.run_id(), &Message::user(message))?;
        record.status = match failure {
            None => ToolCallStatus::Completed,
            Some(_) => ToolCallStatus::Failed,
        };
        record.envelope = Some(envelope);
        core.store.put_tool_call(&record)?;
    }
    Ok(())
}

/// A write whose body began under a driver that stopped before its result
/// was stored: it may have taken effect, so a resumed run does not run it
/// again. The model reads that it was interrupted, and the run goes on.
pub(crate) fn report_interrupted_write(
    core: &Core,
    turn: &Turn,
    events: &EventLog,
    message_seq: u64,
    call: &ModelToolCall,
) -> Result<(), StoreError> {
    let result = crate::ToolResult::error(
        "write-interrupted",
        format!(
            "`{}` was running when the program driving this conversation stopped; it may or may not have taken effect",
            call.name
        ),
        "do not repeat it blindly: check whether it took effect (read the data back, or ask the user), and call it again only if it did not",
    )
    .with_retry(crate::result::Retry::Never);
    let envelope = crate::envelope::render_envelope(&call.name, None, &result);
    events.push(Event::ToolFailed {
        tool_key: call.name.clone(),
        call_id: call.id.clone(),
        execution_ms: 0,
        error: EventError {
            code: "write-interrupted".into(),
            message: result
                .as_error()
                .map(|error| error.message().to_owned())
                .unwrap_or_default(),
        },
        blocked: false,
        reason: None,
    });
    let record = ToolCallRecord {
        run_id: turn.run_id().to_owned(),
        message_seq,
        call_id: call.id.clone(),
        tool: call.name.clone(),
        input: call.arguments.clone(),
        status: ToolCallStatus::Failed,
        envelope: Some(envelope.clone()),
        execution_ms: 0,
        card: None,
    };
    core.store.record_result(
        &record,
        turn.session_id(),
        &Message::tool(call.id.clone(), envelope),
    )?;
    Ok(())
}
