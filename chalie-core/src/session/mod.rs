//! Sessions and runs: a conversation with a model that calls tools through
//! the [`Dispatcher`](crate::Dispatcher), streamed as typed [`Event`]s and
//! gated by the session's [`Mode`].
//!
//! A [`Sessions`] holds the conversations; [`Sessions::send`] starts a
//! [`Run`] for one user message. The run asks the [`Model`] with the turn's
//! active tools (the always-on core such as `find_tools`, the pinned
//! abilities, and whatever discovery activated through
//! [`Turn::activate_tools`](crate::Turn::activate_tools)), dispatches the
//! calls, feeds the envelopes back and repeats until the model answers or
//! the iteration cap is hit. [`ScriptedModel`] replays a script for tests;
//! with the `openai` feature, `OpenAiModel` speaks to any OpenAI-compatible
//! server.
//!
//! ```
//! use std::sync::Arc;
//! use chalie_core::session::{Event, Reply, ScriptedModel, Sessions};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let registry = chalie_core::registry().unwrap().clone();
//! let dispatcher = Arc::new(chalie_core::Dispatcher::new(registry));
//! let model = Arc::new(ScriptedModel::new([Reply::text("Nothing to do.")]));
//! let sessions = Sessions::builder(dispatcher, model).build();
//! let events = sessions.send("session-1", "anything?").unwrap().finish().await;
//! assert_eq!(events.last().map(Event::name), Some("run.settlement.completed"));
//! # }
//! ```
//!
//! # Modes and the permission gate
//!
//! Abilities declare `effect = read | write`. The policy decides first; the
//! mode may only tighten what it gave, and never holds back a read:
//!
//! | policy says | `approval` (default) | `auto` | `plan` | `plan_collect` |
//! |---|---|---|---|---|
//! | `deny` | denied | denied | denied | denied |
//! | `ask`, a write | asks the human | asks the human | blocked | captured as a plan step |
//! | `allow`, a write | asks the human | runs | blocked | captured as a plan step |
//! | a read | as the policy says | as the policy says | as the policy says | as the policy says |
//! | an `internal` write | runs | runs | blocked | captured as a plan step |
//!
//! - A policy `deny` always wins, in every mode.
//! - `internal` (an ability's declaration, or the policy's setting) means
//!   "no approval prompt", not "outside the modes": an internal write (a
//!   memory store) is blocked in `plan` and planned in `plan_collect`.
//! - `ask` always means a human decides before the call runs: `auto` only
//!   drops the approval the *mode* adds, never one the operator configured.
//!   On a channel without a human, asking is a rejection.
//! - Asking emits `tool.approval_required` and waits on a pending approval
//!   kept in the [`SessionStore`]: [`Sessions::approve`] runs the call,
//!   [`Sessions::reject`] tells the model it was declined, and no answer
//!   within the approval timeout (60 s by default) rejects it with
//!   `tool.approval_timeout`.
//! - `plan` blocks a write with `{"blocked": true, "reason":
//!   "plan_mode_read_only"}` (error `plan-mode-read-only`, a `tool.failed`).
//! - `plan_collect` records the write as the next [`PlanStep`]
//!   (`plan.step_added`, whose `planId` is the session's id; the call
//!   completes with `addedToPlan: true`).
//!   [`Sessions::execute_plan`] later runs the steps in order through the
//!   dispatcher, as `auto` would: accepting the plan approves its writes,
//!   but a policy `ask` still asks and a `deny` still wins. The model,
//!   offered no tools, then tells the user what the steps did.
//! - The mode can change at any moment ([`Sessions::set_mode`]); the next
//!   call the gate checks sees it.
//! - A call dispatched outside a session
//!   ([`Dispatcher::dispatch`](crate::Dispatcher::dispatch)) is gated as in
//!   `auto`, asking the dispatcher's
//!   [`Approver`](crate::dispatch::Approver) (without one, asking is a
//!   rejection).
//!
//! This is the one written gate table; the gate
//! ([step 5](crate::Dispatcher#the-steps-of-a-call)) applies it.
//!
//! # Principals
//!
//! A session belongs to the [`Principal`](crate::turn::Principal) that opened it
//! through [`Sessions::as_principal`]: only that principal may send to it,
//! answer its approvals, change its mode, read or run its plan and follow
//! its runs' events; anyone else gets [`SessionError::NotOwner`] and
//! nothing runs. Every turn of its runs carries the owner
//! ([`Turn::principal`](crate::Turn::principal)), so abilities can check
//! ownership of what they touch. `Sessions`' own methods are the host's
//! and act on every session; a session they open (or one stored before
//! sessions had owners) has no owner, and no principal may act on it until
//! [`Sessions::assign_owner`] gives it one. With the `http` feature,
//! `router` authenticates every request into a principal.
//!
//! # Runs
//!
//! - A reply that narrates an action instead of calling a tool ("I need to
//!   fetch your tasks…") is retried once with a stronger instruction. Prose
//!   that may be such a narration is held back while it streams, so the
//!   discarded text never reaches the client as `message.delta`.
//! - A model without tool support runs conversationally: no tools offered.
//! - When the session's rate limit refuses a call (`tool.degraded`), the
//!   run goes on without tools and the model is told why.
//! - The iteration cap ends a run with `message.partially_completed`.
//!
//! # The event contract
//!
//! What a client can rely on, in every run:
//!
//! - `run.started` is the first event, `run.settlement.completed` the last.
//! - Each tool call ends with one `tool.completed` or `tool.failed` (a
//!   background call's when it finishes). `tool.started` means the call
//!   runs, so it follows every check and any approval:
//!   `tool.approval_required` → `tool.approval_response` → `tool.started`
//!   → `tool.completed` / `tool.failed`. A call rejected, or not answered
//!   in time (`tool.approval_timeout`), goes to `tool.failed` without ever
//!   starting; a call refused before the gate (an unknown tool, bad
//!   arguments, a denial, `plan` mode's block) is started and failed at
//!   once. `tool.progress` comes between the start and the outcome.
//! - `message.partially_completed` ends the message: only `run.failed`
//!   and the settlement may follow. A reply withdrawn so the model answers
//!   again (a plan missing sections) is `message.discarded`, and the
//!   `message.delta`s after it replace its text.
//! - `tool.completed` carries the `card` the ability declared with
//!   [`ToolResult::with_card`](crate::ToolResult::with_card), made safe
//!   there (strings without control characters, at most
//!   [`CARD_MAX_BYTES`](crate::result::CARD_MAX_BYTES)); never the envelope
//!   the model read. The stores keep each call's card, and
//!   [`Sessions::history`] gives a session's messages back with their
//!   calls and cards, so a client rebuilds its cards after a reload.
//!
//! # Persistence
//!
//! Sessions, runs, messages, each message's tool calls, pending approvals
//! and plans live behind [`SessionStore`]: [`MemoryStore`] in memory or,
//! with the default `sqlite` feature, `SqliteStore` in an embedded
//! database. A process that stops while an approval is pending loses
//! nothing: reopened, [`Sessions::approve`] still applies, and
//! [`Sessions::resume`] completes the run.

pub(crate) mod error;
pub(crate) mod event;
pub(crate) mod event_log;
pub(crate) mod history;
#[cfg(feature = "http")]
mod http;
mod inspect;
pub(crate) mod model;
pub(crate) mod owner;
pub(crate) mod run;
pub(crate) mod sessions;
pub(crate) mod store;

pub use crate::dispatch::mode::{Mode, UnknownMode};
pub use event::{Activity, Event, EventError, Phase};
pub use history::{HistoryMessage, HistoryToolCall};
#[cfg(feature = "http")]
pub use http::errors as http_errors;
#[cfg(feature = "http")]
pub use http::{
    Authenticate, BearerTokens, TokenError, ToolsApi, Unauthorized, console, console_at, router,
};
pub use inspect::{Candidate, CountTokens, Discover, DiscoveryReport, RungReport};
pub use store::memory::MemoryStore;
// The mode is the gate's; the session keeps the live cell of its runs.
pub(crate) use crate::dispatch::mode;
pub use error::SessionError;
pub use event_log::{EventLog, EventStream};
#[cfg(feature = "anthropic")]
pub use model::anthropic::AnthropicModel;
#[cfg(feature = "openai")]
pub use model::openai::OpenAiModel;
pub use model::scripted::{Reply, ScriptedModel};
pub use model::{Message, Model, ModelChunk, ModelError, ModelRequest, ModelToolCall, Role, Usage};
pub use owner::AsPrincipal;
pub use sessions::{Run, Sessions, SessionsBuilder};
#[cfg(feature = "postgres")]
pub use store::postgres::PgStore;
pub use store::records::{Listing, MAX_COLLECTION_LEN, Record, RecordStore};
#[cfg(feature = "sqlite")]
pub use store::sqlite::SqliteStore;
pub use store::{
    ApprovalRecord, ApprovalState, Decision, DecisionSink, PlanStep, PolicyRecord, PolicySink,
    RunRecord, RunStatus, SessionRecord, SessionStore, StoreError, StoredMessage, ToolCallRecord,
    ToolCallStatus,
};
