//! The calendar: read views (today, week, range, overdue) and the write
//! actions that add and delete events, as two abilities so each declares
//! its effect truthfully.

use chalie_core::session::StoreError;
use chalie_core::{
    Params, ToolResult, Turn, ability, contracts::Fields, contracts::Format, contracts::ItemShape,
    contracts::list_body,
};
use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use serde_json::{Value, json};

use chalie_core::turn::Principal;

use crate::userdata::{Calendar, Event, owner, store_failed};

fn parse_date(field: &str, text: &str) -> Result<NaiveDate, ToolResult> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").map_err(|_| {
        ToolResult::error(
            "invalid-date",
            format!("`{field}` is `{text}`, not a date"),
            format!("pass {field} as YYYY-MM-DD, e.g. 2026-03-05"),
        )
    })
}

fn parse_time(text: &str) -> Result<DateTime<Utc>, ToolResult> {
    let text = text.trim();
    DateTime::parse_from_rfc3339(text)
        .map(|at| at.with_timezone(&Utc))
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").map(|at| at.and_utc()))
        .map_err(|_| {
            ToolResult::error(
                "invalid-time",
                format!("`start` is `{text}`, not a date and time"),
                "pass start as YYYY-MM-DDTHH:MM in UTC, e.g. 2026-03-05T19:30",
            )
        })
}

fn start_of(date: NaiveDate) -> DateTime<Utc> {
    date.and_time(NaiveTime::MIN).and_utc()
}

fn event_json(event: &Event) -> Value {
    json!({
        "id": event.id,
        "title": event.title,
        "start": event.start.format("%Y-%m-%dT%H:%MZ").to_string(),
        "end": event.end.format("%Y-%m-%dT%H:%MZ").to_string(),
        "location": event.location,
    })
}

/// Parameters of [`calendar()`].
#[derive(Params)]
pub struct CalendarParams {
    /// `today`, `week` (the next seven days), `range` (from..to) or `overdue` (ended, not done).
    pub action: String,
    /// First day of a `range`, YYYY-MM-DD; required by `range`.
    pub from: Option<String>,
    /// Last day of a `range`, YYYY-MM-DD, included; required by `range`.
    pub to: Option<String>,
    /// `concise` (`id`, `title`, `start`) or `detailed` (adds `end`, `location`); default `concise`.
    pub format: Format,
    /// Only these keys of each event; default the format's.
    pub fields: Option<Fields>,
}

/// A listed event's keys, and those `format: concise` keeps.
const EVENT_SHAPE: ItemShape = ItemShape::new(
    &["id", "title", "start", "end", "location"],
    &["id", "title", "start"],
);

/// The user's calendar events for today, the next seven days, a date range
/// or those overdue (ended but never marked done). Use it before planning,
/// when the user asks what is on, or to find an event's `id` before
/// deleting it with `calendar_edit`. Returns `items` sorted by start;
/// times are UTC. Read only.
#[ability(
    version = "1.1.0",
    effect = read,
    toolset = "calendar",
    tooltip = "Events today, this week, in a range, or overdue",
    actions(today = [], week = [], range = [from, to], overdue = []),
    examples = [
        "what's on my calendar today",
        "what do I have this week",
        "am I free on Thursday afternoon",
        "show my events between the 5th and the 8th",
        "what did I miss",
        "when is my flight to Rome",
    ],
)]
pub async fn calendar(params: CalendarParams, turn: &Turn) -> ToolResult {
    let store = match turn.require::<Calendar>() {
        Ok(store) => store,
        Err(not_configured) => return not_configured,
    };
    let owner = match owner(turn, "the calendar") {
        Ok(owner) => owner,
        Err(refused) => return refused,
    };
    let events = match sorted(store, owner) {
        Ok(events) => events,
        Err(error) => return store_failed(&error),
    };
    let now = turn.now();
    let today = now.date_naive();
    let (from, to, label) = match params.action.as_str() {
        "today" => (
            start_of(today),
            start_of(today + Duration::days(1)),
            "today".to_owned(),
        ),
        "week" => (
            now,
            start_of(today + Duration::days(7)),
            "the next seven days".to_owned(),
        ),
        "range" => {
            let from = match parse_date("from", params.from.as_deref().unwrap_or_default()) {
                Ok(date) => date,
                Err(invalid) => return invalid,
            };
            let to = match parse_date("to", params.to.as_deref().unwrap_or_default()) {
                Ok(date) => date,
                Err(invalid) => return invalid,
            };
            if to < from {
                return ToolResult::error(
                    "empty-range",
                    format!("`to` ({to}) is before `from` ({from})"),
                    "swap them, or pass the same day twice for one day",
                );
            }
            (
                start_of(from),
                start_of(to + Duration::days(1)),
                format!("{from} to {to}"),
            )
        }
        _ => {
            let overdue: Vec<Value> = events
                .iter()
                .filter(|event| event.end <= now && !event.done)
                .map(event_json)
                .collect();
            return listed(overdue, "overdue", &params);
        }
    };
    let events: Vec<Value> = events
        .iter()
        .filter(|event| event.start < to && event.end > from)
        .map(event_json)
        .collect();
    listed(events, &label, &params)
}

fn sorted(store: &Calendar, owner: &Principal) -> Result<Vec<Event>, StoreError> {
    let mut events = store.events(owner)?;
    events.sort_by_key(|event| (event.start, event.id));
    Ok(events)
}

fn listed(events: Vec<Value>, label: &str, params: &CalendarParams) -> ToolResult {
    let events = match EVENT_SHAPE.apply(params.format, params.fields.as_ref(), events) {
        Ok(events) => events,
        Err(invalid) => return invalid,
    };
    let count = events.len();
    let summary = format!("{count} events {label}");
    ToolResult::success(list_body(events, None, false, Some(&summary)))
        .with_metadata("count", count)
}

/// Parameters of [`calendar_edit()`].
#[derive(Params)]
pub struct CalendarEditParams {
    /// `add_event` to create an event, `delete_event` to remove one by id.
    pub action: String,
    /// What the event is, e.g. `Dinner with Maria`; required by `add_event`.
    pub title: Option<String>,
    /// When it starts, YYYY-MM-DDTHH:MM in UTC; required by `add_event`.
    pub start: Option<String>,
    /// How long it lasts in minutes, 5 to 1440; default 60.
    #[param(default = 60, min = 5, max = 1440)]
    pub duration_minutes: u32,
    /// Where it is, if anywhere.
    pub location: Option<String>,
    /// The event to delete, from `calendar`; required by `delete_event`.
    pub id: Option<u32>,
}

/// Adds an event to the user's calendar or deletes one. Use it only when
/// the user asked to schedule or cancel something; find the `id` to delete
/// with `calendar` first. Returns the event added or deleted. It changes
/// the calendar, so the user is asked before it runs; a deleted event is
/// gone, so confirm the title with the user first.
#[ability(
    toolset = "calendar",
    tooltip = "Add or delete a calendar event",
    actions(add_event = [title, start], delete_event = [id]),
    input_examples = [
        { "action": "add_event", "title": "Dinner with Maria", "start": "2026-03-06T20:00", "location": "Trattoria Roma" },
        { "action": "add_event", "title": "Gym", "start": "2026-03-07T09:00", "duration_minutes": 90 },
    ],
    examples = [
        "put dinner with Maria on Friday at 8",
        "schedule a call with the bank tomorrow at 10",
        "add my flight to the calendar",
        "cancel the design review",
        "delete the dentist appointment",
        "book an hour for the gym on Saturday morning",
    ],
)]
pub async fn calendar_edit(params: CalendarEditParams, turn: &Turn) -> ToolResult {
    let store = match turn.require::<Calendar>() {
        Ok(store) => store,
        Err(not_configured) => return not_configured,
    };
    let owner = match owner(turn, "the calendar") {
        Ok(owner) => owner,
        Err(refused) => return refused,
    };
    if params.action == "delete_event" {
        let id = params.id.unwrap_or_default();
        // Deleting is soft; another user's event reads as a missing one.
        return match store.delete(owner, u64::from(id)) {
            Ok(Some(removed)) => ToolResult::success(json!({ "deleted": event_json(&removed) })),
            Ok(None) => ToolResult::error(
                "unknown-event",
                format!("there is no event {id}"),
                "list events with calendar and pass the `id` shown there",
            ),
            Err(error) => store_failed(&error),
        };
    }
    let title = params.title.unwrap_or_default().trim().to_owned();
    if title.is_empty() {
        return ToolResult::error(
            "empty-title",
            "the event has no title",
            "pass title, e.g. `Dinner with Maria`",
        );
    }
    let start = match parse_time(params.start.as_deref().unwrap_or_default()) {
        Ok(start) => start,
        Err(invalid) => return invalid,
    };
    let event = Event {
        id: 0,
        title,
        start,
        end: start + Duration::minutes(i64::from(params.duration_minutes)),
        location: params.location,
        done: false,
    };
    match store.add(owner, event) {
        Ok(event) => ToolResult::success(json!({ "added": event_json(&event) })),
        Err(error) => store_failed(&error),
    }
}
