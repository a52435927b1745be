//! Abilities the session tests call. Each notes what it did under the
//! calling session, so tests running in parallel do not see each other.

use std::sync::Mutex;

use chalie_core::{Params, ToolResult, Turn, ability};

static DONE: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

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

/// Lists the user's open tasks, reporting progress page by page.
#[ability(
    effect = read,
    examples = ["what are my tasks", "list my todos", "show open tasks", "what's left to do", "my task list", "tasks due today"],
)]
pub async fn list_tasks(turn: &Turn) -> ToolResult {
    turn.report_progress("fetched page 1 of 2");
    turn.report_progress("fetched page 2 of 2");
    note(turn, "list_tasks".into());
    ToolResult::success(
        serde_json::json!({ "items": [{ "id": 7, "title": "pay rent" }], "count": 1 }),
    )
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
    input_examples = [{ "id": 7 }],
    examples = ["delete task 7", "remove the rent task", "drop that todo", "delete my first task", "get rid of task 3", "cancel that task"],
)]
pub async fn delete_task(params: DeleteParams, turn: &Turn) -> ToolResult {
    note(turn, format!("delete:{}", params.id));
    ToolResult::success(format!("deleted task {}", params.id))
}

/// Archives one task by id, and never finishes: the tests that kill a
/// replica while a write runs call it.
#[ability(
    effect = write,
    examples = ["archive task 7", "put the rent task away", "archive that todo", "archive my first task", "file task 3 away", "archive it"],
)]
pub async fn archive_task(params: DeleteParams, turn: &Turn) -> ToolResult {
    note(turn, format!("archive:{}", params.id));
    std::future::pending::<()>().await;
    ToolResult::success(format!("archived task {}", params.id))
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

/// Parameters of [`find_tools()`].
#[derive(Params)]
pub struct FindParams {
    /// What to look for, one entry per thing needed.
    pub query: Vec<String>,
}

/// Finds tools for a need and activates them for the rest of the turn.
#[ability(
    effect = read,
    examples = ["find a tool to rename", "which tool edits tasks", "search tools", "discover a tool", "tool for renaming", "look for a capability"],
)]
pub async fn find_tools(params: FindParams, turn: &Turn) -> ToolResult {
    note(turn, format!("find_tools:{}", params.query.join("|")));
    turn.activate_tools(["rename_task"]);
    ToolResult::success(serde_json::json!({ "items": ["rename_task"] }))
}

/// Says on whose behalf the turn runs. Use it when the user asks who they are.
#[ability(
    effect = read,
    examples = ["who am i", "which account is this", "whose session is this", "what user am i", "show my identity", "who is signed in"],
)]
pub async fn whoami(turn: &Turn) -> ToolResult {
    let principal = turn
        .principal()
        .map_or("nobody", |principal| principal.id());
    note(turn, format!("whoami:{principal}"));
    ToolResult::success(principal.to_owned())
}

/// Parameters of [`remember()`].
#[derive(Params)]
pub struct RememberParams {
    /// What to keep.
    pub content: String,
}

/// Keeps a fact in the assistant's memory. Use it when the user asks to remember something.
#[ability(
    effect = write,
    internal,
    examples = ["remember my dentist is on Friday", "note that I like tea", "keep in mind my flight", "save this fact", "remember where I parked", "store my preference"],
)]
pub async fn remember(params: RememberParams, turn: &Turn) -> ToolResult {
    note(turn, format!("remember:{}", params.content));
    ToolResult::success("remembered")
}

static REPORT_GATES: Mutex<Vec<(String, std::sync::Arc<tokio::sync::Notify>)>> =
    Mutex::new(Vec::new());

/// What lets [`slow_report()`] finish in `session`: `notify_one` keeps a
/// permit if it is not waiting yet. One per session, so tests do not
/// release each other's reports.
pub fn report_gate(session: &str) -> std::sync::Arc<tokio::sync::Notify> {
    let mut gates = REPORT_GATES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, gate)) = gates.iter().find(|(id, _)| id == session) {
        return std::sync::Arc::clone(gate);
    }
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    gates.push((session.to_owned(), std::sync::Arc::clone(&gate)));
    gate
}

/// Builds the monthly report, which takes a while. Use it when the user asks for the report.
#[ability(
    effect = read,
    examples = ["build the monthly report", "make me the report", "prepare this month's report", "report for this month", "monthly summary report", "generate the report"],
)]
pub async fn slow_report(turn: &Turn) -> ToolResult {
    report_gate(turn.session_id()).notified().await;
    note(turn, "slow_report".into());
    ToolResult::success("report: 12 tasks done").with_card(serde_json::json!({ "done": 12 }))
}

/// Reads the notes on a topic and declares a card for the UI, with text
/// a terminal would act on (an escape, a bidirectional override) that
/// the card must not carry.
#[ability(
    effect = read,
    tooltip = "Reading the notes",
    examples = ["read the notes on rent", "show my notes about bills", "open the rent notes", "what do my notes say", "notes on tokio", "read notes for today"],
)]
pub async fn card_notes(params: LookupParams, turn: &Turn) -> ToolResult {
    note(turn, format!("card_notes:{}", params.query));
    ToolResult::success(format!("2 notes on {}", params.query)).with_card(serde_json::json!({
        "title": format!("Notes\u{1b}[31m on {}\u{202E}", params.query),
        "count": 2,
    }))
}

/// Moves one task to the shelf and declares a card naming it. Use it when
/// the user wants a task put aside.
#[ability(
    effect = write,
    examples = ["shelve task 7", "put the rent task aside", "shelve that todo", "set task 3 aside", "park my first task", "shelve it for now"],
)]
pub async fn shelve_task(params: DeleteParams, turn: &Turn) -> ToolResult {
    note(turn, format!("shelve:{}", params.id));
    ToolResult::success(format!("shelved task {}", params.id))
        .with_card(serde_json::json!({ "shelved": params.id }))
}
