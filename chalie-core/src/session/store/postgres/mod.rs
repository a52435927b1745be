//! The PostgreSQL store (feature `postgres`): one database shared by many
//! replicas of a program.
//!
//! [`SessionStore`](crate::session::SessionStore) is synchronous (an embedded store
//! answers in microseconds and the run calls it inline), and the client is
//! async. Rather than make every caller of the seam async, the store owns a
//! small tokio runtime on threads of its own: each method hands its query to
//! that runtime and waits for the answer. Waiting blocks the caller's thread
//! for one round trip, as a SQLite write does, and never nests one runtime
//! inside another (which panics), whatever runtime the caller runs on.

mod bridge;
mod limits;
mod listen;
mod queries;
mod records;
mod schema;
mod user_records;

use std::str::FromStr;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::session::store::StoreError;
use bridge::Bridge;

/// The most connections one store opens.
const POOL_SIZE: usize = 16;

/// A [`SessionStore`](crate::session::SessionStore) in PostgreSQL, for many replicas
/// of one program behind a load balancer: sessions, runs, messages, tool
/// calls, approvals, plans, the leases that say which replica drives a run
/// and the per-session rate-limit window all live in the database.
///
/// - An approval decided through one replica wakes the run waiting on it in
///   another at once, and a policy change made through one gates the next
///   call on every other (`LISTEN`/`NOTIFY`).
/// - A run belongs to the replica holding its lease; a replica that dies
///   stops renewing, and [`Sessions::resume`](crate::session::Sessions::resume) on
///   another takes the run over once the lease expires, exactly once.
/// - Give the same store to the dispatcher
///   ([`DispatcherBuilder::rate_counter`](crate::dispatch::DispatcherBuilder::rate_counter))
///   and the per-session rate limit counts every replica's calls.
/// - Migrations are versioned (table `chalie_schema`); a database migrated by
///   a newer chalie is refused at [`connect`](Self::connect) with its version.
/// - A connection that died idle is replaced before use; one lost during a
///   query makes that call fail with a [`StoreError`] naming the cause.
///
/// ```no_run
/// use std::sync::Arc;
/// use chalie_core::session::{PgStore, Reply, ScriptedModel, Sessions};
///
/// let store = Arc::new(PgStore::connect("postgres://chalie@db.internal/chalie").unwrap());
/// let dispatcher = chalie_core::Dispatcher::builder(chalie_core::registry().unwrap().clone())
///     .rate_counter(store.clone())
///     .build();
/// let model = Arc::new(ScriptedModel::new([Reply::text("Hello!")]));
/// let sessions = Sessions::builder(Arc::new(dispatcher), model).store(store).build();
/// ```
pub struct PgStore {
    pool: Pool,
    bridge: Bridge,
    sinks: listen::Sinks,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("pool", &self.pool.status())
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`
    /// or `host=… user=…`), brings its schema up to date and starts listening
    /// for approvals decided elsewhere. Fails with a clear error when the URL
    /// is malformed, the server cannot be reached, or the schema is newer
    /// than this code.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let config = tokio_postgres::Config::from_str(url)
            .map_err(|error| StoreError(format!("not a PostgreSQL URL: {error}")))?;
        let bridge = Bridge::start()?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            // A connection the server dropped while idle (a restart, a
            // failover, an idle timeout) is found out and replaced before a
            // query is sent on it.
            ManagerConfig {
                recycling_method: RecyclingMethod::Verified,
            },
        );
        let pool = bridge.run(async move {
            Pool::builder(manager)
                .max_size(POOL_SIZE)
                .runtime(deadpool_postgres::Runtime::Tokio1)
                .build()
                .map_err(|error| StoreError(format!("cannot build the PostgreSQL pool: {error}")))
        })?;
        let store = Self {
            pool,
            bridge,
            sinks: listen::Sinks::default(),
        };
        let pool = store.pool.clone();
        store.bridge.run(async move {
            // The URL is not repeated: it may hold a password.
            let client = pool
                .get()
                .await
                .map_err(|error| StoreError(format!("cannot connect to PostgreSQL: {error}")))?;
            schema::migrate(client).await
        })?;
        let sinks = store.sinks.clone();
        store
            .bridge
            .run(async move { listen::start(config, sinks).await })?;
        Ok(store)
    }

    /// The schema version this code writes (and the newest it reads).
    pub const SCHEMA_VERSION: i32 = schema::LATEST;
}

fn failed(error: impl std::fmt::Display) -> StoreError {
    StoreError(format!("PostgreSQL: {error}"))
}
