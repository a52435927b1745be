//! `assistant serve` driven as a separate process over real HTTP: the
//! binary this package builds, started on a free port with a users file,
//! a database and a model, and read with reqwest and an SSE reader.

mod console;
mod fake_model;
mod mcp;
mod models;
mod otlp;
mod owners;
mod policy;
mod restart;
mod user_data;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

/// Alice's token: an administrator, who may change the policy.
pub const ALICE: &str = "alice-0123456789abcdef0123456789abcdef";
/// Bob's token.
pub const BOB: &str = "bob-0123456789abcdef0123456789abcdef00";

/// A folder of its own per test: the users file, the script, the database.
pub struct Workdir {
    pub dir: tempfile::TempDir,
}

impl Workdir {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("users.toml"),
            format!(
                "[[users]]\nname = \"alice\"\ntoken = \"{ALICE}\"\nadmin = true\n\n[[users]]\nname = \"bob\"\ntoken = \"{BOB}\"\n"
            ),
        )
        .unwrap();
        Self { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes a script of `replies` and returns its path.
    pub fn script(&self, name: &str, replies: Value) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, replies.to_string()).unwrap();
        path
    }
}

/// A running service; killed when dropped.
pub struct Service {
    pub child: Child,
    /// `http://127.0.0.1:<port>/ai`.
    pub base: String,
    log: PathBuf,
}

impl Service {
    /// Starts `assistant serve` in `work` with `model_args` (e.g.
    /// `--script FILE`) on the database `db.sqlite` of the folder, and
    /// waits until it listens.
    pub fn start(work: &Workdir, model_args: &[&str], env: &[(&str, &str)]) -> Service {
        let log = work.path(&format!("service-{}.log", unique()));
        let mut command = Command::new(env!("CARGO_BIN_EXE_assistant"));
        command
            .args(["serve", "--listen", "127.0.0.1:0", "--users"])
            .arg(work.path("users.toml"))
            .arg("--db")
            .arg(work.path("db.sqlite"))
            .args(model_args)
            // A developer's own keys must not decide which model a test talks to.
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            // Nor their collector where its spans go.
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_SERVICE_NAME")
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap());
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let line = receiver
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_default();
        let Some(base) = line.trim().strip_prefix("listening on ") else {
            let _ = child.kill();
            panic!(
                "the service did not start: {line:?}\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        };
        Service {
            base: base.to_owned(),
            child,
            log,
        }
    }

    /// What the service logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Asks the service to stop as an operator does (SIGTERM) and waits
    /// for it; whether it exited cleanly.
    pub fn terminate(mut self) -> bool {
        let stopped = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(stopped.success());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the service did not stop on SIGTERM\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A client sending `token` with every request.
pub fn client(token: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {token}").parse().unwrap(),
    );
    reqwest::Client::builder()
        .default_headers(headers)
        .build()
        .unwrap()
}

/// The JSON body of a response.
pub async fn body(response: reqwest::Response) -> Value {
    serde_json::from_slice(&response.bytes().await.unwrap()).unwrap()
}

/// An SSE reader: frames as (event, id, data), keep-alives skipped.
pub struct Sse {
    response: reqwest::Response,
    buffer: String,
}

impl Sse {
    /// Opens `url` as `token` and checks it is an event stream.
    pub async fn open(token: &str, url: &str) -> Sse {
        let response = client(token).get(url).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        let kind = response.headers()["content-type"].to_str().unwrap();
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        Sse {
            response,
            buffer: String::new(),
        }
    }

    /// The next frame, `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<(String, String, Value)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                let (mut event, mut id, mut data) = (String::new(), String::new(), String::new());
                for line in frame.lines() {
                    if let Some(value) = line.strip_prefix("event: ") {
                        event = value.to_owned();
                    } else if let Some(value) = line.strip_prefix("id: ") {
                        id = value.to_owned();
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        data.push_str(value);
                    }
                }
                if event.is_empty() {
                    continue;
                }
                return Some((event, id, serde_json::from_str(&data).unwrap()));
            }
            let chunk = tokio::time::timeout(Duration::from_secs(60), self.response.chunk())
                .await
                .expect("an event within a minute")
                .unwrap()?;
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// Frames up to and including the first named `name`.
    pub async fn until(&mut self, name: &str) -> Vec<(String, Value)> {
        let mut seen = Vec::new();
        while let Some((event, _, data)) = self.next().await {
            let found = event == name;
            seen.push((event, data));
            if found {
                return seen;
            }
        }
        panic!("the stream ended before `{name}`: {seen:?}");
    }
}

/// Opens a session as `token` in `mode`; its id.
pub async fn open_session(base: &str, token: &str, mode: &str) -> String {
    let opened = client(token)
        .post(format!("{base}/sessions"))
        .json(&json!({ "mode": mode }))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), StatusCode::CREATED);
    body(opened).await["id"].as_str().unwrap().to_owned()
}

/// Sends `content` to `session` as `token`; the message's stream.
pub async fn send(base: &str, token: &str, session: &str, content: &str) -> (String, Sse) {
    let sent = client(token)
        .post(format!("{base}/sessions/{session}/messages"))
        .json(&json!({ "content": content }))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), StatusCode::CREATED);
    let sent = body(sent).await;
    let message = sent["messageId"].as_str().unwrap().to_owned();
    assert_eq!(sent["runId"], message.as_str());
    let stream = Sse::open(
        token,
        &format!("{base}/sessions/{session}/messages/{message}/stream"),
    )
    .await;
    (message, stream)
}

/// The names of `events`.
pub fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(name, _)| name.as_str()).collect()
}

/// The scripted replies of one calendar write: discover the calendar, add
/// an event titled `title`, then say `done`.
pub fn calendar_write(title: &str, done: &str) -> Vec<Value> {
    vec![
        json!({ "toolCalls": [{ "name": "find_tools", "arguments": { "query": ["add an event to my calendar"] } }] }),
        json!({ "toolCalls": [{ "name": "calendar_edit", "arguments": {
            "action": "add_event", "title": title, "start": "2026-03-07T09:00",
            "act_summary": format!("Adding {title}")
        } }] }),
        json!({ "text": done }),
    ]
}
