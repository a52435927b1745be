//! `cargo xtask postgres start|stop|restart|url`: a throwaway PostgreSQL
//! cluster for the `postgres` store's tests, in `target/postgres`, on a
//! free local port. `restart` stops it (`fast`: every connection cut, open
//! transactions rolled back) and starts it again on the same port, for the
//! fault test that restarts the database in the middle of runs. Not
//! `immediate`, a crash: the throwaway cluster runs with
//! `synchronous_commit=off`, so a crash loses commits it had acknowledged,
//! which no client of it could prevent.
//!
//! The server is the distribution's: when `initdb` and `pg_ctl` are missing it
//! is installed with `apt-get` (root only). PostgreSQL refuses to run as
//! root, so the cluster belongs to an unprivileged system user, created on
//! first use. `cargo xtask test` starts it before the workspace tests, hands
//! its URL to them in `CHALIE_TEST_POSTGRES_URL`, and stops it afterwards,
//! also when they fail.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Outcome, project_root};

/// The variable the tests read the server's URL from.
pub(crate) const URL_VARIABLE: &str = "CHALIE_TEST_POSTGRES_URL";
/// The variable the fault tests read the program that restarts the server
/// from: this one, run as `<program> postgres restart`.
pub(crate) const RESTART_VARIABLE: &str = "CHALIE_TEST_POSTGRES_RESTART";
/// The unprivileged user the cluster runs as when this runs as root.
const CLUSTER_USER: &str = "chalie-pg";
/// The database role the tests connect as (a superuser of the cluster, so
/// each test can create a database of its own).
const ROLE: &str = "chalie";

pub(crate) fn run(args: &[String]) -> Outcome {
    match args.first().map(String::as_str) {
        Some("start") => start(Durability::Throwaway).map(|url| println!("{URL_VARIABLE}={url}")),
        Some("stop") => stop(),
        Some("restart") => restart(),
        Some("url") => {
            let url = std::fs::read_to_string(dir().join("url"))
                .map_err(|_| "no cluster is running; `cargo xtask postgres start` first")?;
            println!("{}", url.trim());
            Ok(())
        }
        _ => Err("usage: cargo xtask postgres start|stop|restart|url".into()),
    }
}

/// Stops the cluster when dropped, so a failing test run stops it too.
pub(crate) struct Running {
    /// The connection URL of the cluster's `postgres` database.
    pub(crate) url: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        println!("\n$ cargo xtask postgres stop");
        if let Err(error) = stop() {
            eprintln!("warning: could not stop the test PostgreSQL: {error}");
        }
    }
}

/// How much a commit waits for the disk.
#[derive(Clone, Copy)]
pub(crate) enum Durability {
    /// Nothing is flushed: the tests' cluster, thrown away after the run.
    Throwaway,
    /// What the embedded SQLite store promises (WAL, `synchronous = NORMAL`):
    /// a commit returns before its log is flushed, the log is flushed within
    /// moments, and a crash loses at most the last commits, never
    /// consistency. For benchmarks that compare the two stores.
    LikeSqlite,
}

impl Durability {
    fn server_options(self) -> &'static str {
        match self {
            Durability::Throwaway => {
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            }
            Durability::LikeSqlite => {
                "-c fsync=on -c synchronous_commit=off -c full_page_writes=on"
            }
        }
    }
}

/// Starts the cluster for the length of the returned guard.
pub(crate) fn started(durability: Durability) -> Result<Running, Box<dyn std::error::Error>> {
    println!("\n$ cargo xtask postgres start");
    Ok(Running {
        url: start(durability)?,
    })
}

fn dir() -> PathBuf {
    project_root().join("target").join("postgres")
}

/// A fresh cluster on a free port; returns its URL. A cluster left running
/// by an interrupted run is stopped and replaced.
fn start(durability: Durability) -> Result<String, Box<dyn std::error::Error>> {
    let bin = server_binaries()?;
    let dir = dir();
    if dir.join("data").join("postmaster.pid").exists() {
        stop()?;
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let owner = cluster_owner()?;
    if let Some((uid, gid)) = owner {
        chown(&dir, uid, gid)?;
    }
    let data = dir.join("data");
    let log = dir.join("server.log");
    crate::system::step(
        as_owner(Command::new(bin.join("initdb")), owner)
            .arg("--pgdata")
            .arg(&data)
            .args(["--username", ROLE, "--auth", "trust", "--encoding", "UTF8"])
            .args(["--no-instructions", "--no-sync"]),
        "initdb",
    )?;
    let port = free_port()?;
    // TCP on loopback only, no Unix socket (its default directory belongs to
    // the distribution's own cluster).
    let options = format!(
        "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= {} \
         -c max_connections=300",
        durability.server_options()
    );
    crate::system::step(
        as_owner(Command::new(bin.join("pg_ctl")), owner)
            .arg("--pgdata")
            .arg(&data)
            .arg("--log")
            .arg(&log)
            .args(["--options", &options, "--wait", "--timeout", "60", "start"]),
        "pg_ctl start",
    )
    .map_err(|error| format!("{error}; the server's log is {}", log.display()))?;
    let url = format!("postgres://{ROLE}@127.0.0.1:{port}/postgres");
    std::fs::write(dir.join("url"), &url)?;
    Ok(url)
}

/// Stops the running cluster and starts it again with the
/// options it was started with (pg_ctl keeps them), waiting until it takes
/// connections.
fn restart() -> Outcome {
    let data = dir().join("data");
    if !data.join("postmaster.pid").exists() {
        return Err("no cluster is running; `cargo xtask postgres start` first".into());
    }
    let bin = server_binaries()?;
    crate::system::step(
        as_owner(Command::new(bin.join("pg_ctl")), cluster_owner()?)
            .arg("--pgdata")
            .arg(&data)
            .arg("--log")
            .arg(dir().join("server.log"))
            .args(["--mode", "fast", "--wait", "--timeout", "60", "restart"]),
        "pg_ctl restart",
    )
}

/// Stops the cluster and removes it; nothing to do when none is running.
fn stop() -> Outcome {
    let dir = dir();
    let data = dir.join("data");
    if data.join("postmaster.pid").exists() {
        let bin = server_binaries()?;
        crate::system::step(
            as_owner(Command::new(bin.join("pg_ctl")), cluster_owner()?)
                .arg("--pgdata")
                .arg(&data)
                .args(["--mode", "fast", "--wait", "stop"]),
            "pg_ctl stop",
        )?;
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(())
}

/// The directory holding `initdb` and `pg_ctl`, installing the
/// distribution's `postgresql` package when there is none.
fn server_binaries() -> Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(bin) = find_binaries() {
        return Ok(bin);
    }
    crate::system::apt_install(
        &["postgresql"],
        "PostgreSQL's initdb and pg_ctl were not found",
    )?;
    find_binaries().ok_or_else(|| {
        "the `postgresql` package installed, but initdb and pg_ctl are still not found".into()
    })
}

/// `pg_config --bindir`, the distribution's versioned directories (newest
/// first), then `PATH`.
fn find_binaries() -> Option<PathBuf> {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file();
    if let Ok(output) = Command::new("pg_config").arg("--bindir").output()
        && output.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        if has_both(&dir) {
            return Some(dir);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort();
    if let Some((_, dir)) = versions.into_iter().rev().find(|(_, dir)| has_both(dir)) {
        return Some(dir);
    }
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|dir| has_both(dir))
}

/// The uid and gid the cluster runs as: `None` when this does not run as
/// root (the cluster is then the caller's); as root, the unprivileged
/// [`CLUSTER_USER`], created if missing.
fn cluster_owner() -> Result<Option<(u32, u32)>, Box<dyn std::error::Error>> {
    if !crate::system::is_root() {
        return Ok(None);
    }
    if crate::system::id(&["-u", CLUSTER_USER]).is_err() {
        crate::system::step(
            Command::new("useradd").args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                CLUSTER_USER,
            ]),
            "`useradd`",
        )?;
    }
    Ok(Some((
        crate::system::id(&["-u", CLUSTER_USER])?,
        crate::system::id(&["-g", CLUSTER_USER])?,
    )))
}

fn chown(path: &Path, uid: u32, gid: u32) -> Outcome {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))?;
    // The cluster's user must reach its directory through the project's.
    let mut parent = path.parent();
    while let Some(dir) = parent {
        let mode = std::fs::metadata(dir)?.permissions();
        use std::os::unix::fs::PermissionsExt;
        if mode.mode() & 0o001 == 0 {
            return Err(format!(
                "`{}` is not searchable by other users, so the unprivileged `{CLUSTER_USER}` \
                 cannot reach its cluster under it; `chmod o+x` it or clone elsewhere",
                dir.display()
            )
            .into());
        }
        parent = dir.parent();
    }
    Ok(())
}

fn as_owner(mut command: Command, owner: Option<(u32, u32)>) -> Command {
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid);
        // The server's children inherit no root-only environment.
        command.env("HOME", "/tmp");
    }
    command.current_dir("/");
    command
}

/// A port nobody listens on now (the server binds it a moment later).
fn free_port() -> Result<u16, Box<dyn std::error::Error>> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}
