//! The demo: a scripted conversation through the whole pipeline — the
//! session run loop, discovery, the dispatcher's gate and the envelopes —
//! written as a transcript. Every step is real; only the model is scripted.
//! The clock is fixed and cursors are masked, so the transcript is the same
//! on every run (a test checks it).

mod narrate;

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use chalie_core::session::{Event, ModelRequest, Reply, Sessions};
use chalie_core::turn::Principal;
use chalie_core::{
    Channel, Dispatcher, RegistryError, ToolCall, Turn, contracts::Profile,
    contracts::keys as result_keys,
};
use chalie_index::catalog::CatalogError;
use chalie_index::{Descriptor, EmbedError, Embedder, IndexError, MiniLm};
use serde_json::json;

use crate::Profiles;
use crate::discovery::IndexMode;
use crate::state::{Host, SAMPLE_USER};
use narrate::{Narrated, describe, indent, mask_cursors};

/// What the user asks first; discovery turns it into `weather`. Not one of
/// `weather`'s example phrases: the golden set (`eval/golden.jsonl`) holds
/// it, and `cargo xtask golden` refuses requests that copy an example.
pub const DISCOVERY_REQUEST: &str = "I'm in Rome today, do I need a jacket";

const REPORT_URL: &str = "https://example.org/research/tool-discovery-report";

/// A request the demo's model was sent, and the conversation it belongs to.
#[derive(Debug, Clone)]
pub struct DemoRequest {
    /// The conversation's session id (`chat`, `background`, `web`).
    pub session_id: &'static str,
    /// The request as the session built it: messages and offered tools.
    pub request: ModelRequest,
}

/// What the demo produced: the transcript it prints and every request its
/// model was sent, in order.
#[derive(Debug, Clone, Default)]
pub struct DemoRun {
    /// The transcript, as `cargo xtask demo` prints it.
    pub transcript: String,
    /// The model requests of its conversations (what `cargo xtask tokens` counts).
    pub requests: Vec<DemoRequest>,
}

/// Runs one user message to its end in a session of the sample user (whose
/// calendar and tasks the sample host holds), printing each event as it
/// streams; `approve` answers a write waiting for the user.
async fn converse(
    demo: &mut DemoRun,
    sessions: &Sessions,
    model: &Narrated,
    session_id: &'static str,
    text: &str,
    approve: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let out = &mut demo.transcript;
    writeln!(out, "user: {text}")?;
    let user = Principal::new(SAMPLE_USER);
    let sessions = sessions.as_principal(&user);
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
    demo.requests.extend(
        model
            .take_requests()
            .into_iter()
            .map(|request| DemoRequest {
                session_id,
                request,
            }),
    );
    Ok(())
}

/// Where the demo finds what it needs.
#[derive(Debug, Clone)]
pub struct DemoPaths<'a> {
    /// The embedding model's folder (`cargo xtask fetch-model` fills it).
    pub model_dir: &'a Path,
    /// The discovery index's folder (`cargo xtask index` builds it).
    pub index_dir: &'a Path,
    /// Whether the index is opened as built or may be rebuilt in place.
    pub mode: IndexMode<'a>,
    /// External tools the index holds besides the assistant's own (the MCP
    /// server's `--external`); empty for the assistant alone.
    pub external: &'a [Descriptor],
    /// What discovery may return: the profile of the chats (the
    /// assistant's everyday one, the MCP server's own).
    pub profile: &'a Profile,
}

/// Why the host could not be prepared; each message ends with the command that fixes it.
#[derive(Debug)]
pub enum PrepareError {
    /// The embedding model is missing or unreadable.
    Model(EmbedError),
    /// Two linked abilities share a name.
    Registry(RegistryError),
    /// A shipped playbook does not parse.
    Skills(CatalogError),
    /// The discovery index is missing, stale or corrupt (or could not be rebuilt).
    Index(IndexError),
}

impl std::fmt::Display for PrepareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrepareError::Model(error) => write!(
                f,
                "{error}; fetch the model with `cargo xtask fetch-model` (or run `cargo xtask demo`)"
            ),
            PrepareError::Registry(error) => error.fmt(f),
            PrepareError::Skills(error) => error.fmt(f),
            PrepareError::Index(error) => write!(f, "discovery: {error} ({})", error.code()),
        }
    }
}

impl std::error::Error for PrepareError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PrepareError::Model(error) => Some(error),
            PrepareError::Registry(error) => Some(error),
            PrepareError::Skills(error) => Some(error),
            PrepareError::Index(error) => Some(error),
        }
    }
}

/// The host the demo runs on: the sample data, MiniLM for memory, and the
/// discovery index of `paths.index_dir`, opened as `paths.mode` says.
pub fn prepare(paths: &DemoPaths<'_>) -> Result<Host, PrepareError> {
    equip(Host::sample(), paths)
}

/// `host`, its stores and clock kept, with MiniLM for memory and the
/// discovery index of `paths.index_dir`, opened as `paths.mode` says.
pub fn equip(host: Host, paths: &DemoPaths<'_>) -> Result<Host, PrepareError> {
    let registry = chalie_core::registry().map_err(PrepareError::Registry)?;
    let embedder: Arc<dyn Embedder> =
        Arc::new(MiniLm::load(paths.model_dir).map_err(PrepareError::Model)?);
    let mut descriptors = crate::descriptors(registry).map_err(PrepareError::Skills)?;
    descriptors.extend_from_slice(paths.external);
    let discovery = crate::discovery::open(
        &descriptors,
        Arc::clone(&embedder),
        paths.index_dir,
        paths.mode,
        paths.profile,
    )
    .map_err(PrepareError::Index)?;
    Ok(host.with_embedder(embedder).with_discovery(discovery))
}

/// The whole demo on `host`, as a transcript; the web conversation is
/// pinned what `profiles.web` exposes and discovery never returns.
pub async fn run(host: &Host, profiles: &Profiles) -> Result<String, Box<dyn std::error::Error>> {
    Ok(record(host, profiles).await?.transcript)
}

/// The whole demo on `host`: its transcript and the requests its model was sent.
pub async fn record(
    host: &Host,
    profiles: &Profiles,
) -> Result<DemoRun, Box<dyn std::error::Error>> {
    let registry = chalie_core::registry()?.clone();
    let dispatcher = Arc::new(
        host.install(Dispatcher::builder(registry.clone()).policy(crate::policy()))
            .build(),
    );
    let mut demo = DemoRun::default();

    writeln!(
        demo.transcript,
        "== 1. Discovery: the model starts with the core tools; what it was not offered is refused until it finds it =="
    )?;
    let model = Narrated::new([
        // Calling a tool it was never offered: refused, nothing runs.
        Reply::tool_call(
            "weather",
            json!({ "location": "Rome, IT", "act_summary": "Checking the weather in Rome" }),
        ),
        Reply::tool_call("find_tools", json!({ "query": [DISCOVERY_REQUEST] })),
        Reply::tool_call(
            "weather",
            json!({ "location": "Rome, IT", "act_summary": "Checking the weather in Rome" }),
        ),
        Reply::text("It is cloudy in Rome, 11 °C, with a light wind."),
    ]);
    let sessions = Sessions::builder(Arc::clone(&dispatcher), model.clone()).build();
    converse(
        &mut demo,
        &sessions,
        &model,
        "chat",
        DISCOVERY_REQUEST,
        true,
    )
    .await?;

    writeln!(
        demo.transcript,
        "\n== 2. A write waits for the user's approval (the default mode) =="
    )?;
    let add_dinner = json!({
        "action": "add_event", "title": "Dinner with Maria", "start": "2026-03-05T19:30",
        "location": "Rome", "act_summary": "Adding dinner with Maria on Thursday",
    });
    let model = Narrated::new([
        Reply::tool_call(
            "find_tools",
            json!({ "query": ["add an event to my calendar"] }),
        ),
        Reply::tool_call("calendar_edit", add_dinner.clone()),
        Reply::text("Done: dinner with Maria is on Thursday at 19:30."),
    ]);
    let sessions = Sessions::builder(Arc::clone(&dispatcher), model.clone()).build();
    converse(
        &mut demo,
        &sessions,
        &model,
        "chat",
        "put dinner with Maria on Thursday at 7:30pm",
        true,
    )
    .await?;

    writeln!(
        demo.transcript,
        "\n== 3. The same write on the background channel: nobody to ask, so denied =="
    )?;
    let model = Narrated::new([
        Reply::tool_call(
            "find_tools",
            json!({ "query": ["add an event to my calendar"] }),
        ),
        Reply::tool_call("calendar_edit", add_dinner),
        Reply::text("I could not add it from the background; I will mention it in the next chat."),
    ]);
    let sessions = Sessions::builder(Arc::clone(&dispatcher), model.clone())
        .channel(Channel::Subconscious)
        .build();
    converse(
        &mut demo,
        &sessions,
        &model,
        "background",
        "tidy up the calendar",
        true,
    )
    .await?;

    writeln!(
        demo.transcript,
        "\n== 4. On the web profile, web tools are pinned; a long page is cut with a cursor =="
    )?;
    let pinned = crate::pinned(&profiles.web, &registry);
    writeln!(demo.transcript, "pinned: {}", pinned.join(", "))?;
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
        &mut demo,
        &sessions,
        &model,
        "web",
        "what does the tool discovery report say",
        true,
    )
    .await?;
    writeln!(
        demo.transcript,
        "reading on with the cursor, through the dispatcher:"
    )?;
    // The same pins as the web session's: a turn reaches only what it is
    // offered, here or in a session.
    let turn = Turn::builder(Channel::Chat)
        .session_id("web")
        .pin(pinned.iter().copied())
        .build();
    let first = dispatcher
        .dispatch(
            &turn,
            ToolCall::new("web_page", json!({ "url": REPORT_URL, "max_chars": 400 })),
        )
        .await;
    let cursor = chalie_core::envelope::Envelope::parse(&first.envelope)?
        .attribute(result_keys::NEXT_CURSOR)
        .ok_or("the long page was not cut")?
        .to_owned();
    let more = dispatcher
        .dispatch(
            &turn,
            ToolCall::new("scratchpad", json!({ "cursor": cursor, "max_chars": 300 })),
        )
        .await;
    write!(demo.transcript, "{}", indent(&mask_cursors(&more.envelope)))?;
    Ok(demo)
}
