//! An `ask` answered by the MCP client's user (SEP-2322, multi round-trip
//! requests). A client that declares form elicitation on protocol
//! 2026-07-28 or newer gets an input-required result carrying the approval
//! question instead of a flat deny; it retries the same call with the
//! user's answer and the opaque `requestState`, and the call runs once if
//! the user approved. Any other client keeps the external channel's deny.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, ErrorData, InputRequest, InputRequests, InputRequiredResult, JsonObject,
    ProtocolVersion,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::dispatch::{Approval, ApprovalRequest, remote::RemoteApproval};

/// The key of the approval question in `inputRequests` / `inputResponses`.
pub const APPROVAL_INPUT: &str = "chalie_approval";

/// How many unanswered questions are kept; the oldest is forgotten first,
/// so a client that never answers cannot grow the server without bound.
const MAX_PENDING: usize = 1024;

/// A question sent and not yet answered: the call it is about, as the
/// client made it.
struct Pending {
    tool: String,
    arguments: Option<JsonObject>,
}

/// The questions sent and not yet answered, by their `requestState`.
pub(crate) struct Approvals {
    next: AtomicU64,
    /// Makes a server's states unlike another's, so a stale state from a
    /// restarted server is unknown rather than another call's.
    salt: u64,
    pending: Mutex<Questions>,
}

#[derive(Default)]
struct Questions {
    by_state: HashMap<String, Pending>,
    order: VecDeque<String>,
}

impl Default for Approvals {
    fn default() -> Self {
        Approvals {
            next: AtomicU64::new(1),
            salt: RandomState::new().hash_one(std::process::id()),
            pending: Mutex::new(Questions::default()),
        }
    }
}

impl Approvals {
    /// What the gate may do about an `ask` on this request: apply the
    /// answer it carries, leave the question for a client that can ask its
    /// user, or nothing (the deny stands).
    pub(crate) fn for_request(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<RemoteApproval>, ErrorData> {
        let Some(state) = &request.request_state else {
            return Ok(can_ask(context).then(RemoteApproval::deferred));
        };
        // Taken out: an answer approves one run, a replay finds nothing.
        let pending = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            let taken = pending.by_state.remove(state);
            if taken.is_some() {
                pending.order.retain(|kept| kept != state);
            }
            taken
        };
        let Some(pending) = pending else {
            return Err(ErrorData::invalid_params(
                "this `requestState` is unknown or its approval was already used; call the tool again without it to be asked again",
                None,
            ));
        };
        if pending.tool != request.name || pending.arguments != request.arguments {
            return Err(ErrorData::invalid_params(
                "the retried call differs from the one the user was asked about; retry it with the same name and arguments",
                None,
            ));
        }
        let approval = request
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(APPROVAL_INPUT))
            .map_or(Approval::Rejected, answer);
        Ok(Some(RemoteApproval::Answered(approval)))
    }

    /// The input-required result asking the client's user about
    /// `question`, remembered until answered.
    pub(crate) fn ask(
        &self,
        request: &CallToolRequestParams,
        question: &ApprovalRequest,
    ) -> InputRequiredResult {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let state = format!("chalie-approval-{:016x}-{number}", self.salt);
        {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            if pending.order.len() >= MAX_PENDING
                && let Some(oldest) = pending.order.pop_front()
            {
                pending.by_state.remove(&oldest);
            }
            pending.order.push_back(state.clone());
            pending.by_state.insert(
                state.clone(),
                Pending {
                    tool: request.name.to_string(),
                    arguments: request.arguments.clone(),
                },
            );
        }
        let mut requests = InputRequests::new();
        requests.insert(
            APPROVAL_INPUT.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: message(question),
                    requested_schema: schema(),
                },
            )),
        );
        InputRequiredResult::new(Some(requests), Some(state))
    }
}

/// Whether the client can put a question to its user: form elicitation
/// (an empty `elicitation` object means form) on a protocol that has
/// input-required results.
fn can_ask(context: &RequestContext<RoleServer>) -> bool {
    let recent = context
        .protocol_version()
        .is_some_and(|version| version.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    let form = context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
    recent && form
}

/// The user's answer: only an accepted form saying `approve: true` runs
/// the call; a decline, a cancel or anything unreadable does not.
fn answer(response: &Value) -> Approval {
    let Ok(result) = serde_json::from_value::<ElicitResult>(response.clone()) else {
        return Approval::Rejected;
    };
    let approved = result.action == ElicitationAction::Accept
        && result
            .content
            .as_ref()
            .and_then(|content| content.get("approve"))
            .and_then(Value::as_bool)
            == Some(true);
    match approved {
        true => Approval::Approved,
        false => Approval::Rejected,
    }
}

/// What the user reads: the permission, the model's summary when given,
/// and the validated arguments.
fn message(question: &ApprovalRequest) -> String {
    let mut message = format!("Allow `{}`?", question.permission);
    if let Some(summary) = &question.summary {
        message.push_str(&format!(" {summary}"));
    }
    message.push_str(&format!("\nArguments: {}", question.arguments));
    message
}

fn schema() -> ElicitationSchema {
    let builder = ElicitationSchema::builder().required_bool_with("approve", |approve| {
        approve.title("Approve").description("Run this call once.")
    });
    // One required property that exists: the build cannot fail; were it
    // to, an empty form still gets an answer, which then approves nothing.
    builder
        .build()
        .unwrap_or_else(|_| ElicitationSchema::new(Default::default()))
}
