//! `OpenAiEmbedder` against a local `/v1/embeddings` server serving the real MiniLM's
//! vectors: an index built through it answers like the built-in model, an index of
//! another model, length or reported identity is `index-stale`, failures are retried and
//! then typed, and `find_tools` reaches it from inside the dispatcher's runtime.

mod server;

use std::sync::Arc;
use std::time::Duration;

use chalie_core::{Channel, Dispatcher, ToolCall, Turn, dispatch::Policy};
use chalie_index::{
    Discovery, EmbedError, Embedder, EndpointFailure, FindOptions, Index, MiniLm, OpenAiEmbedder,
};
use server::{Fault, Server};

use crate::minilm::model;
use crate::support::{entries, local};

const REPORTED: &str = "all-MiniLM-L6-v2";

fn minilm_server() -> (Server, Arc<MiniLm>) {
    let minilm = Arc::new(model());
    (Server::start(minilm.clone(), REPORTED), minilm)
}

/// Quick retries, so the failure tests take milliseconds.
fn client(server: &Server) -> chalie_index::OpenAiEmbedderBuilder {
    OpenAiEmbedder::builder(&server.base_url, "sentence-transformers/all-MiniLM-L6-v2")
        .backoff(Duration::from_millis(5))
}

fn catalog() -> Vec<chalie_index::Descriptor> {
    let mut weather = local("weather", "Current weather and forecast for a city");
    weather.examples = vec!["will it rain in Lyon tomorrow".into(), "is it cold".into()];
    vec![
        weather,
        local("send_email", "Send an email to a recipient"),
        local("calculator", "Evaluate an arithmetic expression"),
        local("translate", "Translate text between languages"),
        local("calendar", "List and create calendar events"),
    ]
}

const QUERIES: [&str; 6] = [
    "is there a way to check the weather in another city",
    "mail my boss the report",
    "what is 17 times 23",
    "say this in French",
    "book a meeting on Friday",
    "play some jazz",
];

#[test]
fn an_index_built_through_the_endpoint_answers_like_the_built_in_model() {
    let (server, minilm) = minilm_server();
    let remote: Arc<dyn Embedder> = Arc::new(client(&server).build().expect("connects"));
    assert_eq!(remote.dimensions(), 384);
    let (built_in, through_http) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    Index::build(&catalog(), minilm.as_ref(), built_in.path(), &mut |_| {}).expect("build");
    Index::build(
        &catalog(),
        remote.as_ref(),
        through_http.path(),
        &mut |_| {},
    )
    .expect("build");
    let built_in = Index::open(built_in.path(), minilm).expect("open");
    let through_http = Index::open(through_http.path(), remote).expect("open");
    for query in QUERIES {
        let options = FindOptions::default();
        let ours = through_http.nearest(query, 5, &options).unwrap();
        let theirs = built_in.nearest(query, 5, &options).unwrap();
        let names = |hits: &[(String, f32)]| hits.iter().map(|h| h.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&ours), names(&theirs), "{query}");
        for ((_, a), (_, b)) in ours.iter().zip(&theirs) {
            assert!((a - b).abs() < 1e-4, "{query}: distance {a} vs {b}");
        }
        let found = |index: &Index| {
            let outcome = index.find(&entries(&[query]), &options).unwrap();
            outcome
                .injected
                .into_iter()
                .map(|h| h.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(found(&through_http), found(&built_in), "{query}");
    }
}

#[test]
fn another_model_length_or_reported_identity_is_index_stale() {
    let (server, minilm) = minilm_server();
    let remote = Arc::new(client(&server).build().expect("connects"));
    let dir = tempfile::tempdir().unwrap();
    Index::build(&catalog(), remote.as_ref(), dir.path(), &mut |_| {}).expect("build");
    let stale = |embedder: Arc<dyn Embedder>, what: &str| {
        let error = Index::open(dir.path(), embedder).expect_err(what);
        assert_eq!(error.code(), "index-stale", "{what}: {error}");
    };
    stale(minilm, "the built-in model");
    let renamed = OpenAiEmbedder::builder(&server.base_url, "some/other-model")
        .build()
        .unwrap();
    stale(Arc::new(renamed), "another model id");
    let shorter = client(&server).dimensions(128).build().unwrap();
    assert_eq!(shorter.dimensions(), 128);
    stale(Arc::new(shorter), "another length");
    // Same requested id, but the server now says another model answers.
    server.set_reported_model("all-MiniLM-L12-v2");
    let swapped = client(&server).build().unwrap();
    assert_eq!(swapped.reported_model(), Some("all-MiniLM-L12-v2"));
    stale(Arc::new(swapped), "another reported model");
    server.set_reported_model(REPORTED);
    Index::open(dir.path(), Arc::new(client(&server).build().unwrap())).expect("same again");
    // A server that changes model under a running embedder is refused, not mixed in.
    server.set_reported_model("all-MiniLM-L12-v2");
    match remote.embed_batch(&["hello"]) {
        Err(EmbedError::Endpoint {
            failure: EndpointFailure::ModelChanged { probed, now },
            ..
        }) => assert_eq!(
            (probed.as_str(), now.as_str()),
            (REPORTED, "all-MiniLM-L12-v2")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn texts_go_in_batches_and_come_back_in_order() {
    let (server, minilm) = minilm_server();
    let remote = client(&server).batch_size(32).build().unwrap();
    let texts: Vec<String> = (0..70).map(|i| format!("request number {i}")).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let ours = remote.embed_batch(&texts).unwrap();
    assert_eq!(
        server.batches(),
        [1, 32, 32, 6],
        "the probe, then three batches"
    );
    let theirs = minilm.embed_batch(&texts).unwrap();
    for (a, b) in ours.iter().zip(&theirs) {
        let worst = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max);
        assert!(worst < 1e-5, "largest difference {worst}");
    }
    assert_eq!(remote.embed_batch(&[]).unwrap(), Vec::<Vec<f32>>::new());
    assert_eq!(server.batches().len(), 4, "nothing to embed sends nothing");
}

fn failure(result: Result<OpenAiEmbedder, EmbedError>) -> EndpointFailure {
    match result {
        Err(EmbedError::Endpoint { failure, .. }) => failure,
        other => panic!("expected an endpoint error, got {other:?}"),
    }
}

#[test]
fn rate_limits_and_server_errors_are_retried_with_backoff() {
    let (server, _) = minilm_server();
    server.fail_with([
        Fault::Status(429, r#"{"error":{"message":"slow down"}}"#, Some("0")),
        Fault::Status(503, "overloaded", None),
        Fault::Stall(Duration::from_millis(600)),
    ]);
    let remote = client(&server)
        .timeout(Duration::from_millis(300))
        .build()
        .expect("the fourth try answers");
    assert_eq!(server.batches().len(), 4);
    assert_eq!(remote.dimensions(), 384);

    server.fail_with(std::iter::repeat_n(Fault::Status(500, "boom", None), 3));
    assert_eq!(
        failure(client(&server).retries(2).build()),
        EndpointFailure::Status {
            status: 500,
            attempts: 3,
            message: "boom".into()
        }
    );
}

#[test]
fn a_request_the_server_refuses_is_not_retried() {
    let (server, _) = minilm_server();
    server.fail_with([Fault::Status(
        401,
        r#"{"error":{"message":"Incorrect API key provided"}}"#,
        None,
    )]);
    let refused = client(&server).api_key("sk-wrong").build();
    assert_eq!(
        failure(refused),
        EndpointFailure::Status {
            status: 401,
            attempts: 1,
            message: "Incorrect API key provided".into()
        }
    );
    assert_eq!(server.batches().len(), 1);
    let authorization = server.script.lock().unwrap().authorization.clone();
    assert_eq!(authorization.as_deref(), Some("Bearer sk-wrong"));
}

#[test]
fn silence_a_dead_port_and_nonsense_are_typed() {
    let (server, _) = minilm_server();
    server.fail_with(std::iter::repeat_n(Fault::Stall(Duration::from_secs(2)), 2));
    let slow = client(&server)
        .timeout(Duration::from_millis(200))
        .retries(1)
        .build();
    assert_eq!(
        failure(slow),
        EndpointFailure::TimedOut {
            timeout_ms: 200,
            attempts: 2
        }
    );
    server.fail_with([Fault::Body(r#"{"data":[]}"#)]);
    assert!(matches!(
        failure(client(&server).build()),
        EndpointFailure::Malformed(reason) if reason.contains("0 vectors for 1 texts")
    ));
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let dead = OpenAiEmbedder::builder(&format!("http://127.0.0.1:{port}/v1"), "m")
        .retries(1)
        .backoff(Duration::from_millis(1))
        .build();
    match failure(dead) {
        EndpointFailure::Unreachable { attempts, reason } => {
            assert_eq!(attempts, 2);
            assert!(reason.to_lowercase().contains("refused"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

/// The composition the README gives: the index opened for the dispatcher with the
/// endpoint embedder, `find_tools` called through the dispatcher on a single-threaded
/// runtime (the embedder's HTTP runs on its own thread, so blocking here is safe).
#[test]
fn find_tools_reaches_the_endpoint_from_inside_the_dispatcher() {
    let (server, _) = minilm_server();
    let remote = Arc::new(client(&server).build().unwrap());
    let dir = tempfile::tempdir().unwrap();
    Index::build(&catalog(), remote.as_ref(), dir.path(), &mut |_| {}).expect("build");
    let index = Index::open(dir.path(), remote).expect("open");
    let dispatcher = Dispatcher::builder(chalie_core::registry().unwrap().clone())
        .policy(Policy::new())
        .extension(Discovery::new(Arc::new(index)))
        .build();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let turn = Turn::builder(Channel::Chat).build();
    let call = ToolCall::new(
        "find_tools",
        serde_json::json!({ "query": ["will it be sunny in Oslo tomorrow"] }),
    );
    let done = runtime.block_on(dispatcher.dispatch(&turn, call));
    assert!(
        done.envelope.contains("\"name\":\"weather\""),
        "{}",
        done.envelope
    );
    assert!(turn.activated_tools().iter().any(|name| name == "weather"));
}

/// `cargo xtask index`, `index --check` and `eval` take the endpoint on the command line,
/// through the library entry a project's own xtask calls.
#[test]
fn the_xtask_commands_take_the_endpoint() {
    let (server, _) = minilm_server();
    let root = tempfile::tempdir().unwrap();
    let tools = root.path().join("tools.jsonl");
    let queries = root.path().join("queries.jsonl");
    let tool_lines: Vec<String> = catalog()
        .iter()
        .map(|d| serde_json::json!({ "name": d.name, "description": d.summary }).to_string())
        .collect();
    std::fs::write(&tools, tool_lines.join("\n")).unwrap();
    let query_lines = [
        r#"{"query": "mail my boss the report", "tools": ["send_email"]}"#,
        r#"{"query": "what is 17 times 23", "tools": ["calculator"]}"#,
    ];
    std::fs::write(&queries, query_lines.join("\n")).unwrap();
    let task = chalie_index::xtask::Xtask::new(root.path()).without_linked();
    let flags = |command: &str, rest: &[&str]| -> Vec<String> {
        let endpoint = [
            "--embedder-url",
            server.base_url.as_str(),
            "--embedder-model",
            "sentence-transformers/all-MiniLM-L6-v2",
        ];
        std::iter::once(command)
            .chain(rest.iter().copied())
            .chain(endpoint)
            .map(str::to_owned)
            .collect()
    };
    let tools = tools.to_str().unwrap();
    task.run(flags("index", &["--tools", tools, "--no-cache"]))
        .expect("index");
    task.run(flags("index", &["--tools", tools, "--check"]))
        .expect("check");
    let built = chalie_index::Manifest::read(task.out_dir()).unwrap();
    assert_eq!(
        built.embedder.model_id,
        "sentence-transformers/all-MiniLM-L6-v2"
    );
    let queries = queries.to_str().unwrap();
    task.run(flags("eval", &["--tools", tools, "--queries", queries]))
        .expect("eval");

    // Checked with the built-in model instead, the same index is stale.
    let error = task
        .clone()
        .model(MiniLm::default_dir(
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
        ))
        .run(["index", "--tools", tools, "--check"].map(str::to_owned))
        .expect_err("another embedder");
    assert!(error.to_string().contains("(index-stale)"), "{error}");
    let half = task.run(
        [
            "eval",
            "--tools",
            tools,
            "--queries",
            queries,
            "--embedder-url",
            "http://127.0.0.1:9/v1",
        ]
        .map(str::to_owned),
    );
    assert!(
        half.expect_err("no model")
            .to_string()
            .contains("go together")
    );
}
