//! The MCP side of a call: `tools/list`, `tools/call`, progress, and the
//! translation of a dispatched call into an MCP result.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    GetSkillRequestParams, GetSkillResult, Implementation, JsonObject, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ReadResourceRequestParams, ReadResourceResponse, RequestMetaObject, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;

use super::McpServer;
use super::approval::AskedAbout;
use super::catalog::{CALL_PROXY, fields_note};
use crate::{
    Channel, ToolCall, ToolResult, Turn, dispatch::Dispatched, dispatch::remote::RemoteApproval,
    dispatch::trace::RemoteParent, envelope::render_envelope, result::Body, turn::ProgressSink,
};

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let instructions = match self.shared.exposure {
            super::Exposure::Full => {
                "Every tool is listed. Results are chalie envelopes: `[tool(status=...)]`, the body, `[end:tool]`; an error carries a code and a hint to act on."
            }
            super::Exposure::OnDemand { .. } => {
                "Find tools with `find_tools`, then call one through `call_tool` with its exact name and arguments matching the input schema `find_tools` returned. Results are chalie envelopes; an error carries a code and a hint to act on."
            }
        };
        let capabilities = match self.shared.skills.is_empty() {
            true => ServerCapabilities::builder().enable_tools().build(),
            false => ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_skills()
                .build(),
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                self.shared.name.clone(),
                self.shared.version.clone(),
            ))
            .with_instructions(format!("{instructions} {}", fields_note()))
    }

    fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, ErrorData>> + Send + '_ {
        let listed = ListToolsResult::with_all_items(self.tools());
        let listed = match self.cache_hints(&context) {
            Some((ttl, scope)) => listed.with_ttl_ms(ttl).with_cache_scope(scope),
            None => listed,
        };
        std::future::ready(Ok(listed))
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let listed = self.shared.skills.list();
        Ok(match self.cache_hints(&context) {
            Some((ttl, scope)) => listed.with_ttl_ms(ttl).with_cache_scope(scope),
            None => listed,
        })
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.shared.skills.get(&request.uri)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.shared.skills.read(&request.uri).map(Into::into)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let index = *self.shared.by_name.get(name)?;
        Some(self.shared.listed[index].tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context).await
    }
}

impl McpServer {
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Calling a tool that is not listed is protocol misuse, not
        // something the model can fix by rephrasing.
        let Some(&index) = self.shared.by_name.get(request.name.as_ref()) else {
            let how = match self.shared.exposure {
                super::Exposure::Full => "call one of the tools `tools/list` returns",
                super::Exposure::OnDemand { .. } => {
                    "call it through `call_tool` after finding it with `find_tools`"
                }
            };
            return Err(ErrorData::invalid_params(
                format!("no listed tool is named `{}`; {how}", request.name),
                None,
            ));
        };
        let structured = self.shared.listed[index].structured;
        let remote = self
            .shared
            .approvals
            .for_request(&request, &context, self.connection())?;
        // Kept only while the user may still be asked about this call, and
        // only what its retry must repeat.
        let asked_about = matches!(remote, Some(RemoteApproval::Deferred(_))).then(|| AskedAbout {
            tool: request.name.to_string(),
            arguments: request.arguments.clone(),
        });
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let proxied = request.name == CALL_PROXY;
        let (name, arguments) = if proxied {
            match self.unwrap_proxy(arguments) {
                Ok(call) => call,
                Err(result) => return Ok(envelope_result(CALL_PROXY, &result).into()),
            }
        } else {
            (request.name.to_string(), arguments)
        };

        let progress = Forwarder::start(context.meta.get_progress_token(), context.peer);
        // The turn reaches what this server listed (its own configuration,
        // pinned in code) and, through the proxy, what discovery may show:
        // the proxied name counts as found, within the External channel's
        // profile, so the dispatcher still refuses what that profile hides.
        let mut turn = Turn::builder(Channel::External)
            .session_id(self.session_id.clone())
            .run_id(format!("{}-{}", self.session_id, context.id))
            .pin_shared(&self.shared.listed_names)
            .single_call();
        if let Some(sink) = progress.sink() {
            turn = turn.progress(sink);
        }
        if let Some(remote) = remote {
            turn = turn.extension(remote);
        }
        // Read only when a subscriber records the call's span, which is
        // all the caller's trace context is for.
        if crate::dispatch::trace::spans_enabled()
            && let Some(parent) = request_parent(&context.meta)
        {
            turn = turn.extension(parent);
        }
        if let Some(principal) = &self.shared.principal {
            turn = turn.principal(principal.clone());
        }
        let turn = turn.build();
        if proxied {
            turn.activate_tools([name.as_str()]);
        }
        let call = ToolCall::new(name, arguments).with_id(context.id.to_string());
        let dispatched = self.shared.dispatcher.dispatch(&turn, call).await;
        let question = turn
            .extension::<RemoteApproval>()
            .and_then(RemoteApproval::question);
        drop(turn);
        progress.finish().await;
        if let (Some(question), Some(request)) = (question, asked_about) {
            let asked = self
                .shared
                .approvals
                .ask(request, self.connection(), &question);
            return Ok(asked.into());
        }
        if let Some(trail) = &self.shared.trail {
            trail.record(dispatched.record());
        }
        Ok(dispatched_result(dispatched, structured).into())
    }

    /// The proxied name and arguments, or the error the model can fix.
    #[allow(clippy::result_large_err)] // rendered at once by the caller
    fn unwrap_proxy(&self, arguments: Value) -> Result<(String, Value), ToolResult> {
        let Value::Object(mut object) = arguments else {
            return Err(invalid("the arguments must be an object"));
        };
        let name = match object.remove("name") {
            Some(Value::String(name)) if !name.trim().is_empty() => name,
            _ => {
                return Err(invalid(
                    "`name` must be the exact name of a tool `find_tools` returned",
                ));
            }
        };
        let arguments = match object.remove("arguments") {
            None | Some(Value::Null) => Value::Object(JsonObject::new()),
            Some(Value::Object(arguments)) => Value::Object(arguments),
            Some(_) => return Err(invalid("`arguments` must be an object")),
        };
        if let Some(extra) = object.keys().next() {
            return Err(invalid(&format!(
                "unknown field `{extra}`; the proxy takes `name` and `arguments`"
            )));
        }
        // What the proxy may reach is what discovery may show: an ability
        // kept out of discovery is as unknown here as a name never linked.
        let hidden = name == CALL_PROXY
            || self
                .shared
                .dispatcher
                .registry()
                .get(&name)
                .is_some_and(|entry| !entry.spec().discoverable());
        if hidden {
            return Err(ToolResult::error(
                "unknown-tool",
                format!("no tool is named `{name}`"),
                "call `find_tools` and use a name it returns",
            ));
        }
        Ok((name, arguments))
    }
}

/// The caller's span the call joins, from the request's `traceparent`.
fn request_parent(meta: &RequestMetaObject) -> Option<RemoteParent> {
    let traceparent = meta.get_traceparent()?;
    crate::mcp::trace_context::parent(traceparent).map(RemoteParent)
}

fn invalid(message: &str) -> ToolResult {
    ToolResult::error(
        "invalid-arguments",
        message,
        "call `call_tool` with `name` (from `find_tools`) and `arguments` (an object)",
    )
}

/// A dispatched call as an MCP result: the envelope as text, `isError`
/// for a failure the model can act on, structured content when declared.
fn dispatched_result(dispatched: Dispatched, structured: bool) -> CallToolResult {
    let mut result = text_result(dispatched.envelope, &dispatched.result);
    if structured && let Some(Body::Json(body @ Value::Object(_))) = dispatched.result.body() {
        result.structured_content = Some(body.clone());
    }
    if let Some(media) = dispatched.result.media()
        && media.mime_type.starts_with("image/")
        && let Some(data) = media.data.as_str()
    {
        result
            .content
            .push(ContentBlock::image(data, media.mime_type.clone()));
    }
    result
}

fn envelope_result(tool: &str, result: &ToolResult) -> CallToolResult {
    text_result(render_envelope(tool, None, result), result)
}

fn text_result(envelope: String, result: &ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(envelope)];
    if result.is_success() {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    }
}

/// Turns the ability's progress reports into MCP progress notifications,
/// in order, while the call runs.
///
/// Most clients send a progress token with every call, and most calls
/// report nothing: the channel and the task that sends the notifications
/// start with the first report, so a silent call pays for neither.
struct Forwarder {
    state: Option<Arc<Mutex<Forwarding>>>,
}

/// Where a call's reports go once the first one arrives.
struct Forwarding {
    token: ProgressToken,
    peer: Peer<RoleServer>,
    sender: Option<mpsc::UnboundedSender<String>>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// Set by [`Forwarder::finish`]: a report after the result is dropped.
    closed: bool,
}

impl Forwarding {
    fn send(&mut self, message: String) {
        if self.closed {
            return;
        }
        if self.sender.is_none() {
            let (sender, mut receiver) = mpsc::unbounded_channel::<String>();
            let token = self.token.clone();
            let peer = self.peer.clone();
            self.task = Some(tokio::spawn(async move {
                let mut progress = 0.0;
                while let Some(message) = receiver.recv().await {
                    progress += 1.0;
                    let notification = ProgressNotificationParam::new(token.clone(), progress)
                        .with_message(message);
                    // A client gone mid-call is not the ability's problem.
                    let _ = peer.notify_progress(notification).await;
                }
            }));
            self.sender = Some(sender);
        }
        if let Some(sender) = &self.sender {
            let _ = sender.send(message);
        }
    }
}

impl Forwarder {
    fn start(token: Option<ProgressToken>, peer: Peer<RoleServer>) -> Self {
        Forwarder {
            state: token.map(|token| {
                Arc::new(Mutex::new(Forwarding {
                    token,
                    peer,
                    sender: None,
                    task: None,
                    closed: false,
                }))
            }),
        }
    }

    fn sink(&self) -> Option<ProgressSink> {
        let state = Arc::clone(self.state.as_ref()?);
        Some(Arc::new(move |progress: crate::turn::Progress| {
            state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .send(progress.message);
        }))
    }

    /// Closes the channel and waits until every report is sent, so all
    /// notifications precede the result.
    async fn finish(self) {
        let Some(state) = self.state else { return };
        let task = {
            let mut forwarding = state.lock().unwrap_or_else(PoisonError::into_inner);
            forwarding.closed = true;
            forwarding.sender = None;
            forwarding.task.take()
        };
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}
