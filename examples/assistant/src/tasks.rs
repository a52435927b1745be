//! Tasks: a paged read (keyset on the task id, signed cursors) and the
//! write actions create, update, complete and a soft delete.

use chalie_core::{
    ParamEnum, Params, ToolResult, Turn, ability, contracts::Cursor, contracts::Fields,
    contracts::Format, contracts::ItemShape, contracts::MaxItems, contracts::PageRequest,
};
use chrono::NaiveDate;
use serde_json::json;

use crate::state::Scratch;
use crate::userdata::{Task, TaskState, Tasks, owner, store_failed};

/// Which tasks to list.
#[derive(Clone, Copy, PartialEq, Eq, ParamEnum)]
pub enum StatusFilter {
    /// Not done yet.
    Open,
    /// Completed.
    Done,
    /// Open and done (never deleted ones).
    All,
}

impl StatusFilter {
    fn admits(self, state: TaskState) -> bool {
        match self {
            StatusFilter::Open => state == TaskState::Open,
            StatusFilter::Done => state == TaskState::Done,
            StatusFilter::All => state != TaskState::Deleted,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            StatusFilter::Open => "open",
            StatusFilter::Done => "done",
            StatusFilter::All => "all",
        }
    }
}

/// Parameters of [`task_list()`].
#[derive(Params)]
pub struct TaskListParams {
    /// `open`, `done` or `all` (deleted tasks are never listed); default `open`.
    #[param(default = "open")]
    pub status: StatusFilter,
    /// Tasks per page, 1 to 50; default 20.
    pub max_items: MaxItems,
    /// The `next_cursor` of the previous page, to continue the same listing.
    pub cursor: Option<Cursor>,
    /// `concise` (`id`, `title`, `due`) or `detailed` (adds `state`); default `concise`.
    pub format: Format,
    /// Only these keys of each task; default the format's.
    pub fields: Option<Fields>,
}

/// A listed task's keys, and those `format: concise` keeps.
const TASK_SHAPE: ItemShape =
    ItemShape::new(&["id", "title", "due", "state"], &["id", "title", "due"]);

/// Lists the user's tasks in id order, a page at a time. Use it to review
/// open or done tasks, or to find a task's `id` before changing it with
/// `tasks`. Returns `items` and `next_cursor`: pass it as `cursor`, with
/// the same `status`, for the next page. Read only.
#[ability(
    version = "1.1.0",
    effect = read,
    toolset = "tasks",
    tooltip = "List tasks, a page at a time",
    examples = [
        "what's on my to-do list",
        "show my open tasks",
        "what have I finished",
        "list everything I need to do",
        "next page of tasks",
        "do I have anything due",
    ],
)]
pub async fn task_list(params: TaskListParams, turn: &Turn) -> ToolResult {
    let (store, scratch) = match (turn.require::<Tasks>(), turn.require::<Scratch>()) {
        (Ok(store), Ok(scratch)) => (store, scratch),
        (Err(not_configured), _) | (_, Err(not_configured)) => return not_configured,
    };
    let owner = match owner(turn, "the task list") {
        Ok(owner) => owner,
        Err(refused) => return refused,
    };
    // The query is what shapes the result set: a cursor only continues it.
    let query = json!({ "status": params.status.as_str() });
    let request = match PageRequest::new(
        &scratch.key,
        "task_list",
        &query,
        params.cursor.as_ref(),
        Some(params.max_items.get()),
    ) {
        Ok(request) => request,
        Err(invalid) => return invalid.into_tool_result(),
    };
    let after = request.after().and_then(|key| key.as_u64()).unwrap_or(0);
    // Deleted tasks are never listed, so they are not read.
    let live = match store.live(owner) {
        Ok(live) => live,
        Err(error) => return store_failed(&error),
    };
    let fetched: Vec<Task> = live
        .into_iter()
        .filter(|task| task.id > after && params.status.admits(task.state))
        .take(request.fetch_limit())
        .collect();
    request
        .page(&scratch.key, fetched, |task| json!(task.id))
        .into_shaped_result(&TASK_SHAPE, params.format, params.fields.as_ref())
}

/// Parameters of [`tasks()`].
#[derive(Params)]
pub struct TasksParams {
    /// `create`, `update` (title or due date), `complete`, or `delete` (soft: hidden from lists).
    pub action: String,
    /// The task, from `task_list`; required by `update`, `complete` and `delete`.
    pub id: Option<u32>,
    /// What to do, e.g. `Book the Rome hotel`; required by `create`, optional for `update`.
    pub title: Option<String>,
    /// When it is due, YYYY-MM-DD; optional for `create` and `update`.
    pub due: Option<String>,
}

/// Creates, updates, completes or deletes one of the user's tasks. Use it
/// when the user asks to add something to do, change it, tick it off or
/// drop it; find the `id` with `task_list` first. Returns the task as it
/// is now. Delete is soft: the task is hidden from lists but kept. It
/// changes the task list, so the user may be asked before it runs.
#[ability(
    toolset = "tasks",
    tooltip = "Create, update, complete or delete a task",
    actions(create = [title], update = [id], complete = [id], delete = [id]),
    examples = [
        "add buy milk to my list",
        "remind me to call the plumber on Friday",
        "mark the insurance task as done",
        "move the hotel booking to next week",
        "delete the library books task",
        "I finished backing up the laptop",
    ],
)]
pub async fn tasks(params: TasksParams, turn: &Turn) -> ToolResult {
    let store = match turn.require::<Tasks>() {
        Ok(store) => store,
        Err(not_configured) => return not_configured,
    };
    let owner = match owner(turn, "the task list") {
        Ok(owner) => owner,
        Err(refused) => return refused,
    };
    let due = match params.due.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => match NaiveDate::parse_from_str(text, "%Y-%m-%d") {
            Ok(date) => Some(date),
            Err(_) => {
                return ToolResult::error(
                    "invalid-date",
                    format!("`due` is `{text}`, not a date"),
                    "pass due as YYYY-MM-DD, e.g. 2026-03-06",
                );
            }
        },
    };
    let title = params.title.map(|title| title.trim().to_owned());
    if params.action == "create" {
        let Some(title) = title.filter(|title| !title.is_empty()) else {
            return ToolResult::error(
                "empty-title",
                "the task has no title",
                "pass title, e.g. `Buy milk`",
            );
        };
        let task = Task {
            id: 0,
            title,
            due,
            state: TaskState::Open,
        };
        return match store.create(owner, task) {
            Ok(task) => ToolResult::success(json!({ "created": task })),
            Err(error) => store_failed(&error),
        };
    }
    let id = params.id.unwrap_or_default();
    // Another user's task reads exactly as a missing one: nothing of it
    // is shown or changed.
    let unknown = || {
        ToolResult::error(
            "unknown-task",
            format!("there is no task {id}"),
            "list tasks with task_list and pass the `id` shown there",
        )
    };
    let mut task = match store.get(owner, u64::from(id)) {
        Ok(Some(task)) => task,
        Ok(None) => return unknown(),
        Err(error) => return store_failed(&error),
    };
    match params.action.as_str() {
        "complete" => task.state = TaskState::Done,
        "delete" => task.state = TaskState::Deleted,
        _ => {
            if title.is_none() && due.is_none() {
                return ToolResult::error(
                    "nothing-to-update",
                    "update was given neither a title nor a due date",
                    "pass title, due, or both",
                );
            }
            if let Some(title) = title.filter(|title| !title.is_empty()) {
                task.title = title;
            }
            if due.is_some() {
                task.due = due;
            }
        }
    }
    match store.put(owner, &task) {
        Ok(true) => ToolResult::success(json!({ "task": task })),
        // Deleted or gone between the read and the write.
        Ok(false) => unknown(),
        Err(error) => store_failed(&error),
    }
}
