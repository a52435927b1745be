//! What goes into the dispatcher and what comes out.

use serde_json::Value;

use crate::turn::TrailEntry;
use crate::{ActionRecord, ToolResult};

/// One tool call as a model (or the framework) made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's call id; the dispatcher makes one when absent.
    pub id: Option<String>,
    /// The tool name as called.
    pub name: String,
    /// The JSON arguments, framework fields (`act_summary`, `async`) included.
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    /// Uses the provider's call id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
}

/// What the dispatcher returns for one call.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Dispatched {
    /// The envelope the model reads. For a background call, first the
    /// receipt, later (through [`BackgroundCalls`](crate::BackgroundCalls))
    /// the final envelope.
    pub envelope: String,
    /// The result the envelope was rendered from, e.g. for its media.
    pub result: ToolResult,
    /// The trail's entry, names shared with the call: the record's strings
    /// are only copied out when [`record`](Self::record) is asked for.
    pub(crate) entry: TrailEntry,
}

impl Dispatched {
    /// The call's id.
    pub fn call_id(&self) -> &str {
        &self.entry.call_id
    }

    /// What was recorded on the turn's action trail for this call.
    pub fn record(&self) -> ActionRecord {
        self.entry.to_record()
    }
}

impl PartialEq for Dispatched {
    fn eq(&self, other: &Self) -> bool {
        self.envelope == other.envelope
            && self.result == other.result
            && self.record() == other.record()
    }
}
