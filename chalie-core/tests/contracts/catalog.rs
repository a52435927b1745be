//! Abilities for these tests: a few good ones, and a deliberately bad
//! catalog for the lint.

use chalie_core::{
    Params, ToolResult, ability, contracts::Cursor, contracts::Format, contracts::MaxItems,
    contracts::TopK,
};

/// Parameters of [`search_notes()`].
#[derive(Params)]
pub struct SearchNotesParams {
    /// What to look for in the notes' titles and bodies.
    pub query: String,
    /// How many notes to return, best first; default 10, 1 to 50.
    pub top_k: TopK,
    /// `concise` for titles and ids, `detailed` for whole notes; default `concise`.
    pub format: Format,
}

/// Full-text search over the user's notes, best match first. Use it when
/// the user asks to find something they wrote down; it cannot create notes.
#[ability(
    effect = read,
    toolset = "notes",
    version = "1.2.0",
    examples = [
        "find my note about the boiler",
        "search my notes for passwords",
        "where did I write the wifi code",
        "look up my notes on the trip",
        "which note mentions Anna",
        "find what I wrote about taxes",
    ],
)]
pub fn search_notes(params: SearchNotesParams) -> ToolResult {
    let _ = (params.top_k, params.format);
    ToolResult::success(params.query)
}

/// Parameters of [`list_events()`].
#[derive(Params)]
pub struct ListEventsParams {
    /// Events per page; default 20, 1 to 50.
    pub max_items: MaxItems,
    /// The `next_cursor` of the previous page, to continue it.
    pub cursor: Option<Cursor>,
}

/// Lists the calendar's upcoming events, soonest first, a page at a time.
/// Use it when the user asks what is on their schedule.
#[ability(
    effect = read,
    toolset = "calendar",
    examples = [
        "what's on my calendar",
        "do I have meetings tomorrow",
        "show my schedule",
        "what's next today",
        "am I free on Friday",
        "list my upcoming events",
    ],
)]
pub fn list_events(params: ListEventsParams) -> ToolResult {
    let _ = params.cursor;
    ToolResult::success(format!("{}", params.max_items.get()))
}

/// Looks things up across every connected source. Use it when no other
/// tool fits; it is slower and less precise than a specific tool.
#[ability(
    effect = read,
    examples = [
        "look this up",
        "search everything for Anna",
        "find anything about the invoice",
        "is there anything on the roof repair",
        "search all my stuff",
        "find it anywhere",
    ],
)]
pub fn find_tools() -> ToolResult {
    ToolResult::success("core")
}

// The bad catalog.

/// Parameters of [`fetch()`].
#[derive(Params)]
pub struct FetchParams {
    /// Pages.
    #[param(default = 3, min = 1, max = 9)]
    pub pages: u32,
    /// Whether to follow redirects.
    #[param(default = true)]
    pub follow: bool,
}

/// Fetch.
#[ability(
    effect = read,
    toolset = "bad",
    examples = ["fetch", "fetch it", "get it", "download", "grab the page", "load the page"],
)]
pub fn fetch(params: FetchParams) -> ToolResult {
    let _ = (params.pages, params.follow);
    ToolResult::success("")
}

/// Sends an email message to one or more recipients with a subject and a
/// body. Use it when the user asks to send an email to someone.
#[ability(
    toolset = "bad",
    examples = ["email Anna", "send a mail", "write to Bob", "mail the report", "send an email", "email my boss"],
)]
pub fn send_email() -> ToolResult {
    ToolResult::success("sent")
}

/// Sends an email message to one or more recipients with a subject and a
/// body. Use it when the user asks to send a mail to somebody.
#[ability(
    toolset = "bad",
    examples = ["mail Anna", "send mail", "write Bob", "mail the file", "send a message", "mail my boss"],
)]
pub fn send_mail() -> ToolResult {
    ToolResult::success("sent")
}

/// Returns the weather. It reports the temperature and the sky for a city
/// and a day, in Celsius.
#[ability(
    effect = read,
    toolset = "bad",
    examples = ["weather", "is it warm", "rain today", "sky now", "temperature", "will it snow"],
)]
pub fn forecast() -> ToolResult {
    ToolResult::success("sunny")
}
