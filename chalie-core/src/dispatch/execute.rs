//! The **execute** step ([the steps](super::Dispatcher#the-steps-of-a-call)):
//! running the call, with panics caught and the result checked.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

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
    /// Starting it panicked: the rare result, boxed (taken when polled).
    Failed(Option<Box<ToolResult>>),
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
            .unwrap_or_else(|failed| Started::Failed(Some(Box::new(failed)))),
        }
    }
}

impl Started {
    /// Runs it to the end; a panic becomes `ability-panicked`, a result
    /// the envelope cannot show becomes `non-canonical-result`.
    pub(crate) fn finish(self, tool: &str) -> Finishing<'_> {
        Finishing {
            started: self,
            tool,
        }
    }
}

/// A started call running to its end: [`Started::finish`].
///
/// Written by hand rather than as an `async fn` around a `CatchUnwind`:
/// every future it polls is boxed, so it is `Unpin`, and only the poll of
/// that future is wrapped in `catch_unwind`, so the call's result moves
/// straight out instead of through two more layers of futures.
pub(crate) struct Finishing<'a> {
    started: Started,
    tool: &'a str,
}

impl Future for Finishing<'_> {
    type Output = ToolResult;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolResult> {
        let tool = self.tool;
        match &mut self.started {
            Started::Ability(future) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
                    Ok(Poll::Ready(result)) => Poll::Ready(canonical(tool, result)),
                    Ok(Poll::Pending) => Poll::Pending,
                    Err(payload) => Poll::Ready(errors::panicked_with(tool, &*payload)),
                }
            }
            Started::External(future) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
                    Ok(Poll::Ready(ExternalOutput::Result(result))) => {
                        Poll::Ready(canonical(tool, result))
                    }
                    Ok(Poll::Ready(ExternalOutput::Raw(_))) => Poll::Ready(errors::non_canonical(
                        tool,
                        "the external tool returned plain data, not a tool result",
                    )),
                    Ok(Poll::Pending) => Poll::Pending,
                    Err(payload) => Poll::Ready(errors::panicked_with(tool, &*payload)),
                }
            }
            // Taken by the one poll that finishes it; a future is not
            // polled again once it is ready.
            Started::Failed(result) => match result.take() {
                Some(result) => Poll::Ready(*result),
                None => Poll::Pending,
            },
        }
    }
}

/// Only a canonical result reaches the model.
// On every call's path; left out of line, it cost a call and a move of
// the result.
#[inline(always)]
fn canonical(tool: &str, result: ToolResult) -> ToolResult {
    match result.body() {
        Some(Body::Unserializable(error)) => {
            errors::non_canonical(tool, &format!("its body could not be serialised ({error})"))
        }
        _ => result,
    }
}

#[cfg(test)]
mod tests {
    use super::Started;
    use crate::ToolResult;

    /// A panic is caught on every poll, not only the first: here after the
    /// ability has yielded once.
    #[tokio::test]
    async fn a_panic_after_a_yield_is_caught() {
        let future = Box::pin(async {
            tokio::task::yield_now().await;
            if true {
                panic!("late failure");
            }
            ToolResult::success("unreachable")
        });
        let result = Started::Ability(future).finish("late").await;
        let error = result.as_error().expect("an error result");
        assert_eq!(error.code().as_str(), "ability-panicked");
        assert!(
            error.message().contains("late failure"),
            "{}",
            error.message()
        );
    }
}
