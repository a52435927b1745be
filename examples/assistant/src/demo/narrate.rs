//! How the demo shows a run: a model wrapper that notes what the model is
//! offered and reads, and one line per event.

use std::sync::{Arc, Mutex};

use chalie_core::contracts::keys as result_keys;
use chalie_core::session::{
    Event, Message, Model, ModelChunk, ModelError, ModelRequest, Reply, Role, ScriptedModel,
};
use futures::stream::BoxStream;

use crate::state::lock;

/// A scripted model that also notes what the run sends it: the tools it is
/// offered and the envelopes it reads, as lines, and each request whole.
pub(super) struct Narrated {
    script: ScriptedModel,
    seen: Mutex<Vec<String>>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl Narrated {
    pub(super) fn new(replies: impl IntoIterator<Item = Reply>) -> Arc<Self> {
        Arc::new(Self {
            script: ScriptedModel::new(replies),
            seen: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
        })
    }

    pub(super) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.seen))
    }

    /// The requests sent since the last call, in order.
    pub(super) fn take_requests(&self) -> Vec<ModelRequest> {
        std::mem::take(&mut *lock(&self.requests))
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
        lock(&self.requests).push(request.clone());
        self.script.stream(request)
    }
}

/// The widest line the transcript shows; the model reads every character.
const SHOWN_LINE_CHARS: usize = 200;

/// `text` indented, each line cut to fit a terminal.
pub(super) fn indent(text: &str) -> String {
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
pub(super) fn mask_cursors(text: &str) -> String {
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
pub(super) fn describe(event: &Event) -> String {
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
