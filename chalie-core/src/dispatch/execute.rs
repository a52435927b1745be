//! Step 4: running the call, with panics caught and the result checked.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;

use super::errors;
use super::external::{ExternalOutput, ExternalTool, ExternalTools};
use crate::{Body, BoxFuture, PreparedCall, ToolResult, Turn};

/// A call ready to run.
pub(crate) enum Prepared {
    Ability(PreparedCall),
    External(Arc<dyn ExternalTools>, ExternalTool),
}

impl Prepared {
    /// Starts the call; a panic while starting is caught like one while
    /// running.
    pub(crate) fn start(
        self,
        tool: &str,
        arguments: Value,
        turn: Turn,
    ) -> BoxFuture<'static, ToolResult> {
        let tool: Arc<str> = Arc::from(tool);
        let started = std::panic::catch_unwind(AssertUnwindSafe(move || match self {
            Prepared::Ability(call) => {
                let future = call.run(turn);
                async move { ExternalOutput::Result(future.await) }.boxed()
            }
            Prepared::External(proxy, tool) => proxy.call(&tool, arguments, turn),
        }));
        match started {
            Ok(future) => async move {
                match AssertUnwindSafe(future).catch_unwind().await {
                    Ok(output) => settle(&tool, output),
                    Err(payload) => errors::panicked(&tool, &errors::panic_message(&*payload)),
                }
            }
            .boxed(),
            Err(payload) => {
                let result = errors::panicked(&tool, &errors::panic_message(&*payload));
                futures::future::ready(result).boxed()
            }
        }
    }
}

/// Only a canonical result reaches the model.
fn settle(tool: &str, output: ExternalOutput) -> ToolResult {
    match output {
        ExternalOutput::Result(result) => match result.body() {
            Some(Body::Unserializable(error)) => {
                errors::non_canonical(tool, &format!("its body could not be serialised ({error})"))
            }
            _ => result,
        },
        ExternalOutput::Raw(_) => errors::non_canonical(
            tool,
            "the external tool returned plain data, not a tool result",
        ),
    }
}
