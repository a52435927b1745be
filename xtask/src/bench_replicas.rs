//! `cargo xtask bench-replicas`: the PostgreSQL store against the embedded
//! SQLite one, in one run: tool-call records written per second, and the
//! time from an approval (given on the same replica, or on another one) to
//! the approved write running. Starts a PostgreSQL server that flushes its
//! log the way SQLite's WAL with `synchronous = NORMAL` does, runs
//! chalie-core's `replicas` bench against it, and stops it.

use crate::postgres::{Durability, URL_VARIABLE, started};

pub(crate) fn run(args: &[String]) -> crate::Outcome {
    let postgres = started(Durability::LikeSqlite)?;
    let mut bench = vec![
        "bench",
        "--locked",
        "--package",
        "chalie-core",
        "--features",
        "postgres",
        "--bench",
        "replicas",
    ];
    // Anything else goes to criterion (e.g. a filter, `--quick`).
    if !args.is_empty() {
        bench.push("--");
        bench.extend(args.iter().map(String::as_str));
    }
    let outcome = crate::ci::cargo_with(&bench, &[(URL_VARIABLE, &postgres.url)]);
    drop(postgres);
    outcome
}
