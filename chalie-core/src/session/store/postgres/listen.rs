//! `LISTEN chalie_approvals` and `LISTEN chalie_policy`: one connection per
//! store hears every approval decided and every policy change kept through
//! any replica, and tells the store's sinks.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

use super::failed;
use crate::session::store::{ApprovalState, Decision, DecisionSink, PolicySink, StoreError};

/// The channel decisions are announced on.
pub(super) const CHANNEL: &str = "chalie_approvals";

/// The channel a kept policy change is announced on (without a payload:
/// the sinks read the kept changes again).
pub(super) const POLICY_CHANNEL: &str = "chalie_policy";

/// How long to wait before listening again after the connection dropped.
const RECONNECT: Duration = Duration::from_millis(200);

/// What a notification carries.
#[derive(Serialize, Deserialize)]
pub(super) struct Payload {
    pub(super) run_id: String,
    pub(super) call_id: String,
    pub(super) state: String,
}

/// Who is told what the connection hears.
#[derive(Clone, Default)]
pub(super) struct Sinks {
    pub(super) decisions: Arc<Mutex<Vec<DecisionSink>>>,
    pub(super) policy: Arc<Mutex<Vec<PolicySink>>>,
}

fn tell(sinks: &Sinks, decision: Decision) {
    let sinks = sinks
        .decisions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    for sink in sinks {
        sink(decision.clone());
    }
}

/// Tells the policy sinks, on a blocking thread: they read the store,
/// which waits on this runtime, so they must not hold one of its workers.
fn tell_policy(sinks: &Sinks) {
    let sinks = sinks
        .policy
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if sinks.is_empty() {
        return;
    }
    tokio::task::spawn_blocking(move || {
        for sink in sinks {
            sink();
        }
    });
}

/// Listens, returning once the first `LISTEN` is in place (a decision taken
/// after [`PgStore::connect`](super::PgStore::connect) returns is heard).
/// A dropped connection is reopened in the background, and the decisions
/// taken since the lost one started listening are told again, and the
/// policy sinks told to read the kept changes again: a notification sent
/// while nobody listened is not delivered later.
pub(super) async fn start(config: Config, sinks: Sinks) -> Result<(), StoreError> {
    let (client, heard) = listen(&config).await?;
    let mut since = listening_since(&client).await?;
    tokio::spawn(async move {
        let mut session = Some((client, heard));
        loop {
            if let Some((client, heard)) = session.take() {
                relay(client, heard, &sinks).await;
            }
            tokio::time::sleep(RECONNECT).await;
            let Ok((client, heard)) = listen(&config).await else {
                continue;
            };
            let Ok(now) = listening_since(&client).await else {
                continue;
            };
            if replay(&client, since, &sinks).await.is_ok() {
                since = now;
            }
            tell_policy(&sinks);
            session = Some((client, heard));
        }
    });
    Ok(())
}

/// What the connection heard: the channel and the payload.
type Heard = futures::channel::mpsc::UnboundedReceiver<(String, String)>;

/// A connection listening on [`CHANNEL`] and [`POLICY_CHANNEL`], and what
/// it hears.
async fn listen(config: &Config) -> Result<(Client, Heard), StoreError> {
    let (client, mut connection) = config.connect(NoTls).await.map_err(failed)?;
    let (notes, heard) = futures::channel::mpsc::unbounded();
    // The connection yields notifications only while it is polled; the
    // stream ends when it drops.
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(note) = message {
                let _ =
                    notes.unbounded_send((note.channel().to_owned(), note.payload().to_owned()));
            }
        }
    });
    client
        .batch_execute(&format!("LISTEN {CHANNEL}; LISTEN {POLICY_CHANNEL}"))
        .await
        .map_err(failed)?;
    Ok((client, heard))
}

/// The database's time now, on the listening connection.
async fn listening_since(client: &Client) -> Result<SystemTime, StoreError> {
    Ok(client
        .query_one("SELECT now()", &[])
        .await
        .map_err(failed)?
        .get(0))
}

/// Tells the decisions taken since `since` (some may be told twice, which
/// wakes nobody twice: a woken run no longer waits).
async fn replay(client: &Client, since: SystemTime, sinks: &Sinks) -> Result<(), StoreError> {
    let rows = client
        .query(
            "SELECT run_id, call_id, state FROM approvals WHERE decided_at >= $1",
            &[&since],
        )
        .await
        .map_err(failed)?;
    for row in rows {
        let state: String = row.get(2);
        if let Some(state) = ApprovalState::parse(&state) {
            tell(
                sinks,
                Decision {
                    run_id: row.get(0),
                    call_id: row.get(1),
                    state,
                },
            );
        }
    }
    Ok(())
}

/// Tells every decision and policy change heard until the connection drops.
async fn relay(client: Client, mut heard: Heard, sinks: &Sinks) {
    // Kept alive while listening: dropping the client closes it.
    let _client = client;
    while let Some((channel, payload)) = heard.next().await {
        if channel == POLICY_CHANNEL {
            tell_policy(sinks);
            continue;
        }
        let Ok(payload) = serde_json::from_str::<Payload>(&payload) else {
            continue;
        };
        let Some(state) = ApprovalState::parse(&payload.state) else {
            continue;
        };
        tell(
            sinks,
            Decision {
                run_id: payload.run_id,
                call_id: payload.call_id,
                state,
            },
        );
    }
}
