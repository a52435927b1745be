//! Many replicas on one PostgreSQL database: each test makes a database of
//! its own on the server `cargo xtask test` starts, and builds its replicas
//! the way the README's "Many replicas" section does.
//!
//! Without the server these tests fail, naming what is missing: they never
//! pass by skipping.

mod approvals;
mod contract;
mod events;
mod faults;
mod leases;
mod limits;
mod policy;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use chalie_core::session::{Model, PgStore, Sessions};
use chalie_core::{Channel, Dispatcher, dispatch::Policy, dispatch::Setting};

use crate::registry;

/// The variable `cargo xtask test` passes the server's URL in.
const URL_VARIABLE: &str = "CHALIE_TEST_POSTGRES_URL";

/// The test server's URL.
pub fn server_url() -> String {
    std::env::var(URL_VARIABLE).unwrap_or_else(|_| {
        panic!(
            "{URL_VARIABLE} is not set: the PostgreSQL store's tests need a server. \
             `cargo xtask test` starts one; by hand, `cargo xtask postgres start` prints the \
             variable to export"
        )
    })
}

/// An admin connection to the test server's `postgres` database.
pub async fn admin() -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&server_url(), tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|error| panic!("cannot reach the test PostgreSQL: {error}"));
    tokio::spawn(connection);
    client
}

/// A new, empty database on the test server; returns its URL.
pub async fn fresh_database() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "chalie_test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    admin()
        .await
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let url = server_url();
    let (server, _) = url.rsplit_once('/').unwrap();
    format!("{server}/{name}")
}

/// The policy of these tests: the reads run, `delete_task` and
/// `archive_task` are allowed (in the default `approval` mode a human still
/// approves them). Nothing else is granted.
pub fn policy() -> Policy {
    let mut policy = Policy::new();
    for name in ["lookup", "delete_task", "archive_task"] {
        policy.set(Channel::Chat, name, Setting::Allow).unwrap();
    }
    policy
}

/// The lease of these tests' replicas: short, so a dead replica's runs
/// move on quickly.
pub const LEASE: Duration = Duration::from_millis(600);

/// One replica: its own store connection, its own dispatcher counting the
/// rate limit in the database, its own sessions, on the database at `url`.
pub fn replica(url: &str, model: Arc<dyn Model>) -> Sessions {
    let store = Arc::new(PgStore::connect(url).unwrap());
    let dispatcher = Dispatcher::builder(registry())
        .policy(policy())
        .rate_counter(store.clone())
        .build();
    Sessions::builder(Arc::new(dispatcher), model)
        .store(store)
        .pinned(["lookup", "delete_task", "archive_task"])
        .lease(LEASE)
        .build()
}
