//! Step 4: running the call, with panics caught and the result checked.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;

use super::errors;
use super::external::{ExternalOutput, ExternalTool, ExternalTools};
use crate::{BoxFuture, ToolResult, Turn, result::Body};

/// A call ready to run: an ability's future, built over its parsed
/// parameters and its call-bound turn, or an external tool to call.
///
/// Both variants are pointers, and so is every variant of [`Started`]:
/// the call's future holds one of them across the gate and the run.
pub(crate) enum Prepared {
    Ability(BoxFuture<'static, ToolResult>),
    External(Arc<dyn ExternalTools>, Box<ExternalTool>),
}

/// A call that has started: the future its ability or proxy returned.
pub(crate) enum Started {
    Ability(BoxFuture<'static, ToolResult>),
    External(BoxFuture<'static, ExternalOutput>),
    /// Starting it panicked: the rare result, boxed.
    Failed(Box<ToolResult>),
}

impl Prepared {
    /// Starts the call; a panic while starting is caught like one while
    /// running. An ability's future was built when its arguments parsed,
    /// so only a proxy is called here, with the turn `bind` gives.
    pub(crate) fn start(
        self,
        tool: &str,
        arguments: Value,
        bind: impl FnOnce() -> Turn,
    ) -> Started {
        match self {
            Prepared::Ability(future) => Started::Ability(future),
            Prepared::External(proxy, external) => errors::unless_panicked(tool, move || {
                Started::External(proxy.call(&external, arguments, bind()))
            })
            .unwrap_or_else(|failed| Started::Failed(Box::new(failed))),
        }
    }
}

impl Started {
    /// Runs it to the end; a panic becomes `ability-panicked`, a result
    /// the envelope cannot show becomes `non-canonical-result`.
    pub(crate) async fn finish(self, tool: &str) -> ToolResult {
        // An ability's result is checked as it comes, not wrapped first as
        // an external tool's output: it moves once less on every call.
        match self {
            Started::Ability(future) => match AssertUnwindSafe(future).catch_unwind().await {
                Ok(result) => canonical(tool, result),
                Err(payload) => errors::panicked_with(tool, &*payload),
            },
            Started::External(future) => match AssertUnwindSafe(future).catch_unwind().await {
                Ok(ExternalOutput::Result(result)) => canonical(tool, result),
                Ok(ExternalOutput::Raw(_)) => errors::non_canonical(
                    tool,
                    "the external tool returned plain data, not a tool result",
                ),
                Err(payload) => errors::panicked_with(tool, &*payload),
            },
            Started::Failed(result) => *result,
        }
    }
}

/// Only a canonical result reaches the model.
fn canonical(tool: &str, result: ToolResult) -> ToolResult {
    match result.body() {
        Some(Body::Unserializable(error)) => {
            errors::non_canonical(tool, &format!("its body could not be serialised ({error})"))
        }
        _ => result,
    }
}
