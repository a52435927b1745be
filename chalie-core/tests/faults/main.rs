//! Faults and load where users compose the parts: the router built the
//! way the README builds it, attacked with hostile requests and held open
//! by many streaming clients; the SQLite store damaged, full and shared;
//! processes killed mid-run, mid-write and mid-background call;
//! PostgreSQL restarted under running writes.
//!
//! Sizes come from the environment (`CHALIE_SOAK_*`): each test's default is
//! the size CI affords (`cargo xtask soak` sets none) and
//! `cargo xtask soak --full` sets the full one; each test appends
//! its figures to the file `CHALIE_SOAK_REPORT` names, for the soak table.

// A failed unwrap is a failed test, which is what a test should do.
#![allow(clippy::unwrap_used)]

mod background_kill;
mod hostile_http;
mod kill;
mod load;
#[cfg(feature = "postgres")]
mod pg_restart;
mod sqlite;

use std::sync::Arc;

use chalie_core::session::{
    Message, Model, ModelChunk, ModelError, ModelRequest, ModelToolCall, Role, SessionStore,
    Sessions,
};
use chalie_core::{Channel, Dispatcher, Params, ToolResult, Turn, ability, dispatch::Policy};
use futures::stream::BoxStream;
use serde_json::json;

/// Parameters of [`lookup()`].
#[derive(Params)]
pub struct LookupParams {
    /// What to look up.
    pub query: String,
}

/// Looks a topic up in the notes. Use it to read, never to change.
#[ability(
    effect = read,
    examples = ["look up rust", "find notes on tokio", "search for serde", "what do we know about json", "show notes about tests", "look for the dispatcher"],
)]
pub async fn lookup(params: LookupParams) -> ToolResult {
    ToolResult::success(format!("notes on {}", params.query))
}

/// Parameters of [`delete_task()`].
#[derive(Params)]
pub struct DeleteParams {
    /// The task's id.
    pub id: u32,
}

/// Deletes one task by id. Use it only when the user asks to remove a task.
#[ability(
    effect = write,
    examples = ["delete task 7", "remove the rent task", "drop that todo", "delete my first task", "get rid of task 3", "cancel that task"],
)]
pub async fn delete_task(params: DeleteParams, turn: &Turn) -> ToolResult {
    let _ = turn;
    ToolResult::success(format!("deleted task {}", params.id))
}

/// A model that answers each conversation on its own, whatever runs
/// interleave: a user message gets one call of `tool` with the message
/// as its argument (`{"query": ...}` for `lookup`; otherwise `{"id": N}`,
/// N the message's last word when it is a number, else 7), the call's
/// result gets a text naming the message.
pub struct PerConversation {
    /// The tool each user message calls.
    pub tool: &'static str,
}

impl Model for PerConversation {
    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<ModelChunk, ModelError>> {
        let asked = request
            .messages
            .iter()
            .rev()
            .find(|message| message.role == Role::User)
            .map(|message: &Message| message.content.clone())
            .unwrap_or_default();
        let answered = request
            .messages
            .last()
            .is_some_and(|message| message.role == Role::Tool);
        let chunk = if answered {
            ModelChunk::Text(format!("answered {asked}"))
        } else {
            let arguments = if self.tool == "lookup" {
                json!({ "query": asked })
            } else {
                let id = asked
                    .rsplit(' ')
                    .next()
                    .and_then(|last| last.parse::<u32>().ok())
                    .unwrap_or(7);
                json!({ "id": id })
            };
            ModelChunk::ToolCall(ModelToolCall {
                id: String::new(),
                name: self.tool.to_owned(),
                arguments,
            })
        };
        Box::pin(futures::stream::iter([Ok(chunk)]))
    }
}

/// Sessions the way the README builds them: a dispatcher over the
/// registry, `lookup` allowed on chat, `delete_task` asked for.
pub fn sessions(
    model: Arc<dyn Model>,
    store: Arc<dyn SessionStore>,
) -> chalie_core::session::SessionsBuilder {
    let mut policy = Policy::new();
    policy
        .set(
            Channel::Chat,
            "lookup",
            chalie_core::dispatch::Setting::Allow,
        )
        .unwrap();
    let dispatcher = Dispatcher::builder(chalie_core::registry().unwrap().clone())
        .policy(policy)
        .build();
    Sessions::builder(Arc::new(dispatcher), model)
        .store(store)
        .pinned(["lookup", "delete_task", "record_write"])
        .approval_timeout(std::time::Duration::from_secs(3600))
}

/// An integer from the environment, or `default`.
pub fn size(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// Appends one test's figures to the soak report, when one is asked for.
pub fn report(figures: serde_json::Value) {
    let Ok(path) = std::env::var("CHALIE_SOAK_REPORT") else {
        return;
    };
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(file, "{figures}").unwrap();
}

/// This process's resident memory in KiB (Linux), for the reports.
pub fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// The peak resident memory in KiB (Linux).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}
