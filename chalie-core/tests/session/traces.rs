//! What a `tracing` subscriber sees of a run composed as a user composes
//! it: one `invoke_agent` span per run, a `chat` span per model request and
//! an `execute_tool` span per call beneath it, with the OpenTelemetry GenAI
//! attribute names; arguments and results only when the host opts in; the
//! tokens each request used when the model's API reports them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use chalie_core::session::{Mode, Model, Reply, ScriptedModel, Sessions};
use chalie_core::{Channel, Dispatcher, dispatch::Setting};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::Registry;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use crate::{allow_all, registry, sessions_with};

#[derive(Debug, Clone)]
struct Captured {
    id: u64,
    name: &'static str,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = ctx
            .span(id)
            .and_then(|span| span.parent())
            .map(|parent| parent.id().into_u64());
        self.0.lock().unwrap().push(Captured {
            id: id.into_u64(),
            name: attrs.metadata().name(),
            parent,
            fields,
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some(span) = spans.iter_mut().find(|span| span.id == id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }
}

async fn traced_run(trace_payloads: bool, session: &str) -> Vec<Captured> {
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(Registry::default().with(capture.clone()));
    let model = Arc::new(ScriptedModel::new([
        Reply::tool_call("find_tools", json!({ "query": ["rename a task"] })),
        Reply::tool_call("rename_task", json!({ "id": 7, "title": "bills" })),
        Reply::text("Renamed."),
    ]));
    let mut policy = allow_all();
    policy
        .set(Channel::Chat, "rename_task", Setting::Allow)
        .unwrap();
    let dispatcher = Dispatcher::builder(registry())
        .policy(policy)
        .trace_payloads(trace_payloads)
        .build();
    let sessions = Sessions::builder(Arc::new(dispatcher), model).build();
    sessions.set_mode(session, Mode::Auto).unwrap();
    sessions
        .send(session, "rename task 7")
        .unwrap()
        .finish()
        .await;
    capture.0.lock().unwrap().clone()
}

#[tokio::test(flavor = "current_thread")]
async fn a_run_is_one_tree_of_genai_spans() {
    let spans = traced_run(false, "trace-tree").await;
    let runs: Vec<&Captured> = spans.iter().filter(|s| s.name == "invoke_agent").collect();
    assert_eq!(runs.len(), 1, "{spans:#?}");
    let run = runs[0];
    assert_eq!(run.fields["chalie.session.id"], "trace-tree");
    assert_eq!(run.fields["chalie.status"], "completed");

    let chats: Vec<&Captured> = spans.iter().filter(|s| s.name == "chat").collect();
    assert_eq!(chats.len(), 3);
    for chat in &chats {
        assert_eq!(chat.parent, Some(run.id));
        assert_eq!(chat.fields["gen_ai.operation.name"], "chat");
        assert_eq!(chat.fields["gen_ai.request.model"], "scripted");
    }

    let tools: Vec<&Captured> = spans.iter().filter(|s| s.name == "execute_tool").collect();
    assert_eq!(tools.len(), 2);
    let rename = tools
        .iter()
        .find(|span| span.fields["gen_ai.tool.name"] == "rename_task")
        .unwrap();
    assert_eq!(rename.parent, Some(run.id));
    assert_eq!(rename.fields["gen_ai.operation.name"], "execute_tool");
    assert_eq!(rename.fields["otel.name"], "execute_tool rename_task");
    assert_eq!(rename.fields["gen_ai.tool.call.id"], "call-2");
    assert_eq!(rename.fields["chalie.channel"], "chat");
    assert_eq!(rename.fields["chalie.permission"], "rename_task");
    assert_eq!(rename.fields["chalie.gate.decision"], "allowed");
    assert_eq!(rename.fields["chalie.status"], "success");
    assert_eq!(rename.fields["chalie.reused"], "false");
    // Private by default.
    assert!(!rename.fields.contains_key("gen_ai.tool.call.arguments"));
    assert!(!rename.fields.contains_key("gen_ai.tool.call.result"));
}

#[tokio::test(flavor = "current_thread")]
async fn arguments_and_results_are_recorded_only_when_asked() {
    let spans = traced_run(true, "trace-payloads").await;
    let rename = spans
        .iter()
        .find(|span| {
            span.name == "execute_tool"
                && span.fields.get("gen_ai.tool.name").map(String::as_str) == Some("rename_task")
        })
        .unwrap();
    assert_eq!(
        rename.fields["gen_ai.tool.call.arguments"],
        r#"{"id":7,"title":"bills"}"#
    );
    assert!(rename.fields["gen_ai.tool.call.result"].contains("renamed task 7"));
}

#[tokio::test(flavor = "current_thread")]
async fn a_refusal_is_an_error_span_with_its_code() {
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(Registry::default().with(capture.clone()));
    let dispatcher = Dispatcher::builder(registry()).build();
    let turn = chalie_core::Turn::builder(Channel::Chat).build();
    dispatcher
        .dispatch(
            &turn,
            chalie_core::ToolCall::new("delete_task", json!({ "id": 1 })),
        )
        .await;
    let spans = capture.0.lock().unwrap().clone();
    let refused = &spans[0];
    assert_eq!(refused.fields["error.type"], "tool-not-available");
    assert_eq!(refused.fields["otel.status_code"], "ERROR");
    assert_eq!(refused.fields["chalie.gate.decision"], "not_reached");
}

/// The `chat` spans of one run of `model` in `auto` mode, composed as the
/// README composes sessions.
async fn chat_spans(model: Arc<dyn Model>, session: &str) -> Vec<Captured> {
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(Registry::default().with(capture.clone()));
    let sessions = sessions_with(allow_all(), model, None);
    sessions.set_mode(session, Mode::Auto).unwrap();
    let events = sessions
        .send(session, "delete task 7")
        .unwrap()
        .finish()
        .await;
    assert_eq!(
        events.last().map(|event| event.name()),
        Some("run.settlement.completed")
    );
    let spans = capture.0.lock().unwrap().clone();
    spans
        .into_iter()
        .filter(|span| span.name == "chat")
        .collect()
}

fn tokens(span: &Captured) -> (Option<&str>, Option<&str>) {
    (
        span.fields
            .get("gen_ai.usage.input_tokens")
            .map(String::as_str),
        span.fields
            .get("gen_ai.usage.output_tokens")
            .map(String::as_str),
    )
}

#[cfg(feature = "openai")]
#[tokio::test(flavor = "current_thread")]
async fn each_openai_request_span_has_the_tokens_the_stream_reported() {
    use crate::openai::{serve, text_reply, tool_call_reply, with_usage};
    use chalie_core::session::OpenAiModel;

    let (base, _) = serve(vec![
        with_usage(tool_call_reply(), 310, 18),
        with_usage(text_reply(), 352, 6),
    ])
    .await;
    let chats = chat_spans(
        Arc::new(OpenAiModel::new(&base, "gpt-test")),
        "trace-openai-usage",
    )
    .await;
    assert_eq!(chats.len(), 2, "{chats:#?}");
    assert_eq!(chats[0].fields["gen_ai.request.model"], "gpt-test");
    assert_eq!(tokens(&chats[0]), (Some("310"), Some("18")));
    assert_eq!(tokens(&chats[1]), (Some("352"), Some("6")));

    // A server that reports nothing: no counts, rather than made-up zeros.
    let (base, _) = serve(vec![tool_call_reply(), text_reply()]).await;
    let chats = chat_spans(
        Arc::new(OpenAiModel::new(&base, "gpt-test")),
        "trace-openai-no-usage",
    )
    .await;
    assert_eq!(chats.len(), 2);
    assert!(chats.iter().all(|chat| tokens(chat) == (None, None)));
}

#[cfg(feature = "anthropic")]
#[tokio::test(flavor = "current_thread")]
async fn each_anthropic_request_span_has_message_start_and_delta_usage() {
    use crate::anthropic::{base, text_reply, tool_use_reply};
    use crate::openai::serve;
    use chalie_core::session::AnthropicModel;

    let (served, _) = serve(vec![tool_use_reply(), text_reply()]).await;
    let chats = chat_spans(
        Arc::new(AnthropicModel::new(&base(&served), "claude-test")),
        "trace-anthropic-usage",
    )
    .await;
    assert_eq!(chats.len(), 2, "{chats:#?}");
    assert_eq!(chats[0].fields["gen_ai.request.model"], "claude-test");
    // message_start's input tokens, message_delta's final output count.
    assert_eq!(tokens(&chats[0]), (Some("410"), Some("31")));
    // The input counts the prompt cache's reads too.
    assert_eq!(tokens(&chats[1]), (Some("572"), Some("5")));
}
