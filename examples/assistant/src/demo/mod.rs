//! The demo: a scripted conversation through the whole pipeline — the
//! session run loop, discovery, the dispatcher's gate and the envelopes —
//! written as a transcript. Every step is real; only the model is scripted.
//! The clock is fixed and cursors are masked, so the transcript is the same
//! on every run (a test checks it).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

use chalie_core::session::{
    Event, Message, Model, ModelChunk, ModelError, ModelRequest, Reply, Role, ScriptedModel,
    Sessions,
};
use chalie_core::{Channel, Dispatcher, ToolCall, Turn, result_keys};
use chalie_index::{Embedder, MiniLm};
use futures::stream::BoxStream;
use serde_json::json;

use crate::state::{Host, lock};

/// What the user asks first; discovery turns it into `weather`.
pub const DISCOVERY_REQUEST: &str = "is there a way to check the weather in another city";

const REPORT_URL: &str = "https://example.org/research/tool-discovery-report";

/// A scripted model that also notes what the run sends it: the tools it is
/// offered and the envelopes it reads.
struct Narrated {
    script: ScriptedModel,
    seen: Mutex<Vec<String>>,
}

impl Narrated {
    fn new(replies: impl IntoIterator<Item = Reply>) -> Arc<Self> {
        Arc::new(Self {
            script: ScriptedModel::new(replies),
            seen: Mutex::new(Vec::new()),
        })
    }

    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.seen))
    }
}

impl Model for Narrated {
    fn stream(&self, request: ModelRequest) -> BoxStream<'static, Result<ModelChunk, ModelError>> {
        let mut seen = lock(&self.seen);
        // The envelopes answering the previous reply's calls.
        let answered: Vec<&Message> = request
            .messages
            .iter()
            .rev()
            .take_while(|message| message.role == Role::Tool)
            .collect();
        for message in answered.into_iter().rev() {
            seen.push(format!(
                "model reads:\n{}",
                indent(&mask_cursors(&message.content))
            ));
        }
        let mut tools = request.tool_names();
        tools.sort_unstable();
        seen.push(format!("model is offered: {}", tools.join(", ")));
        drop(seen);
        self.script.stream(request)
    }
}

/// The widest line the transcript shows; the model reads every character.
const SHOWN_LINE_CHARS: usize = 200;

/// `text` indented, each line cut to fit a terminal.
fn indent(text: &str) -> String {
    text.lines()
        .map(|line| {
            let chars = line.chars().count();
            if chars <= SHOWN_LINE_CHARS {
                format!("    {line}\n")
            } else {
                let shown: String = line.chars().take(SHOWN_LINE_CHARS).collect();
                format!(
                    "    {shown} … ({} more characters)\n",
                    chars - SHOWN_LINE_CHARS
                )
            }
        })
        .collect()
}

/// Cursors carry a signature and a time: the transcript shows their place,
/// not their bytes.
fn mask_cursors(text: &str) -> String {
    let marker = format!("{}=", result_keys::NEXT_CURSOR);
    let Some(start) = text.find(&marker) else {
        return text.to_owned();
    };
    let value_start = start + marker.len();
    let value_end = text[value_start..]
        .find([',', ')'])
        .map_or(text.len(), |end| value_start + end);
    format!("{}<cursor>{}", &text[..value_start], &text[value_end..])
}

/// One line per event, as a terminal client would show them.
fn describe(event: &Event) -> String {
    let detail = match event {
        Event::CapabilityResolved { tools } => tools.join(", "),
        Event::ToolStarted {
            tool_key, activity, ..
        } => format!("{tool_key}: {}", activity.label),
        Event::ToolProgress {
            tool_key, message, ..
        } => format!("{tool_key}: {message}"),
        Event::ToolCompleted { tool_key, .. } => tool_key.clone(),
        Event::ToolFailed {
            tool_key, error, ..
        } => format!("{tool_key}: {}", error.code),
        Event::ToolApprovalRequired {
            tool_key, input, ..
        } => format!("{tool_key} {input}"),
        Event::ToolApprovalResponse { approved, .. } => format!("approved={approved}"),
        Event::MessageCompleted { content } => content.clone(),
        Event::RunSettlementCompleted {
            status, tool_calls, ..
        } => {
            format!("{status}, {tool_calls} tool calls")
        }
        _ => String::new(),
    };
    format!("  event {:<26} {detail}", event.name())
        .trim_end()
        .to_owned()
}

/// Runs one user message to its end, printing each event as it streams;
/// `approve` answers a write waiting for the user.
async fn converse(
    out: &mut String,
    sessions: &Sessions,
    model: &Narrated,
    session_id: &str,
    text: &str,
    approve: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    writeln!(out, "user: {text}")?;
    let run = sessions.send(session_id, text)?;
    let mut events = run.events();
    while let Some(event) = events.next().await {
        // Streaming text deltas would print the answer word by word.
        if matches!(
            event,
            Event::MessageDelta { .. } | Event::AgentPhaseChanged { .. }
        ) {
            continue;
        }
        writeln!(out, "{}", describe(&event))?;
        if let Event::ToolApprovalRequired { tool_call_id, .. } = &event {
            writeln!(
                out,
                "  (the user {} it)",
                if approve { "approves" } else { "rejects" }
            )?;
            if approve {
                sessions.approve(run.id(), tool_call_id)?;
            } else {
                sessions.reject(run.id(), tool_call_id)?;
            }
        }
    }
    writeln!(out, "  the model's side, request by request:")?;
    for line in model.take() {
        writeln!(out, "  {}", line.trim_end().replace('\n', "\n  "))?;
    }
    Ok(())
}

/// Where the demo finds what it needs.
#[derive(Debug, Clone)]
pub struct DemoPaths<'a> {
    /// The embedding model's folder (`cargo xtask fetch-model` fills it).
    pub model_dir: &'a Path,
    /// Where the discovery index is built, or reused when current.
    pub index_dir: &'a Path,
}

/// The host the demo runs on: the sample data, MiniLM for memory, and the
/// discovery index built (or reused) in `paths.index_dir`.
pub fn prepare(paths: &DemoPaths<'_>) -> Result<Host, Box<dyn std::error::Error>> {
    let registry = chalie_core::registry()?;
    let embedder: Arc<dyn Embedder> = Arc::new(MiniLm::load(paths.model_dir).map_err(|error| {
        format!(
            "{error}; fetch the model with `cargo xtask fetch-model` (or run `cargo xtask demo`)"
        )
    })?);
    let discovery = crate::open_or_build(
        registry,
        Arc::clone(&embedder),
        paths.index_dir,
        &crate::profile(),
    )?;
    Ok(Host::sample()
        .with_embedder(embedder)
        .with_discovery(discovery))
}

/// The whole demo on `host`, as a transcript.
pub async fn run(host: &Host) -> Result<String, Box<dyn std::error::Error>> {
    let registry = chalie_core::registry()?.clone();
    let dispatcher = Arc::new(
        host.install(Dispatcher::builder(registry.clone()).policy(crate::policy()))
            .build(),
    );
    let mut out = String::new();

    writeln!(
        out,
        "== 1. Discovery: the model starts with the core tools and finds the rest =="
    )?;
    let model = Narrated::new([
        Reply::tool_call(
            "find_tools",
            json!({ "query": [DISCOVERY_REQUEST], "act_summary": "Looking for a weather tool" }),
        ),
        Reply::tool_call(
            "weather",
            json!({ "location": "Rome, IT", "act_summary": "Checking the weather in Rome" }),
        ),
        Reply::text("It is cloudy in Rome, 11 °C, with a light wind."),
    ]);
    let sessions = Sessions::builder(Arc::clone(&dispatcher), model.clone()).build();
    converse(&mut out, &sessions, &model, "chat", DISCOVERY_REQUEST, true).await?;

    writeln!(
        out,
        "\n== 2. A write waits for the user's approval (the default mode) =="
    )?;
    let add_dinner = json!({
        "action": "add_event", "title": "Dinner with Maria", "start": "2026-03-05T19:30",
        "location": "Rome", "act_summary": "Adding dinner with Maria on Thursday",
    });
    let model = Narrated::new([
        Reply::tool_call(
            "find_tools",
            json!({ "query": ["add an event to my calendar"], "act_summary": "Looking for a calendar tool" }),
        ),
        Reply::tool_call("calendar_edit", add_dinner.clone()),
        Reply::text("Done: dinner with Maria is on Thursday at 19:30."),
    ]);
    let sessions = Sessions::builder(Arc::clone(&dispatcher), model.clone()).build();
    converse(
        &mut out,
        &sessions,
        &model,
        "chat",
        "put dinner with Maria on Thursday at 7:30pm",
        true,
    )
    .await?;

    writeln!(
        out,
        "\n== 3. The same write on the background channel: nobody to ask, so denied =="
    )?;
    let model = Narrated::new([
        Reply::tool_call(
            "find_tools",
            json!({ "query": ["add an event to my calendar"], "act_summary": "Looking for a calendar tool" }),
        ),
        Reply::tool_call("calendar_edit", add_dinner),
        Reply::text("I could not add it from the background; I will mention it in the next chat."),
    ]);
    let sessions = Sessions::builder(Arc::clone(&dispatcher), model.clone())
        .channel(Channel::Subconscious)
        .build();
    converse(
        &mut out,
        &sessions,
        &model,
        "background",
        "tidy up the calendar",
        true,
    )
    .await?;

    writeln!(
        out,
        "\n== 4. On the web profile, web tools are pinned; a long page is cut with a cursor =="
    )?;
    let pinned = crate::pinned(&crate::web_profile(), &registry);
    writeln!(out, "pinned: {}", pinned.join(", "))?;
    let model = Narrated::new([
        Reply::tool_call("web_page", json!({ "url": REPORT_URL, "max_chars": 400 })),
        Reply::text(
            "The report says the cascade keeps recall high while abstaining on unrelated requests.",
        ),
    ]);
    let sessions = Sessions::builder(Arc::clone(&dispatcher), model.clone())
        .pinned(pinned.iter().copied())
        .build();
    converse(
        &mut out,
        &sessions,
        &model,
        "web",
        "what does the tool discovery report say",
        true,
    )
    .await?;
    writeln!(out, "reading on with the cursor, through the dispatcher:")?;
    let turn = Turn::builder(Channel::Chat).session_id("web").build();
    let first = dispatcher
        .dispatch(
            &turn,
            ToolCall::new("web_page", json!({ "url": REPORT_URL, "max_chars": 400 })),
        )
        .await;
    let cursor = chalie_core::Envelope::parse(&first.envelope)?
        .attribute(result_keys::NEXT_CURSOR)
        .ok_or("the long page was not cut")?
        .to_owned();
    let more = dispatcher
        .dispatch(
            &turn,
            ToolCall::new("scratchpad", json!({ "cursor": cursor, "max_chars": 300 })),
        )
        .await;
    write!(out, "{}", indent(&mask_cursors(&more.envelope)))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::mask_cursors;

    #[test]
    fn cursors_are_masked_in_the_header() {
        assert_eq!(
            mask_cursors("[x(status=success, next_cursor=abc.def, truncated=true)]"),
            "[x(status=success, next_cursor=<cursor>, truncated=true)]"
        );
        assert_eq!(mask_cursors("no cursor"), "no cursor");
    }
}
