//! The abilities the console's tests call. Each notes what it ran under the
//! calling session, so a test can count runs in its own session.

use std::sync::Mutex;

use chalie_core::{Params, ToolResult, Turn, ability};
use serde_json::json;
use tokio::sync::Semaphore;

static DONE: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Holds `list_tasks` between its two pages until the test lets it go, so
/// the test sees its card running before it sees it done.
pub static SECOND_PAGE: Semaphore = Semaphore::const_new(0);

fn note(turn: &Turn, what: String) {
    DONE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push((turn.session_id().to_owned(), what));
}

/// What ran in `session`, in order.
pub fn done(session: &str) -> Vec<String> {
    DONE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .filter(|(id, _)| id == session)
        .map(|(_, what)| what.clone())
        .collect()
}

/// Lists the user's open tasks, reporting progress page by page.
#[ability(
    effect = read,
    tooltip = "Listing your tasks",
    examples = ["what are my tasks", "list my todos", "show open tasks", "what's left to do", "my task list", "tasks due today"],
)]
pub async fn list_tasks(turn: &Turn) -> ToolResult {
    turn.report_progress("fetched page 1 of 2");
    if let Ok(permit) = SECOND_PAGE.acquire().await {
        permit.forget();
    }
    turn.report_progress("fetched page 2 of 2");
    note(turn, "list_tasks".into());
    ToolResult::success(json!({ "items": [{ "id": 7, "title": "pay rent" }] }))
        .with_card(json!({ "title": "Open tasks", "count": 1 }))
}

/// Parameters of [`lookup()`].
#[derive(Params)]
pub struct LookupParams {
    /// What to look up.
    pub query: String,
}

/// Looks a topic up in the notes. Use it to read, never to change.
#[ability(
    effect = read,
    tooltip = "Looking it up",
    examples = ["look up rust", "find notes on tokio", "search for serde", "what do we know about json", "show notes about tests", "look for the dispatcher"],
)]
pub async fn lookup(params: LookupParams, turn: &Turn) -> ToolResult {
    note(turn, format!("lookup:{}", params.query));
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
    note(turn, format!("delete:{}", params.id));
    ToolResult::success(format!("deleted task {}", params.id))
        .with_card(json!({ "deleted": params.id }))
}

/// Parameters of [`rename_task()`].
#[derive(Params)]
pub struct RenameParams {
    /// The task's id.
    pub id: u32,
    /// The new title.
    pub title: String,
}

/// Renames one task. Use it when the user wants a task's title changed.
#[ability(
    effect = write,
    examples = ["rename task 7", "call the rent task bills", "change that todo's title", "retitle task 3", "rename my first task", "fix the task name"],
)]
pub async fn rename_task(params: RenameParams, turn: &Turn) -> ToolResult {
    note(turn, format!("rename:{}:{}", params.id, params.title));
    ToolResult::success(format!("renamed task {}", params.id))
}

/// Recalls what the user said earlier in the session. Internal: the policy
/// manager shows it and offers no change.
#[ability(
    internal,
    effect = read,
    tooltip = "Remembering",
    examples = ["what did I say earlier", "remind me what I asked", "recall my last request", "what was my question", "repeat what I said", "what did we talk about"],
)]
pub async fn recall(turn: &Turn) -> ToolResult {
    note(turn, "recall".into());
    ToolResult::success("nothing yet")
}
