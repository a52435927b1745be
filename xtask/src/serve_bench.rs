//! `cargo xtask serve-bench [--runs N] [--sessions N]`: what the assistant
//! service adds to a run. Builds the release binary, starts `assistant
//! serve` with a scripted model (which answers at once, so every
//! millisecond measured is the service's: HTTP, authentication, the store,
//! the run loop, SSE), then, run after run, times from sending a message
//! to the first SSE event of its stream and to its settlement; reports
//! p50/p99 and the process's resident memory (VmRSS) once `--sessions`
//! sessions have each run a message.
//!
//! The client is plain HTTP/1.1 over a socket, one connection per request,
//! as a browser's first request would be.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Outcome;

const TOKEN: &str = "bench-0123456789abcdef0123456789abcdef";

pub(crate) fn run(args: &[String]) -> Outcome {
    let mut runs = 200usize;
    let mut sessions = 100usize;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut number = || -> Result<usize, String> {
            args.next()
                .and_then(|value| value.parse().ok())
                .ok_or(format!("`{arg}` needs a number"))
        };
        match arg.as_str() {
            "--runs" => runs = number()?,
            "--sessions" => sessions = number()?,
            other => {
                return Err(format!(
                    "unknown option `{other}`; usage: cargo xtask serve-bench [--runs N] [--sessions N]"
                )
                .into());
            }
        }
    }
    // The service opens the discovery index, as in production.
    crate::ci::prepare()?;
    let binary = crate::ci::built_executable(
        &["build", "--release", "--locked", "--package", "assistant"],
        &[],
        "assistant",
    )?;

    let work = std::env::temp_dir().join(format!("chalie-serve-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let outcome = measure(&binary, &work, runs, sessions);
    let _ = std::fs::remove_dir_all(&work);
    outcome
}

/// The service, killed when dropped.
struct Service {
    child: Child,
    address: String,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(
    binary: &Path,
    work: &Path,
    replies: usize,
) -> Result<Service, Box<dyn std::error::Error>> {
    std::fs::write(
        work.join("users.toml"),
        format!("[[users]]\nname = \"bench\"\ntoken = \"{TOKEN}\"\n"),
    )?;
    let script: Vec<String> = (0..replies)
        .map(|_| r#"{"text": "Done."}"#.to_owned())
        .collect();
    std::fs::write(work.join("script.json"), format!("[{}]", script.join(",")))?;
    let mut child = Command::new(binary)
        .args(["serve", "--listen", "127.0.0.1:0", "--users"])
        .arg(work.join("users.toml"))
        .arg("--script")
        .arg(work.join("script.json"))
        .arg("--db")
        .arg(work.join("bench.db"))
        .env("RUST_LOG", "warn")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte)? == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let line = String::from_utf8(line)?;
    let address = line
        .strip_prefix("listening on http://")
        .and_then(|rest| rest.strip_suffix("/ai"))
        .ok_or(format!("the service did not start: {line:?}"))?
        .to_owned();
    Ok(Service { child, address })
}

/// Sends one request; returns the open socket, the head already written.
fn request(address: &str, method: &str, path: &str, body: &str) -> std::io::Result<TcpStream> {
    let mut socket = TcpStream::connect(address)?;
    socket.set_nodelay(true)?;
    write!(
        socket,
        "{method} /ai{path} HTTP/1.1\r\nhost: {address}\r\nauthorization: Bearer {TOKEN}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )?;
    Ok(socket)
}

/// The whole answer of a request that ends.
fn call(address: &str, method: &str, path: &str, body: &str) -> Result<String, String> {
    let mut socket = request(address, method, path, body).map_err(|error| error.to_string())?;
    let mut answer = String::new();
    socket
        .read_to_string(&mut answer)
        .map_err(|error| error.to_string())?;
    Ok(answer)
}

/// The string value of `"key":"..."` in `text`.
fn field<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let start = text.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let end = text[start..].find('"')?;
    Some(&text[start..start + end])
}

/// One run: (time to the first SSE event, time to the settlement).
fn one_run(address: &str, session: &str) -> Result<(Duration, Duration), String> {
    let began = Instant::now();
    let sent = call(
        address,
        "POST",
        &format!("/sessions/{session}/messages"),
        r#"{"content":"hello"}"#,
    )?;
    let message = field(&sent, "messageId").ok_or(format!("no messageId in {sent}"))?;
    let mut stream = request(
        address,
        "GET",
        &format!("/sessions/{session}/messages/{message}/stream"),
        "",
    )
    .map_err(|error| error.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|error| error.to_string())?;
    let mut seen = String::new();
    let mut first = None;
    let mut buffer = [0u8; 8192];
    loop {
        let read = stream
            .read(&mut buffer)
            .map_err(|error| error.to_string())?;
        if read == 0 {
            return Err(format!("the stream ended before the settlement: {seen}"));
        }
        seen.push_str(&String::from_utf8_lossy(&buffer[..read]));
        if first.is_none() && seen.contains("event: ") {
            first = Some(began.elapsed());
        }
        if seen.contains("event: run.settlement.completed") {
            let settled = began.elapsed();
            return Ok((first.unwrap_or(settled), settled));
        }
    }
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
}

fn open_session(address: &str) -> Result<String, String> {
    let opened = call(address, "POST", "/sessions", "{}")?;
    field(&opened, "id")
        .map(str::to_owned)
        .ok_or(format!("no session id in {opened}"))
}

fn measure(binary: &Path, work: &Path, runs: usize, sessions: usize) -> Outcome {
    let warmup = 10;
    let service = start(binary, work, warmup + runs + sessions)?;
    let address = service.address.clone();
    let idle = resident_kib(service.child.id());
    let session = open_session(&address)?;
    for _ in 0..warmup {
        one_run(&address, &session)?;
    }
    let mut first = Vec::with_capacity(runs);
    let mut settled = Vec::with_capacity(runs);
    for _ in 0..runs {
        // A session per run, as a user's first message.
        let session = open_session(&address)?;
        let (to_first, to_settled) = one_run(&address, &session)?;
        first.push(to_first);
        settled.push(to_settled);
    }
    first.sort();
    settled.sort();
    // Sessions with one message each, beyond those of the runs above.
    let opened = runs + 1;
    for _ in opened..sessions.max(opened) {
        let session = open_session(&address)?;
        one_run(&address, &session)?;
    }
    let total_sessions = sessions.max(opened);
    let loaded = resident_kib(service.child.id());
    let millis = |duration: Duration| duration.as_secs_f64() * 1000.0;
    println!("\nassistant serve, scripted model (answers at once), release build, {runs} runs:");
    println!(
        "  message sent -> first SSE event:  p50 {:.2} ms   p99 {:.2} ms",
        millis(percentile(&first, 0.50)),
        millis(percentile(&first, 0.99))
    );
    println!(
        "  message sent -> settlement:       p50 {:.2} ms   p99 {:.2} ms",
        millis(percentile(&settled, 0.50)),
        millis(percentile(&settled, 0.99))
    );
    let shown = |kib: Option<u64>| {
        kib.map_or("unknown".to_owned(), |kib| {
            format!("{:.1} MiB", kib as f64 / 1024.0)
        })
    };
    println!(
        "  resident memory (VmRSS): {} at start, {} with {total_sessions} sessions",
        shown(idle),
        shown(loaded)
    );
    Ok(())
}
