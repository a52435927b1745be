//! [`SessionStore`] for [`PgStore`]: what a session keeps, as rows.

use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;
use tokio_postgres::Row;

use super::PgStore;
use super::listen::{CHANNEL, POLICY_CHANNEL, Payload};
use super::queries::{append_message, params, pg_error};
use crate::session::event::Event;
use crate::session::mode::Mode;
use crate::session::model::Message;
use crate::session::store::{
    ApprovalRecord, ApprovalState, DecisionSink, PlanStep, PolicyRecord, PolicySink, RunRecord,
    RunStatus, SessionRecord, SessionStore, StoreError, StoredMessage, ToolCallRecord,
    ToolCallStatus,
};
use crate::turn::Principal;
use crate::{Channel, dispatch::Setting};

fn to_json(value: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|error| StoreError(error.to_string()))
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|error| StoreError(error.to_string()))
}

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError(format!("the database holds an unknown {what} `{value}`"))
}

fn column<'r, T: tokio_postgres::types::FromSql<'r>>(
    row: &'r Row,
    index: usize,
) -> Result<T, StoreError> {
    row.try_get(index).map_err(pg_error)
}

fn session_from(row: &Row) -> Result<SessionRecord, StoreError> {
    let mode: String = column(row, 1)?;
    Ok(SessionRecord {
        id: column(row, 0)?,
        mode: mode
            .parse::<Mode>()
            .map_err(|error| StoreError(error.to_string()))?,
        owner: column::<Option<String>>(row, 2)?.map(Principal::new),
    })
}

fn run_from(row: &Row) -> Result<RunRecord, StoreError> {
    let status: String = column(row, 2)?;
    Ok(RunRecord {
        id: column(row, 0)?,
        session_id: column(row, 1)?,
        status: RunStatus::parse(&status).ok_or_else(|| corrupt("run status", &status))?,
    })
}

/// Reads `run_id, call_id, message_seq, tool, input, status, envelope,
/// execution_ms, card`, in that order.
fn tool_call_from(row: &Row) -> Result<ToolCallRecord, StoreError> {
    let status: String = column(row, 5)?;
    Ok(ToolCallRecord {
        run_id: column(row, 0)?,
        call_id: column(row, 1)?,
        message_seq: column::<i64>(row, 2)? as u64,
        tool: column(row, 3)?,
        input: from_json(&column::<String>(row, 4)?)?,
        status: ToolCallStatus::parse(&status)
            .ok_or_else(|| corrupt("tool call status", &status))?,
        envelope: column(row, 6)?,
        execution_ms: column::<i64>(row, 7)? as u64,
        card: column::<Option<String>>(row, 8)?
            .as_deref()
            .map(from_json)
            .transpose()?,
    })
}

/// Reads `run_id, call_id, session_id, tool, input, state`, in that order.
fn approval_from(row: &Row) -> Result<ApprovalRecord, StoreError> {
    let state: String = column(row, 5)?;
    Ok(ApprovalRecord {
        run_id: column(row, 0)?,
        call_id: column(row, 1)?,
        session_id: column(row, 2)?,
        tool: column(row, 3)?,
        input: from_json::<Value>(&column::<String>(row, 4)?)?,
        state: ApprovalState::parse(&state).ok_or_else(|| corrupt("approval state", &state))?,
    })
}

const PUT_TOOL_CALL: &str = "INSERT INTO tool_calls
       (run_id, call_id, message_seq, tool, input, status, envelope, execution_ms, card)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (run_id, call_id) DO UPDATE SET
       status = excluded.status, envelope = excluded.envelope,
       execution_ms = excluded.execution_ms, card = excluded.card";

fn tool_call_params(record: &ToolCallRecord) -> Result<super::queries::Params, StoreError> {
    Ok(params![
        record.run_id.clone(),
        record.call_id.clone(),
        record.message_seq as i64,
        record.tool.clone(),
        to_json(&record.input)?,
        record.status.as_str(),
        record.envelope.clone(),
        record.execution_ms as i64,
        record.card.as_ref().map(to_json).transpose()?,
    ])
}

fn seconds(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

impl SessionStore for PgStore {
    fn put_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO sessions (id, mode, owner) VALUES ($1, $2, $3)
             ON CONFLICT (id) DO UPDATE SET mode = excluded.mode, owner = excluded.owner",
            params![
                session.id.clone(),
                session.mode.as_str(),
                session.owner.as_ref().map(|owner| owner.id().to_owned())
            ],
        )?;
        Ok(())
    }

    fn create_session(&self, session: &SessionRecord) -> Result<SessionRecord, StoreError> {
        self.execute(
            "INSERT INTO sessions (id, mode, owner) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
            params![
                session.id.clone(),
                session.mode.as_str(),
                session.owner.as_ref().map(|owner| owner.id().to_owned())
            ],
        )?;
        self.session(&session.id)?.ok_or_else(|| {
            StoreError(format!(
                "session `{}` vanished as it was created",
                session.id
            ))
        })
    }

    fn session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.rows(
            "SELECT id, mode, owner FROM sessions WHERE id = $1",
            params![id.to_owned()],
        )?
        .first()
        .map(session_from)
        .transpose()
    }

    fn sessions_of(&self, owner: &Principal) -> Result<Vec<SessionRecord>, StoreError> {
        self.rows(
            "SELECT id, mode, owner FROM sessions WHERE owner = $1 ORDER BY ord",
            params![owner.id().to_owned()],
        )?
        .iter()
        .map(session_from)
        .collect()
    }

    /// Keeps and announces in one transaction: every replica hears of the
    /// change once it is committed, and reads it then.
    fn put_policy(&self, record: &PolicyRecord) -> Result<(), StoreError> {
        let record = record.clone();
        self.transaction(move |transaction| {
            async move {
                transaction
                    .execute(
                        "INSERT INTO policy_settings (channel, permission, setting) VALUES ($1, $2, $3)
                         ON CONFLICT (channel, permission) DO UPDATE SET setting = excluded.setting",
                        &[
                            &record.channel.as_str(),
                            &record.permission,
                            &record.setting.as_str(),
                        ],
                    )
                    .await
                    .map_err(pg_error)?;
                transaction
                    .execute("SELECT pg_notify($1, '')", &[&POLICY_CHANNEL])
                    .await
                    .map_err(pg_error)?;
                Ok(())
            }
            .boxed()
        })
    }

    fn policy(&self) -> Result<Vec<PolicyRecord>, StoreError> {
        self.rows(
            "SELECT channel, permission, setting FROM policy_settings ORDER BY ord",
            params![],
        )?
        .iter()
        .map(|row| {
            let channel: String = column(row, 0)?;
            let setting: String = column(row, 2)?;
            Ok(PolicyRecord {
                channel: Channel::parse(&channel).ok_or_else(|| corrupt("channel", &channel))?,
                permission: column(row, 1)?,
                setting: Setting::parse(&setting).ok_or_else(|| corrupt("setting", &setting))?,
            })
        })
        .collect()
    }

    fn put_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        // A settled run keeps no lease.
        self.execute(
            "INSERT INTO runs (id, session_id, status) VALUES ($1, $2, $3)
             ON CONFLICT (id) DO UPDATE SET status = excluded.status,
               lease_owner = CASE WHEN excluded.status = 'running' THEN runs.lease_owner END,
               lease_until = CASE WHEN excluded.status = 'running' THEN runs.lease_until END",
            params![run.id.clone(), run.session_id.clone(), run.status.as_str()],
        )?;
        Ok(())
    }

    fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        self.rows(
            "SELECT id, session_id, status FROM runs WHERE id = $1",
            params![id.to_owned()],
        )?
        .first()
        .map(run_from)
        .transpose()
    }

    fn unfinished_runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        self.rows(
            "SELECT id, session_id, status FROM runs WHERE status = 'running' ORDER BY ord",
            params![],
        )?
        .iter()
        .map(run_from)
        .collect()
    }

    fn claim_run(&self, run_id: &str, replica: &str, lease: Duration) -> Result<bool, StoreError> {
        // The database's clock decides expiry, so the replicas' clocks
        // need not agree.
        let claimed = self.execute(
            "UPDATE runs SET lease_owner = $2, lease_until = now() + make_interval(secs => $3)
             WHERE id = $1 AND status = 'running'
               AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until < now())",
            params![run_id.to_owned(), replica.to_owned(), seconds(lease)],
        )?;
        Ok(claimed == 1)
    }

    fn renew_leases(&self, replica: &str, lease: Duration) -> Result<(), StoreError> {
        self.execute(
            "UPDATE runs SET lease_until = now() + make_interval(secs => $2)
             WHERE lease_owner = $1 AND status = 'running'",
            params![replica.to_owned(), seconds(lease)],
        )?;
        Ok(())
    }

    fn watch_decisions(&self, sink: DecisionSink) {
        self.sinks
            .decisions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(sink);
    }

    fn watch_policy(&self, sink: PolicySink) {
        self.sinks
            .policy
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(sink);
    }

    fn append_message(
        &self,
        session_id: &str,
        run_id: &str,
        message: &Message,
    ) -> Result<u64, StoreError> {
        let (session_id, run_id, body) =
            (session_id.to_owned(), run_id.to_owned(), to_json(message)?);
        self.transaction(move |transaction| {
            async move { append_message(transaction, &session_id, &run_id, &body).await }.boxed()
        })
    }

    fn messages(&self, session_id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        self.rows(
            "SELECT seq, run_id, body FROM messages WHERE session_id = $1 ORDER BY seq",
            params![session_id.to_owned()],
        )?
        .iter()
        .map(|row| {
            Ok(StoredMessage {
                seq: column::<i64>(row, 0)? as u64,
                run_id: column(row, 1)?,
                message: from_json(&column::<String>(row, 2)?)?,
            })
        })
        .collect()
    }

    fn put_tool_call(&self, record: &ToolCallRecord) -> Result<(), StoreError> {
        self.execute(PUT_TOOL_CALL, tool_call_params(record)?)?;
        Ok(())
    }

    fn set_tool_call_status(
        &self,
        run_id: &str,
        call_id: &str,
        status: ToolCallStatus,
    ) -> Result<bool, StoreError> {
        let changed = self.execute(
            "UPDATE tool_calls SET status = $3 WHERE run_id = $1 AND call_id = $2",
            params![
                run_id.to_owned(),
                call_id.to_owned(),
                status.as_str().to_owned()
            ],
        )?;
        Ok(changed > 0)
    }

    fn record_result(
        &self,
        record: &ToolCallRecord,
        session_id: &str,
        message: &Message,
    ) -> Result<u64, StoreError> {
        let params = tool_call_params(record)?;
        let (session_id, run_id, body) = (
            session_id.to_owned(),
            record.run_id.clone(),
            to_json(message)?,
        );
        self.transaction(move |transaction| {
            async move {
                let borrowed: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
                    .iter()
                    .map(|param| param.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
                    .collect();
                transaction
                    .execute(PUT_TOOL_CALL, &borrowed)
                    .await
                    .map_err(pg_error)?;
                append_message(transaction, &session_id, &run_id, &body).await
            }
            .boxed()
        })
    }

    fn tool_calls(&self, run_id: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.rows(
            "SELECT run_id, call_id, message_seq, tool, input, status, envelope, execution_ms, card
             FROM tool_calls WHERE run_id = $1 ORDER BY ord",
            params![run_id.to_owned()],
        )?
        .iter()
        .map(tool_call_from)
        .collect()
    }

    /// One query, not one per run: a run asks this before every model request.
    fn background_calls(&self, session_id: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.rows(
            "SELECT run_id, call_id, message_seq, tool, input, status, envelope, execution_ms, card
             FROM tool_calls
             WHERE status IN ('background', 'finished') -- is_undelivered()
               AND run_id IN (SELECT id FROM runs WHERE session_id = $1)
             ORDER BY ord",
            params![session_id.to_owned()],
        )?
        .iter()
        .map(tool_call_from)
        .collect()
    }

    fn put_event(&self, run_id: &str, event: &Event) -> Result<(), StoreError> {
        // Not retried on a lost connection (an append may have been applied).
        let (run_id, body) = (run_id.to_owned(), to_json(event)?);
        self.transaction(move |transaction| {
            async move {
                transaction
                    .execute(
                        "INSERT INTO run_events (run_id, body) VALUES ($1, $2)",
                        &[&run_id, &body],
                    )
                    .await
                    .map_err(pg_error)?;
                Ok(())
            }
            .boxed()
        })
    }

    fn run_events(&self, run_id: &str, skip: u64) -> Result<Option<Vec<Event>>, StoreError> {
        self.rows(
            "SELECT body FROM run_events WHERE run_id = $1 ORDER BY ord OFFSET $2",
            params![run_id.to_owned(), skip as i64],
        )?
        .iter()
        .map(|row| from_json(&column::<String>(row, 0)?))
        .collect::<Result<Vec<Event>, StoreError>>()
        .map(Some)
    }

    fn put_approval(&self, approval: &ApprovalRecord) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO approvals (run_id, call_id, session_id, tool, input, state)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (run_id, call_id) DO UPDATE SET session_id = excluded.session_id,
               tool = excluded.tool, input = excluded.input, state = excluded.state",
            params![
                approval.run_id.clone(),
                approval.call_id.clone(),
                approval.session_id.clone(),
                approval.tool.clone(),
                to_json(&approval.input)?,
                approval.state.as_str(),
            ],
        )?;
        Ok(())
    }

    fn approval(&self, run_id: &str, call_id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        self.rows(
            "SELECT run_id, call_id, session_id, tool, input, state FROM approvals
             WHERE run_id = $1 AND call_id = $2",
            params![run_id.to_owned(), call_id.to_owned()],
        )?
        .first()
        .map(approval_from)
        .transpose()
    }

    /// Decides and announces in one transaction: every replica hears of the
    /// decision once it is committed, and only then.
    fn decide_approval(
        &self,
        run_id: &str,
        call_id: &str,
        state: ApprovalState,
    ) -> Result<bool, StoreError> {
        let payload = to_json(&Payload {
            run_id: run_id.to_owned(),
            call_id: call_id.to_owned(),
            state: state.as_str().to_owned(),
        })?;
        let (run_id, call_id) = (run_id.to_owned(), call_id.to_owned());
        self.transaction(move |transaction| {
            async move {
                let changed = transaction
                    .execute(
                        "UPDATE approvals SET state = $3, decided_at = now()
                         WHERE run_id = $1 AND call_id = $2 AND state = 'pending'",
                        &[&run_id, &call_id, &state.as_str()],
                    )
                    .await
                    .map_err(pg_error)?;
                if changed == 1 {
                    transaction
                        .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
                        .await
                        .map_err(pg_error)?;
                }
                Ok(changed == 1)
            }
            .boxed()
        })
    }

    fn pending_approvals(&self, session_id: &str) -> Result<Vec<ApprovalRecord>, StoreError> {
        self.rows(
            "SELECT run_id, call_id, session_id, tool, input, state FROM approvals
             WHERE session_id = $1 AND state = 'pending' ORDER BY ord",
            params![session_id.to_owned()],
        )?
        .iter()
        .map(approval_from)
        .collect()
    }

    fn add_plan_step(&self, session_id: &str, step: &PlanStep) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO plan_steps (session_id, idx, call_id, tool, input)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (session_id, idx) DO UPDATE SET call_id = excluded.call_id,
               tool = excluded.tool, input = excluded.input",
            params![
                session_id.to_owned(),
                step.index as i64,
                step.call_id.clone(),
                step.tool.clone(),
                to_json(&step.input)?
            ],
        )?;
        Ok(())
    }

    fn plan(&self, session_id: &str) -> Result<Vec<PlanStep>, StoreError> {
        self.rows(
            "SELECT idx, call_id, tool, input FROM plan_steps WHERE session_id = $1 ORDER BY idx",
            params![session_id.to_owned()],
        )?
        .iter()
        .map(|row| {
            Ok(PlanStep {
                index: column::<i64>(row, 0)? as usize,
                call_id: column(row, 1)?,
                tool: column(row, 2)?,
                input: from_json(&column::<String>(row, 3)?)?,
            })
        })
        .collect()
    }

    fn clear_plan(&self, session_id: &str) -> Result<(), StoreError> {
        self.execute(
            "DELETE FROM plan_steps WHERE session_id = $1",
            params![session_id.to_owned()],
        )?;
        Ok(())
    }
}
