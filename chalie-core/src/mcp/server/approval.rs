//! An `ask` answered by the MCP client's user (SEP-2322, multi round-trip
//! requests). A client that declares form elicitation on protocol
//! 2026-07-28 or newer gets an input-required result carrying the approval
//! question instead of a flat deny; it retries the same call with the
//! user's answer and the opaque `requestState`, and the call runs once if
//! the user approved. Any other client keeps the external channel's deny.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, ErrorData, InputRequest, InputRequests, InputRequiredResult, JsonObject,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;

use crate::dispatch::{Approval, ApprovalRequest, remote::RemoteApproval};

/// The key of the approval question in `inputRequests` / `inputResponses`.
pub const APPROVAL_INPUT: &str = "chalie_approval";

/// How many unanswered questions are kept in all; the oldest is forgotten
/// first, so clients that never answer cannot grow the server without
/// bound.
const MAX_PENDING: usize = 1024;

/// How many unanswered questions one connection may leave; its own oldest
/// is forgotten first, so one client cannot push out everyone else's.
const MAX_PENDING_PER_CONNECTION: usize = 32;

/// What every `requestState` starts with.
const STATE_PREFIX: &str = "chalie-approval-";

/// A question sent and not yet answered: the call it is about, as the
/// client made it, and who may answer it.
struct Pending {
    /// The unguessable part of its `requestState`: without it, nobody
    /// can name the question.
    secret: String,
    /// The connection it was asked on, which alone may answer it; `None`
    /// for a request that came without one (streamable HTTP on
    /// 2026-07-28 is stateless), where holding the state is the proof.
    connection: Option<String>,
    tool: String,
    arguments: Option<JsonObject>,
}

/// The questions sent and not yet answered, oldest first, by the number
/// their `requestState` carries.
#[derive(Default)]
pub(crate) struct Approvals {
    pending: Mutex<Questions>,
}

#[derive(Default)]
struct Questions {
    next: u64,
    by_number: BTreeMap<u64, Pending>,
}

impl Questions {
    /// Takes out the question `state` names, if `connection` may answer
    /// it; a question of another connection stays, as if unknown.
    fn take(&mut self, state: &str, connection: Option<&str>) -> Option<Pending> {
        let (number, secret) = state.strip_prefix(STATE_PREFIX)?.split_once('-')?;
        let number = u64::from_str_radix(number, 16).ok()?;
        let pending = self.by_number.get(&number)?;
        if pending.secret != secret || pending.connection.as_deref() != connection {
            return None;
        }
        self.by_number.remove(&number)
    }

    /// Keeps `pending`, forgetting the connection's oldest question when
    /// it has too many, and the oldest of all when the server does; its
    /// `requestState`.
    fn keep(&mut self, pending: Pending) -> String {
        if let Some(connection) = pending.connection.as_deref() {
            let mut own = self
                .by_number
                .iter()
                .filter(|(_, kept)| kept.connection.as_deref() == Some(connection));
            if let Some((&oldest, _)) = own.next()
                && own.count() + 1 >= MAX_PENDING_PER_CONNECTION
            {
                self.by_number.remove(&oldest);
            }
        }
        if self.by_number.len() >= MAX_PENDING {
            self.by_number.pop_first();
        }
        let number = self.next;
        self.next += 1;
        let state = format!("{STATE_PREFIX}{number:x}-{}", pending.secret);
        self.by_number.insert(number, pending);
        state
    }
}

impl Approvals {
    /// What the gate may do about an `ask` on this request, made on
    /// `connection`: apply the answer it carries, leave the question for a
    /// client that can ask its user, or nothing (the deny stands).
    pub(crate) fn for_request(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        connection: Option<&str>,
    ) -> Result<Option<RemoteApproval>, ErrorData> {
        let Some(state) = &request.request_state else {
            return Ok(can_ask(context).then(RemoteApproval::deferred));
        };
        // Taken out: an answer approves one run, a replay finds nothing.
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(state, connection);
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
    /// `question`, remembered until answered from `connection`.
    pub(crate) fn ask(
        &self,
        asked_about: AskedAbout,
        connection: Option<&str>,
        question: &ApprovalRequest,
    ) -> InputRequiredResult {
        let pending = Pending {
            secret: crate::token::fresh_token(),
            connection: connection.map(str::to_owned),
            tool: asked_about.tool,
            arguments: asked_about.arguments,
        };
        let state = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keep(pending);
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

/// What a retry must repeat: the call's name and arguments as the client
/// sent them, nothing else of the request.
pub(crate) struct AskedAbout {
    pub(crate) tool: String,
    pub(crate) arguments: Option<JsonObject>,
}

/// Whether the client can put a question to its user: a protocol that has
/// input-required results (checked first: it is a string comparison),
/// and form elicitation (an empty `elicitation` object means form).
fn can_ask(context: &RequestContext<RoleServer>) -> bool {
    super::has_input_required(context)
        && context
            .client_capabilities()
            .and_then(|capabilities| capabilities.elicitation)
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
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

#[cfg(test)]
mod tests {
    use super::{MAX_PENDING, MAX_PENDING_PER_CONNECTION, Pending, Questions};

    fn pending(connection: Option<&str>, tool: &str) -> Pending {
        Pending {
            secret: crate::token::fresh_token(),
            connection: connection.map(str::to_owned),
            tool: tool.to_owned(),
            arguments: None,
        }
    }

    #[test]
    fn a_connection_that_never_answers_pushes_out_only_its_own_questions() {
        let mut questions = Questions::default();
        let other = questions.keep(pending(Some("b"), "theirs"));
        let states: Vec<String> = (0..=MAX_PENDING_PER_CONNECTION)
            .map(|_| questions.keep(pending(Some("a"), "mine")))
            .collect();
        // A's oldest went; B's, older still, stayed.
        assert!(questions.take(&states[0], Some("a")).is_none());
        assert!(questions.take(&states[1], Some("a")).is_some());
        assert!(questions.take(&other, Some("b")).is_some());
    }

    #[test]
    fn the_server_keeps_at_most_its_cap_of_questions() {
        let mut questions = Questions::default();
        let first = questions.keep(pending(None, "oldest"));
        for _ in 0..MAX_PENDING {
            questions.keep(pending(None, "newer"));
        }
        assert_eq!(questions.by_number.len(), MAX_PENDING);
        assert!(questions.take(&first, None).is_none());
    }

    #[test]
    fn a_state_names_its_question_only_on_its_connection_and_with_its_secret() {
        let mut questions = Questions::default();
        let state = questions.keep(pending(Some("a"), "mine"));
        assert!(questions.take(&state, Some("b")).is_none());
        assert!(questions.take(&state, None).is_none());
        assert!(questions.take("chalie-approval-0-00", Some("a")).is_none());
        assert!(questions.take("garbage", Some("a")).is_none());
        // None of that used it up.
        assert!(questions.take(&state, Some("a")).is_some());
        assert!(questions.take(&state, Some("a")).is_none());
    }
}
