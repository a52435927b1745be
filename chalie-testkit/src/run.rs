//! Whole runs: a scripted model through the session run loop, the
//! harness's mode and approver, and assertions on the event sequence.

use std::sync::Arc;

use chalie_core::dispatch::Approval;
use chalie_core::session::{Event, Reply, ScriptedModel, SessionError, Sessions};

use crate::{Harness, ScriptedApprover};

/// The session every harness run belongs to.
const SESSION: &str = "harness";

/// One run's events, and the model that was driven.
#[derive(Debug)]
pub struct RunOutcome {
    /// Every event, in order, `message.delta` included.
    pub events: Vec<Event>,
    /// The scripted model: its [`requests`](ScriptedModel::requests) are
    /// what the run sent it.
    pub model: Arc<ScriptedModel>,
}

impl RunOutcome {
    /// The events' names, without the streaming noise (`message.delta`,
    /// `agent.phase.changed`).
    pub fn names(&self) -> Vec<&'static str> {
        self.events
            .iter()
            .map(Event::name)
            .filter(|name| !matches!(*name, "message.delta" | "agent.phase.changed"))
            .collect()
    }

    /// Panics, listing the events, unless `expected` appear in this order
    /// (other events may come between).
    #[track_caller]
    pub fn assert_sequence(&self, expected: &[&str]) -> &Self {
        let names = self.names();
        let mut rest = names.iter();
        for wanted in expected {
            assert!(
                rest.any(|name| name == wanted),
                "expected `{wanted}` (in the order {expected:?}); the run emitted {names:?}"
            );
        }
        self
    }

    /// The final answer (`message.completed`), if there was one.
    pub fn answer(&self) -> Option<&str> {
        self.events.iter().rev().find_map(|event| match event {
            Event::MessageCompleted { content } => Some(content.as_str()),
            _ => None,
        })
    }

    /// The error codes of the tool calls that failed, in order.
    pub fn failures(&self) -> Vec<&str> {
        self.events
            .iter()
            .filter_map(|event| match event {
                Event::ToolFailed { error, .. } => Some(error.code.as_str()),
                _ => None,
            })
            .collect()
    }
}

impl Harness {
    /// Runs one user `message` through the session run loop with a model
    /// that replays `script`, on the harness's channel and in its mode
    /// (see [`HarnessBuilder::mode`](crate::HarnessBuilder::mode)).
    ///
    /// The session offers what the harness pins (see
    /// [`HarnessBuilder::pin`](crate::HarnessBuilder::pin)) beside the
    /// channel's core; any other call the script makes is refused as
    /// `tool-not-available` unless the script first calls `find_tools`,
    /// as a real model must. A write the session holds for approval
    /// is answered by the harness's [`ScriptedApprover`](crate::ScriptedApprover),
    /// in order; without one, or once its answers run out, it is rejected.
    ///
    /// ```no_run
    /// # async fn example(harness: chalie_testkit::Harness) {
    /// use chalie_core::session::Reply;
    /// use serde_json::json;
    ///
    /// let run = harness
    ///     .run([Reply::tool_call("weather", json!({ "location": "Rome" })), Reply::text("Cloudy.")], "weather in Rome?")
    ///     .await
    ///     .expect("a runtime");
    /// run.assert_sequence(&["tool.started", "tool.completed", "message.completed"]);
    /// assert_eq!(run.answer(), Some("Cloudy."));
    /// # }
    /// ```
    pub async fn run(
        &self,
        script: impl IntoIterator<Item = Reply>,
        message: &str,
    ) -> Result<RunOutcome, SessionError> {
        let model = Arc::new(ScriptedModel::new(script));
        let sessions = Sessions::builder(Arc::clone(&self.shared), model.clone())
            .channel(self.turn().channel())
            .pinned(self.turn().pinned_tools().iter().cloned())
            .build();
        sessions.set_mode(SESSION, self.mode)?;
        // The session belongs to the harness's principal, so its runs'
        // turns carry it, as a signed-in user's do.
        sessions.assign_owner(SESSION, self.turn().principal().cloned())?;
        let run = sessions.send(SESSION, message)?;
        let mut stream = run.events();
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            if let Event::ToolApprovalRequired { tool_call_id, .. } = &event {
                let answer = self
                    .approver
                    .as_ref()
                    .map_or(Approval::Rejected, ScriptedApprover::next_answer);
                match answer {
                    Approval::Approved => sessions.approve(run.id(), tool_call_id)?,
                    Approval::Rejected => sessions.reject(run.id(), tool_call_id)?,
                }
            }
            events.push(event);
        }
        sessions.shutdown();
        Ok(RunOutcome { events, model })
    }
}
