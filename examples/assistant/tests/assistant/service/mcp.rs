//! The MCP servers `chalie.toml` configures, through `assistant serve` as
//! a user composes it: a stdio server written with the Python MCP SDK
//! under `[[mcp.servers]]`, the index built for that file by the step
//! `cargo xtask index` runs, and the service started on both. The model
//! finds the server's tool with `find_tools` and calls it; once the policy
//! denies it, nothing reaches the server (which logs every call it gets).
//! A server that cannot be reached, or an index without its tools, stops
//! the start with the fix. A server's skills (SEP-2640) are indexed with its
//! tools, and `find_skills` hands the model their playbooks.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fake_model::{openai_text, openai_tool_call_with_id, serve};
use super::{ALICE, Service, Workdir, body, client, names, open_session, send};

/// The workspace: the embedding model, the playbooks, the Python venv.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The venv's python (`cargo xtask python-env`), or `CHALIE_PYTHON`. A
/// missing one fails with the command that installs it: skipping would
/// let CI pass without the server this test is about.
fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("CHALIE_PYTHON") {
        return python.into();
    }
    let venv = workspace().join(".chalie").join("venv");
    let python = if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    };
    assert!(
        python.exists(),
        "the Python MCP SDK is not installed: no interpreter at `{}`; run `cargo xtask python-env` or set CHALIE_PYTHON to a python with `mcp` installed",
        python.display()
    );
    python
}

/// The server, chalie-core's Python test server: `py__get_forecast` among others.
fn tool_server() -> PathBuf {
    workspace().join("chalie-core/tests/mcp/python/tool_server.py")
}

/// Writes `NAME.toml` in `work`: the workspace's `chalie.toml` with
/// `servers` appended, and returns its path.
fn config(work: &Workdir, name: &str, servers: &str) -> PathBuf {
    let mut text = std::fs::read_to_string(workspace().join("chalie.toml")).unwrap();
    text.push_str(servers);
    let path = work.path(&format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The Python server as `py`, logging its calls to `calls.log`, exposed
/// by the chats' profile.
fn python_server(work: &Workdir) -> String {
    format!(
        r#"
[[mcp.servers]]
name = "py"
command = {python:?}
args = [{script:?}]
env = {{ TOOL_SERVER_CALL_LOG = {log:?} }}

[profiles.everyday.external]
servers = ["py"]
"#,
        python = python().display().to_string(),
        script = tool_server().display().to_string(),
        log = work.path("calls.log").display().to_string(),
    )
}

/// Builds the index for `config` into `work/NAME`, by the step `cargo
/// xtask index --config FILE` runs (the servers connected and listed),
/// with a copy of the workspace's embedding cache so only new texts are
/// embedded.
fn index(work: &Workdir, config: &Path, name: &str) -> PathBuf {
    let root = workspace();
    let cache = work.path(&format!("{name}-cache"));
    std::fs::create_dir_all(&cache).unwrap();
    if let Ok(entries) = std::fs::read_dir(chalie_index::default_cache_dir(&root)) {
        for entry in entries {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), cache.join(entry.file_name())).unwrap();
        }
    }
    let out = work.path(name);
    chalie_index::xtask::Xtask::new(work.dir.path())
        .model(chalie_index::MiniLm::default_dir(&root))
        .skills(root.join("examples/assistant/skills"))
        .config(config)
        .cache(&cache)
        .out(&out)
        .build(&mut |_| {}, &mut |warning| eprintln!("{warning}"))
        .unwrap();
    out
}

/// `assistant serve` on the model server at `url`, with `config` and the
/// index built for it.
fn start(work: &Workdir, url: &str, config: &Path, index: &Path) -> Service {
    Service::start(
        work,
        &[
            "--model-url",
            &format!("{url}/v1"),
            "--model",
            "local-model",
            "--config",
            config.to_str().unwrap(),
            "--index",
            index.to_str().unwrap(),
        ],
        &[],
    )
}

/// What the calls log holds: one line per call the server ran.
fn calls(work: &Workdir) -> Vec<String> {
    std::fs::read_to_string(work.path("calls.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs `assistant serve` with `args` and expects it to stop before
/// listening; what it printed on stderr. One that starts is killed and
/// fails the test, rather than holding it up.
fn refused(work: &Workdir, args: &[&str]) -> String {
    let stderr_path = work.path("refused.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_assistant"))
        .args(["serve", "--listen", "127.0.0.1:0", "--users"])
        .arg(work.path("users.toml"))
        .arg("--db")
        .arg(work.path("db.sqlite"))
        .args(args)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the service started instead of refusing:\n{}",
                std::fs::read_to_string(&stderr_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(!status.success(), "{stderr}");
    stderr
}

/// One message of the model's: discover the server's forecast tool by
/// name, call it, answer; the calls' ids begin with `turn`.
fn forecast_turn(turn: &str, answer: &str) -> Vec<Vec<String>> {
    vec![
        openai_tool_call_with_id(
            &format!("{turn}_find"),
            "find_tools",
            &json!({ "query": ["py__get_forecast"] }),
        ),
        openai_tool_call_with_id(
            &format!("{turn}_call"),
            "py__get_forecast",
            &json!({ "city": "Rome", "days": 2 }),
        ),
        openai_text(answer),
    ]
}

/// The tools a request offered the model.
fn offered(request: &Value) -> Vec<&str> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect()
}

/// The text the model was sent as the result of the call `id`.
fn tool_result<'a>(request: &'a Value, id: &str) -> &'a str {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool" && message["tool_call_id"] == id)
        .and_then(|message| message["content"].as_str())
        .unwrap_or_else(|| panic!("no result for `{id}`: {request}"))
}

async fn set_policy(base: &str, setting: &str) {
    let changed = client(ALICE)
        .put(format!("{base}/policy"))
        .json(&json!({ "permission": "py__get_forecast", "channel": "chat", "setting": setting }))
        .send()
        .await
        .unwrap();
    assert_eq!(changed.status(), StatusCode::OK, "{}", body(changed).await);
}

/// The event `name` of `events` about the call of `tool`.
fn event<'a>(events: &'a [(String, Value)], name: &str, tool: &str) -> &'a Value {
    events
        .iter()
        .find(|(event, data)| event == name && data.to_string().contains(tool))
        .map(|(_, data)| data)
        .unwrap_or_else(|| panic!("no `{name}` for `{tool}`: {events:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_server_is_found_called_and_gated_like_an_ability() {
    let work = Workdir::new();
    let config = config(&work, "chalie", &python_server(&work));
    let index = index(&work, &config, "index");
    let mut replies = forecast_turn("first", "Sunny in Rome.");
    replies.extend(forecast_turn("second", "I may not look it up."));
    let (url, received) = serve(replies).await;
    let service = start(&work, &url, &config, &index);
    let base = service.base.clone();
    // Indexing connected the server and listed its tools; it ran nothing.
    assert!(calls(&work).is_empty(), "{:?}", calls(&work));

    // Allowed: `find_tools` activates it, the call reaches the server,
    // and its result comes back in the stream and the history.
    set_policy(&base, "allow").await;
    let session = open_session(&base, ALICE, "approval").await;
    let (_, mut stream) = send(&base, ALICE, &session, "will it be sunny in Rome").await;
    let first = stream.until("run.settlement.completed").await;
    let completed = event(&first, "tool.completed", "py__get_forecast");
    assert_eq!(completed["success"], true, "{completed}");
    let resolved = event(&first, "capability.resolved", "py__get_forecast");
    assert_eq!(resolved["tools"], json!(["py__get_forecast"]), "{resolved}");
    assert!(!names(&first).contains(&"tool.failed"), "{first:?}");
    assert_eq!(calls(&work), ["get-forecast Rome 2"]);
    let history = body(
        client(ALICE)
            .get(format!("{base}/sessions/{session}/messages"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let called = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["toolCalls"].as_array().unwrap())
        .find(|call| call["toolKey"] == "py__get_forecast")
        .unwrap_or_else(|| panic!("no call in the history: {history}"));
    assert_eq!(called["status"], "completed", "{history}");
    {
        let received = received.lock().unwrap();
        // Not offered before `find_tools` activated it; offered after.
        assert!(!offered(&received[0].1).contains(&"py__get_forecast"));
        assert!(offered(&received[1].1).contains(&"py__get_forecast"));
        let result = tool_result(&received[2].1, "first_call");
        assert!(result.contains("Rome: sunny for 2 day(s)"), "{result}");
    }

    // Denied through the policy: the same call is refused before it
    // reaches the server, and the model reads why.
    set_policy(&base, "deny").await;
    let (_, mut stream) = send(&base, ALICE, &session, "and tomorrow").await;
    let second = stream.until("run.settlement.completed").await;
    let failed = event(&second, "tool.failed", "py__get_forecast");
    assert_eq!(failed["error"]["code"], "permission-denied", "{failed}");
    assert_eq!(calls(&work), ["get-forecast Rome 2"], "a denied call ran");
    {
        let received = received.lock().unwrap();
        assert_eq!(received.len(), 6);
        let refusal = tool_result(&received[5].1, "second_call");
        assert!(refusal.contains("permission-denied"), "{refusal}");
        assert!(!refusal.contains("sunny"), "{refusal}");
    }

    // A graceful stop closes the connection: the server's process ends.
    assert!(service.terminate(), "the service did not stop cleanly");
}

/// A chalie MCP server over streamable HTTP that serves one skill and no
/// tools, as another team's server would.
async fn skills_server() -> chalie_core::mcp::HttpServer {
    use chalie_core::mcp::{Exposure, McpServer, ServedSkill};
    let registry = chalie_core::Registry::from_entries(Vec::new()).unwrap();
    let dispatcher = chalie_core::Dispatcher::builder(registry).build();
    McpServer::builder(std::sync::Arc::new(dispatcher))
        .exposure(Exposure::Full)
        .skills([ServedSkill::new(
            "pack_for_rain",
            "Packs a bag for a rainy trip: umbrella, boots and a coat.",
            "1. Check the forecast for the trip's days.\n2. Pack the umbrella first.\n",
        )])
        .build()
        .unwrap()
        .serve_http(([127, 0, 0, 1], 0).into())
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_servers_skills_are_indexed_and_found_by_find_skills() {
    let work = Workdir::new();
    let server = skills_server().await;
    let config = config(
        &work,
        "chalie",
        &format!(
            "\n[[mcp.servers]]\nname = \"packing\"\nurl = {:?}\n",
            server.url()
        ),
    );
    let index = index(&work, &config, "index");
    let (url, received) = serve(vec![
        openai_tool_call_with_id(
            "skill_find",
            "find_skills",
            &json!({ "query": ["packing__pack_for_rain"] }),
        ),
        openai_text("Umbrella first."),
    ])
    .await;
    let service = start(&work, &url, &config, &index);
    let base = service.base.clone();
    let session = open_session(&base, ALICE, "approval").await;
    let (_, mut stream) = send(&base, ALICE, &session, "I'm off to Bergen, what do I pack").await;
    let events = stream.until("run.settlement.completed").await;
    let completed = event(&events, "tool.completed", "find_skills");
    assert_eq!(completed["success"], true, "{completed}");
    {
        let received = received.lock().unwrap();
        let result = tool_result(&received[1].1, "skill_find");
        // The server's playbook, as it served it, without its frontmatter.
        assert!(
            result.contains("packing__pack_for_rain")
                && result.contains("Pack the umbrella first."),
            "{result}"
        );
        assert!(!result.contains("name: \"pack-for-rain\""), "{result}");
    }
    assert!(service.terminate(), "the service did not stop cleanly");
    server.shutdown().await.unwrap();
}

#[test]
fn an_index_without_the_configured_servers_tools_stops_the_start() {
    let work = Workdir::new();
    let without = config(&work, "without", "");
    let stale = index(&work, &without, "index-without");
    let with = config(&work, "with", &python_server(&work));
    let script = work.script("script.json", json!([]));
    let stderr = refused(
        &work,
        &[
            "--script",
            script.to_str().unwrap(),
            "--config",
            with.to_str().unwrap(),
            "--index",
            stale.to_str().unwrap(),
        ],
    );
    assert!(stderr.contains("(index-stale)"), "{stderr}");
    assert!(stderr.contains("`cargo xtask index`"), "{stderr}");
}

#[test]
fn a_server_that_cannot_be_reached_stops_the_start_with_its_name() {
    let work = Workdir::new();
    let config = config(
        &work,
        "chalie",
        "\n[[mcp.servers]]\nname = \"ghost\"\ncommand = \"/nonexistent/mcp-server\"\n",
    );
    let script = work.script("script.json", json!([]));
    let stderr = refused(
        &work,
        &[
            "--script",
            script.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
    );
    assert!(stderr.contains("MCP server `ghost`"), "{stderr}");
    assert!(stderr.contains("[[mcp.servers]]"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_the_profile_does_not_list_is_neither_found_nor_called() {
    let work = Workdir::new();
    // Configured and indexed, but `[profiles.everyday.external]` does not
    // name it.
    let server = python_server(&work).replace("servers = [\"py\"]", "servers = []");
    let config = config(&work, "chalie", &server);
    let index = index(&work, &config, "index");
    let (url, received) = serve(forecast_turn("only", "Nothing to look it up with.")).await;
    let service = start(&work, &url, &config, &index);
    let base = service.base.clone();
    // Even allowed by the policy, which gates only what the model reaches.
    set_policy(&base, "allow").await;
    let session = open_session(&base, ALICE, "approval").await;
    let (_, mut stream) = send(&base, ALICE, &session, "will it be sunny in Rome").await;
    let events = stream.until("run.settlement.completed").await;
    let failed = event(&events, "tool.failed", "py__get_forecast");
    assert_eq!(failed["error"]["code"], "tool-not-available", "{failed}");
    assert!(calls(&work).is_empty(), "{:?}", calls(&work));
    let received = received.lock().unwrap();
    assert!(!offered(&received[1].1).contains(&"py__get_forecast"));
    assert!(
        service
            .log()
            .contains("exposes none of this server's tools")
    );
}
