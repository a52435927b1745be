//! The in-memory store: everything a session keeps, gone with the process.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::session::model::Message;
use crate::session::store::{
    ApprovalRecord, ApprovalState, PlanStep, PolicyRecord, RunRecord, RunStatus, SessionRecord,
    SessionStore, StoreError, StoredMessage, ToolCallRecord,
};
use crate::turn::Principal;

#[derive(Debug, Default)]
struct Data {
    sessions: HashMap<String, SessionRecord>,
    // Session ids in creation order, for `sessions_of`.
    session_order: Vec<String>,
    policy: Vec<PolicyRecord>,
    runs: HashMap<String, RunRecord>,
    // Run ids in creation order, for `unfinished_runs`.
    run_order: Vec<String>,
    messages: HashMap<String, Vec<StoredMessage>>,
    tool_calls: HashMap<String, Vec<ToolCallRecord>>,
    approvals: Vec<ApprovalRecord>,
    plans: HashMap<String, Vec<PlanStep>>,
}

/// A [`SessionStore`] in memory: for tests and hosts that persist nothing.
#[derive(Debug, Default)]
pub struct MemoryStore {
    data: Mutex<Data>,
    /// Each principal's records ([`RecordStore`](crate::session::RecordStore)).
    pub(in crate::session::store) records: Mutex<crate::session::store::records::RecordTable>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn data(&self) -> MutexGuard<'_, Data> {
        self.data.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SessionStore for MemoryStore {
    fn put_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        let mut data = self.data();
        if data
            .sessions
            .insert(session.id.clone(), session.clone())
            .is_none()
        {
            data.session_order.push(session.id.clone());
        }
        Ok(())
    }

    fn create_session(&self, session: &SessionRecord) -> Result<SessionRecord, StoreError> {
        let mut data = self.data();
        if let Some(stored) = data.sessions.get(&session.id) {
            return Ok(stored.clone());
        }
        data.sessions.insert(session.id.clone(), session.clone());
        data.session_order.push(session.id.clone());
        Ok(session.clone())
    }

    fn sessions_of(&self, owner: &Principal) -> Result<Vec<SessionRecord>, StoreError> {
        let data = self.data();
        Ok(data
            .session_order
            .iter()
            .filter_map(|id| data.sessions.get(id))
            .filter(|session| session.owner.as_ref() == Some(owner))
            .cloned()
            .collect())
    }

    fn put_policy(&self, record: &PolicyRecord) -> Result<(), StoreError> {
        let mut data = self.data();
        match data
            .policy
            .iter_mut()
            .find(|kept| kept.channel == record.channel && kept.permission == record.permission)
        {
            Some(kept) => kept.setting = record.setting,
            None => data.policy.push(record.clone()),
        }
        Ok(())
    }

    fn policy(&self) -> Result<Vec<PolicyRecord>, StoreError> {
        Ok(self.data().policy.clone())
    }

    fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        Ok(self.data().sessions.get(id).cloned())
    }

    fn put_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        let mut data = self.data();
        if data.runs.insert(run.id.clone(), run.clone()).is_none() {
            data.run_order.push(run.id.clone());
        }
        Ok(())
    }

    fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        Ok(self.data().runs.get(id).cloned())
    }

    fn unfinished_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        let data = self.data();
        Ok(data
            .run_order
            .iter()
            .filter_map(|id| data.runs.get(id))
            .filter(|run| run.status == RunStatus::Running)
            .cloned()
            .collect())
    }

    fn append_message(
        &self,
        session_id: &str,
        run_id: &str,
        message: &Message,
    ) -> Result<u64, StoreError> {
        let mut data = self.data();
        let messages = data.messages.entry(session_id.to_owned()).or_default();
        let seq = messages.len() as u64;
        messages.push(StoredMessage {
            seq,
            run_id: run_id.to_owned(),
            message: message.clone(),
        });
        Ok(seq)
    }

    fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        Ok(self
            .data()
            .messages
            .get(session_id)
            .cloned()
            .unwrap_or_default())
    }

    fn put_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError> {
        let mut data = self.data();
        let calls = data.tool_calls.entry(record.run_id.clone()).or_default();
        // A run's newest call is the one updated, so search from the end.
        match calls
            .iter_mut()
            .rev()
            .find(|stored| stored.call_id == record.call_id)
        {
            Some(stored) => *stored = record.clone(),
            None => calls.push(record.clone()),
        }
        Ok(())
    }

    fn tool_calls(&self, run_id: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
        Ok(self
            .data()
            .tool_calls
            .get(run_id)
            .cloned()
            .unwrap_or_default())
    }

    fn background_calls(&self, session_id: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
        let data = self.data();
        Ok(data
            .run_order
            .iter()
            .filter(|run| {
                data.runs
                    .get(*run)
                    .is_some_and(|record| record.session_id == session_id)
            })
            .filter_map(|run| data.tool_calls.get(run))
            .flatten()
            .filter(|call| call.status.is_undelivered())
            .cloned()
            .collect())
    }

    fn put_approval(&self, approval: &ApprovalRecord) -> Result<(), StoreError> {
        let mut data = self.data();
        data.approvals.retain(|stored| {
            !(stored.run_id == approval.run_id && stored.call_id == approval.call_id)
        });
        data.approvals.push(approval.clone());
        Ok(())
    }

    fn approval(&self, run_id: &str, call_id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        Ok(self
            .data()
            .approvals
            .iter()
            .find(|stored| stored.run_id == run_id && stored.call_id == call_id)
            .cloned())
    }

    fn decide_approval(
        &self,
        run_id: &str,
        call_id: &str,
        state: ApprovalState,
    ) -> Result<bool, StoreError> {
        let mut data = self.data();
        match data.approvals.iter_mut().find(|stored| {
            stored.run_id == run_id
                && stored.call_id == call_id
                && stored.state == ApprovalState::Pending
        }) {
            Some(stored) => {
                stored.state = state;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn pending_approvals(&self, session_id: &str) -> Result<Vec<ApprovalRecord>, StoreError> {
        Ok(self
            .data()
            .approvals
            .iter()
            .filter(|stored| {
                stored.session_id == session_id && stored.state == ApprovalState::Pending
            })
            .cloned()
            .collect())
    }

    fn add_plan_step(&self, session_id: &str, step: &PlanStep) -> Result<(), StoreError> {
        self.data()
            .plans
            .entry(session_id.to_owned())
            .or_default()
            .push(step.clone());
        Ok(())
    }

    fn plan(&self, session_id: &str) -> Result<Vec<PlanStep>, StoreError> {
        Ok(self
            .data()
            .plans
            .get(session_id)
            .cloned()
            .unwrap_or_default())
    }

    fn clear_plan(&self, session_id: &str) -> Result<(), StoreError> {
        self.data().plans.remove(session_id);
        Ok(())
    }
}
