//! Every refusal carries a typed `Refusal` (the README's promise): each error
//! code the dispatcher writes is provoked here through a dispatcher built as
//! a user builds one, and its `Refusal` checked. The list of codes is read
//! from the dispatcher's own source, so a new refusal without a case here
//! fails the walk.

use std::sync::Arc;
use std::time::Duration;

use chalie_core::dispatch::{
    Admission, Dispatched, RateCounter, RateCounterError, RateLimit, Refusal,
};
use chalie_core::{Channel, Dispatcher, ToolCall, Turn};
use serde_json::{Value, json};

use crate::abilities::runs;
use crate::{envelope, registry};

/// The sources whose `ToolResult::error(...)` codes are the dispatcher's own.
const DISPATCHER_SOURCES: [&str; 2] = [
    include_str!("../../src/dispatch/errors.rs"),
    include_str!("../../src/dispatch/validate.rs"),
];

/// Codes the dispatcher writes that are not refusals: the ability ran (or
/// started to) and failed itself.
const ABILITY_FAILURES: [&str; 2] = ["ability-panicked", "non-canonical-result"];

/// Refusals only a session's gate hook can produce (the plan modes, the
/// record of a write's start), each typed where the gate returns it
/// (`Refusal::PlanBlocked`, `PlanUnavailable`, `NotRecorded`); a plain
/// dispatcher cannot reach them, and the session tests check what they
/// drive (`modes.rs`: `"blocked":true` comes from `Refusal::PlanBlocked`).
const SESSION_ONLY: [&str; 3] = [
    "plan-mode-read-only",
    "plan-unavailable",
    "write-not-recorded",
];

/// Every code a dispatcher source passes to `ToolResult::error`.
fn dispatcher_codes() -> Vec<String> {
    let mut codes = Vec::new();
    for source in DISPATCHER_SOURCES {
        for rest in source.split("ToolResult::error(").skip(1) {
            let rest = rest.trim_start();
            let Some(rest) = rest.strip_prefix('"') else {
                panic!("a dispatcher error code is not a literal: {rest:.60}");
            };
            let code = rest.split('"').next().unwrap_or_default();
            if !codes.iter().any(|known| known == code) {
                codes.push(code.to_owned());
            }
        }
    }
    codes
}

/// A counter whose store is down.
struct BrokenCounter;

impl RateCounter for BrokenCounter {
    fn admit(
        &self,
        _session_id: &str,
        _scope: chalie_core::dispatch::RateScope<'_>,
        _limit: RateLimit,
    ) -> Result<Admission, RateCounterError> {
        Err(RateCounterError("the database is unreachable".into()))
    }
}

fn turn(channel: Channel, session: &str) -> Turn {
    Turn::builder(channel).session_id(session).build()
}

async fn call(dispatcher: &Dispatcher, turn: &Turn, name: &str, arguments: Value) -> Dispatched {
    dispatcher
        .dispatch(turn, ToolCall::new(name, arguments))
        .await
}

/// The last of `calls` calls of `tool` on a chat where it is pinned and
/// allowed, with the builder changed by `configure` first.
async fn provoke(
    session: &str,
    tool: &str,
    arguments: Value,
    calls: usize,
    configure: impl FnOnce(
        chalie_core::dispatch::DispatcherBuilder,
    ) -> chalie_core::dispatch::DispatcherBuilder,
) -> Dispatched {
    let builder = Dispatcher::builder(registry())
        .allow(Channel::Chat, [tool])
        .unwrap()
        .pin(Channel::Chat, [tool]);
    let dispatcher = configure(builder).build();
    let turn = turn(Channel::Chat, session);
    let mut last = None;
    for _ in 0..calls {
        last = Some(call(&dispatcher, &turn, tool, arguments.clone()).await);
    }
    last.unwrap()
}

/// What each code's case did: the last call's result, and whether that
/// call's ability ran.
async fn case(code: &str) -> Option<(Dispatched, bool)> {
    let session = format!("refusal-{code}");
    let lookup = json!({ "query": "tides" });
    let done = match code {
        "unknown-tool" => {
            let dispatcher = Dispatcher::builder(registry()).build();
            call(&dispatcher, &turn(Channel::Chat, &session), "lokup", lookup).await
        }
        "tool-not-available" => {
            // Allowed by the policy, but never offered to this turn.
            let dispatcher = Dispatcher::builder(registry())
                .allow(Channel::Chat, ["lookup"])
                .unwrap()
                .build();
            call(
                &dispatcher,
                &turn(Channel::Chat, &session),
                "lookup",
                lookup,
            )
            .await
        }
        "invalid-arguments" => provoke(&session, "lookup", json!({ "limit": 3 }), 1, |b| b).await,
        "missing-permission-tag" => {
            provoke(&session, "orders", json!({}), 1, |builder| {
                builder.require_tags("orders", ["orders:read"])
            })
            .await
        }
        "rate-limited" => {
            provoke(&session, "orders", json!({}), 2, |builder| {
                builder.rate_limit(RateLimit::new(1, Duration::from_secs(60)))
            })
            .await
        }
        "rate-limit-unavailable" => {
            provoke(&session, "orders", json!({}), 1, |builder| {
                builder.rate_counter(Arc::new(BrokenCounter))
            })
            .await
        }
        "permission-denied" => {
            let mut policy = chalie_core::dispatch::Policy::new();
            policy
                .set(
                    Channel::Chat,
                    "orders",
                    chalie_core::dispatch::Setting::Deny,
                )
                .unwrap();
            let dispatcher = Dispatcher::builder(registry())
                .policy(policy)
                .pin(Channel::Chat, ["orders"])
                .build();
            call(
                &dispatcher,
                &turn(Channel::Chat, &session),
                "orders",
                json!({}),
            )
            .await
        }
        "approval-rejected" => {
            // Left at `ask`, and no approver to ask.
            let dispatcher = Dispatcher::builder(registry())
                .pin(Channel::Chat, ["orders"])
                .build();
            call(
                &dispatcher,
                &turn(Channel::Chat, &session),
                "orders",
                json!({}),
            )
            .await
        }
        "invalid-permission" => {
            let arguments = json!({ "folder": "reports/2025" });
            provoke(&session, "archive_folder", arguments, 1, |b| b).await
        }
        _ => return None,
    };
    // The rate limit's case makes one admitted call before the refused one.
    let admitted_before = usize::from(code == "rate-limited");
    let ran = runs(&session).len() > admitted_before;
    Some((done, ran))
}

/// The `Refusal` each refusal code must carry.
fn expected(code: &str) -> Option<Refusal> {
    Some(match code {
        "unknown-tool" => Refusal::UnknownTool,
        "tool-not-available" => Refusal::NotAvailable,
        "invalid-arguments" => Refusal::InvalidArguments,
        "missing-permission-tag" => Refusal::MissingTags,
        "rate-limited" | "rate-limit-unavailable" => Refusal::RateLimited,
        "permission-denied" => Refusal::Denied,
        "approval-rejected" => Refusal::Rejected,
        "invalid-permission" => Refusal::InvalidPermission,
        _ => return None,
    })
}

#[tokio::test]
async fn every_refusal_code_of_the_dispatcher_carries_its_typed_refusal() {
    let codes = dispatcher_codes();
    assert!(
        codes.len() >= 12,
        "the walk read the dispatcher's codes: {codes:?}"
    );
    let mut walked = Vec::new();
    for code in &codes {
        if ABILITY_FAILURES.contains(&code.as_str()) {
            continue;
        }
        if SESSION_ONLY.contains(&code.as_str()) {
            continue;
        }
        let Some(want) = expected(code) else {
            panic!(
                "`{code}` is a dispatcher error with no refusal case here; give it a `Refusal` and a case"
            );
        };
        let Some((done, ran)) = case(code).await else {
            panic!("`{code}` has an expected refusal but no case that provokes it");
        };
        assert_eq!(
            envelope(&done).code(),
            Some(code.as_str()),
            "{}",
            done.envelope
        );
        assert_eq!(done.refusal(), Some(want), "{code}: {}", done.envelope);
        assert!(!ran, "{code}: a refused call ran");
        walked.push(code.clone());
    }
    assert!(
        walked.iter().any(|code| code == "invalid-permission"),
        "{walked:?}"
    );
}

/// The other side: a call that runs, and fails on its own, is no refusal.
#[tokio::test]
async fn an_ability_that_fails_itself_is_not_a_refusal() {
    let done = provoke("refusal-none-boom", "boom", json!({}), 1, |b| b).await;
    assert_eq!(envelope(&done).code(), Some("ability-panicked"));
    assert_eq!(done.refusal(), None);
}
