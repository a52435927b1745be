//! `cargo xtask soak [--full]`: the fault and load tests (`chalie-core`'s
//! `faults` test binary) at a size CI affords, or at full size, then one
//! table of what they measured. Every figure the project promises is 0
//! fails the command when it is not.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::{Outcome, project_root};

/// The full sizes: hostile requests, streaming clients per wave, kills of
/// each kind, PostgreSQL restarts. The CI size is none of these: it is the tests' own defaults,
/// written once, in the tests.
const FULL: [(&str, &str); 4] = [
    ("CHALIE_SOAK_HTTP_REQUESTS", "1000000"),
    ("CHALIE_SOAK_CLIENTS", "1000"),
    ("CHALIE_SOAK_KILLS", "25"),
    ("CHALIE_SOAK_RESTARTS", "20"),
];

/// Runs the fault tests at the chosen size and prints the table.
pub(crate) fn run(args: &[String]) -> Outcome {
    let sizes: &[(&str, &str)] = match args {
        [] => &[],
        [full] if full == "--full" => &FULL,
        other => return Err(format!("usage: cargo xtask soak [--full], got {other:?}").into()),
    };
    let folder = project_root().join("target").join("soak");
    std::fs::create_dir_all(&folder)?;
    let report = folder.join("report.jsonl");
    let _ = std::fs::remove_file(&report);
    let report_path = report.display().to_string();
    // Replicas on one PostgreSQL: a throwaway server, stopped when this
    // returns.
    let postgres = crate::postgres::started(crate::postgres::Durability::Throwaway)?;
    let mut env = sizes.to_vec();
    // The restart test restarts that server through this same program
    // (`<program> postgres restart`), run from a copy: in `cargo xtask
    // test` the workspace tests rebuild, and so replace, the file this
    // process was started from (Linux still reads it as /proc/self/exe).
    let running = if std::path::Path::new("/proc/self/exe").exists() {
        std::path::PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe()?
    };
    let restarter = folder.join("postgres-restart");
    std::fs::copy(&running, &restarter).map_err(|error| {
        format!(
            "cannot copy this program to {}: {error}",
            restarter.display()
        )
    })?;
    let restart = restarter.display().to_string();
    env.extend([
        ("CHALIE_SOAK_REPORT", report_path.as_str()),
        (crate::postgres::URL_VARIABLE, postgres.url.as_str()),
        (crate::postgres::RESTART_VARIABLE, restart.as_str()),
    ]);
    let tests = crate::ci::cargo_with(
        &[
            "test",
            "-p",
            "chalie-core",
            "--all-features",
            "--locked",
            "--test",
            "faults",
            // One at a time: each test's memory figures are its own.
            "--",
            "--test-threads=1",
        ],
        &env,
    );
    // The table is printed even when a test failed: it says what broke.
    let figures = table(&std::fs::read_to_string(&report).unwrap_or_default());
    tests?;
    figures
}

/// Prints the table of the report's figures; fails when a figure promised
/// to be 0 is not, or a test reported nothing.
fn table(report: &str) -> Outcome {
    let mut by_test: BTreeMap<String, Value> = BTreeMap::new();
    for line in report.lines().filter(|line| !line.trim().is_empty()) {
        let figures: Value = serde_json::from_str(line)?;
        let name = figures["test"].as_str().unwrap_or("?").to_owned();
        by_test.insert(name, figures);
    }
    let number = |test: &str, key: &str| by_test.get(test).and_then(|f| f[key].as_u64());
    let sum = |pairs: &[(&str, &str)]| -> u64 {
        pairs
            .iter()
            .filter_map(|(test, key)| number(test, key))
            .sum()
    };

    let vanished = number("load", "vanished").unwrap_or(0);
    let faults = sum(&[
        ("hostile_http", "requests"),
        ("sqlite_damaged", "damages"),
        ("sqlite_full", "writes_refused"),
        ("sqlite_two_processes", "second_open_refused"),
        ("sqlite_kill", "kills"),
        ("pg_kill", "kills"),
        ("pg_restart", "restarts"),
        ("background_kill", "kills"),
    ]) + vanished;
    let runs_started = sum(&[
        ("load", "runs_started"),
        ("sqlite_kill", "runs"),
        ("pg_kill", "runs"),
        ("pg_restart", "runs"),
    ]);
    let runs_ended = sum(&[
        ("load", "runs_ended"),
        ("sqlite_kill", "runs_ended"),
        ("pg_kill", "runs_ended"),
        ("pg_restart", "runs_ended"),
    ]);
    let killed = |key: &str| sum(&[("sqlite_kill", key), ("pg_kill", key), ("pg_restart", key)]);
    let statuses = by_test
        .get("hostile_http")
        .and_then(|f| f["by_status"].as_object())
        .map(|statuses| {
            statuses
                .iter()
                .map(|(status, count)| format!("{status}: {count}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|| "none reported".into());
    let peak = by_test
        .values()
        .filter_map(|f| f["peak_rss_kib"].as_u64())
        .max()
        .unwrap_or(0);

    // A figure of a test that did not report is said so, never shown as 0.
    let measured = |test: &str, figure: u64| -> String {
        if by_test.contains_key(test) {
            figure.to_string()
        } else {
            "not measured".into()
        }
    };
    let load_rss = by_test
        .get("load")
        .map(|f| {
            let rss = &f["rss_kib"];
            format!(
                "{} / {} / {} MiB (before / after wave 1 / after wave 2)",
                rss["before"].as_u64().unwrap_or(0) / 1024,
                rss["after_first_wave"].as_u64().unwrap_or(0) / 1024,
                rss["after_second_wave"].as_u64().unwrap_or(0) / 1024
            )
        })
        .unwrap_or_else(|| "not measured".into());
    // (figure, value, promised 0)
    let rows: Vec<(&str, String, Option<u64>)> = vec![
        ("faults injected", faults.to_string(), None),
        (
            "runs ended / started",
            format!("{runs_ended} / {runs_started}"),
            Some(runs_started - runs_ended.min(runs_started)),
        ),
        (
            "writes duplicated",
            measured("sqlite_kill", killed("writes_duplicated")),
            Some(killed("writes_duplicated")),
        ),
        (
            "approved writes that never ran",
            measured("sqlite_kill", killed("writes_lost")),
            Some(killed("writes_lost")),
        ),
        (
            "answers clients saw that PostgreSQL did not keep, or runs ended silently",
            measured("pg_restart", sum(&[("pg_restart", "answers_lost")])),
            Some(sum(&[("pg_restart", "answers_lost")])),
        ),
        (
            "runs completed after PostgreSQL restarted / errors clients saw",
            format!(
                "{} / {}",
                measured(
                    "pg_restart",
                    sum(&[("pg_restart", "completed_after_restart")])
                ),
                sum(&[("pg_restart", "errors_seen")])
            ),
            None,
        ),
        (
            "background results lost to a kill",
            measured(
                "background_kill",
                sum(&[("background_kill", "background_results_lost")]),
            ),
            Some(sum(&[("background_kill", "background_results_lost")])),
        ),
        (
            "approvals lost",
            measured("sqlite_kill", killed("approvals_lost")),
            Some(killed("approvals_lost")),
        ),
        (
            "events misdelivered",
            sum(&[("load", "misdelivered")]).to_string(),
            Some(sum(&[("load", "misdelivered")])),
        ),
        (
            "streams cut before their run ended",
            sum(&[("load", "unfinished_streams")]).to_string(),
            Some(sum(&[("load", "unfinished_streams")])),
        ),
        ("hostile requests by status", statuses, None),
        (
            "requests the live replica failed while the other was killed",
            format!(
                "{} of {}",
                measured("pg_kill", sum(&[("pg_kill", "serving_failures")])),
                sum(&[("pg_kill", "served"), ("pg_kill", "serving_failures")])
            ),
            Some(sum(&[("pg_kill", "serving_failures")])),
        ),
        (
            "5xx / panics / non-JSON 4xx",
            format!(
                "{} / {} / {}",
                sum(&[("hostile_http", "server_errors")]),
                sum(&[("hostile_http", "panics")]),
                sum(&[("hostile_http", "bad_answers")])
            ),
            Some(sum(&[
                ("hostile_http", "server_errors"),
                ("hostile_http", "panics"),
                ("hostile_http", "bad_answers"),
            ])),
        ),
        (
            "store rows changed by hostile requests",
            sum(&[("hostile_http", "store_changes")]).to_string(),
            Some(sum(&[("hostile_http", "store_changes")])),
        ),
        (
            "damaged SQLite files opened",
            (sum(&[("sqlite_damaged", "damages")]) - sum(&[("sqlite_damaged", "refused")]))
                .to_string(),
            Some(sum(&[("sqlite_damaged", "damages")]) - sum(&[("sqlite_damaged", "refused")])),
        ),
        (
            "writes lost on a full SQLite file",
            sum(&[("sqlite_full", "lost")]).to_string(),
            Some(sum(&[("sqlite_full", "lost")])),
        ),
        (
            "streaming clients (events)",
            format!(
                "{} ({})",
                number("load", "clients").unwrap_or(0),
                number("load", "events").unwrap_or(0)
            ),
            None,
        ),
        ("memory of the streaming process", load_rss, None),
        (
            "peak memory of the test process (VmHWM)",
            format!("{:.1} MiB", peak as f64 / 1024.0),
            None,
        ),
    ];
    let width = rows.iter().map(|(name, ..)| name.len()).max().unwrap_or(0);
    println!("\n{:width$}  value", "figure");
    println!("{:-<width$}  {:-<30}", "", "");
    let mut broken = Vec::new();
    for (name, value, promised) in &rows {
        let mark = match promised {
            Some(0) | None => "",
            Some(_) => "  <- promised 0",
        };
        if matches!(promised, Some(figure) if *figure != 0) {
            broken.push(*name);
        }
        println!("{name:width$}  {value}{mark}");
    }
    let expected = [
        "sqlite_kill",
        "pg_kill",
        "pg_restart",
        "background_kill",
        "hostile_http",
        "load",
        "sqlite_damaged",
        "sqlite_full",
        "sqlite_two_processes",
    ];
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|test| !by_test.contains_key(*test))
        .collect();
    if !missing.is_empty() {
        return Err(
            format!("no figures from {missing:?}: those tests did not run to the end").into(),
        );
    }
    if !broken.is_empty() {
        return Err(format!("figures promised to be 0 are not: {broken:?}").into());
    }
    Ok(())
}
