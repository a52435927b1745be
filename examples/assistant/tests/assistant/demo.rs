//! The demo's transcript is deterministic: the fixed clock, the scripted
//! model and masked cursors make it the same on every run.

use assistant::IndexMode;
use assistant::demo::{DemoPaths, DemoRun, prepare, record};
use chalie_core::envelope::Envelope;
use chalie_core::session::Role;

/// The workspace root, where `cargo xtask fetch-model` puts the model.
fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_transcript_matches_the_checked_in_one() {
    let model_dir = chalie_index::MiniLm::default_dir(&root());
    assert!(
        model_dir.join("model.safetensors").is_file(),
        "the demo needs the embedding model; run `cargo xtask fetch-model` first"
    );
    // Built here by the development opt-in; the binary below opens the one
    // `cargo xtask index` built.
    let (index, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let profiles = assistant::Profiles::workspace(chalie_core::registry().unwrap()).unwrap();
    let paths = DemoPaths {
        model_dir: &model_dir,
        index_dir: index.path(),
        mode: IndexMode::Rebuild {
            cache_dir: cache.path(),
        },
        external: &[],
        profile: &profiles.everyday,
    };
    let host = prepare(&paths).unwrap();
    let demo = record(&host, &profiles).await.unwrap();
    found_tools_are_described_once(&demo);
    let transcript = demo.transcript;
    let expected_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/assistant/demo.txt");
    if std::env::var_os("CHALIE_BLESS").is_some() {
        std::fs::write(&expected_path, &transcript).unwrap();
    }
    let expected = std::fs::read_to_string(&expected_path).unwrap();
    assert!(
        transcript == expected,
        "the demo changed; if that is intended, rerun with CHALIE_BLESS=1 and review the diff of tests/assistant/demo.txt\n{transcript}"
    );
    // The steps the README promises, each really through the pipeline.
    assert!(transcript.contains("event capability.resolved        weather"));
    assert!(transcript.contains("event tool.approval_required     calendar_edit"));
    assert!(
        transcript.contains("event tool.failed                calendar_edit: permission-denied")
    );
    assert!(transcript.contains("truncated=true, shown_chars=400"));
}

/// In a session, `find_tools` answers with each tool's name and its summary's first
/// sentence, and the model reads the tool's full definition (the whole summary, the
/// schema) in the next request's tool list: each is paid for once, not in the result and
/// again in the list.
fn found_tools_are_described_once(demo: &DemoRun) {
    let registry = chalie_core::registry().unwrap();
    let mut seen = 0;
    for request in demo.requests.iter().map(|recorded| &recorded.request) {
        // The results this request adds: those after the model's last reply.
        let added = request
            .messages
            .iter()
            .rev()
            .take_while(|message| message.role == Role::Tool);
        for message in added {
            let envelope = Envelope::parse(&message.content).unwrap();
            if envelope.tool != "find_tools" {
                continue;
            }
            for found in envelope.json().unwrap()["injected"].as_array().unwrap() {
                let keys: Vec<&String> = found.as_object().unwrap().keys().collect();
                assert_eq!(keys, ["name", "summary"], "{found}");
                let name = found["name"].as_str().unwrap();
                let offered = request
                    .tools
                    .iter()
                    .find(|tool| tool.name() == name)
                    .unwrap_or_else(|| panic!("`{name}` is not offered after it was found"));
                // The line in the result is the summary's first sentence; the whole summary
                // is the description the next request offers.
                let line = found["summary"].as_str().unwrap();
                let description = offered.description();
                assert!(
                    description.starts_with(line) && description.len() > line.len() + 1,
                    "`{name}`: the result says {line:?}, the definition {description:?}"
                );
                let declared = registry.get(name).unwrap().parameters();
                for field in declared["properties"].as_object().unwrap().keys() {
                    assert!(offered.parameters()["properties"].get(field).is_some());
                }
                assert_eq!(offered.parameters()["required"], declared["required"]);
                seen += 1;
            }
        }
    }
    // Each find_tools activates only its confident matches and names the rest: weather and
    // forecast for the weather question (no write); then calendar_edit, twice.
    assert_eq!(seen, 4);
}

/// What a user sees: the `assistant` binary itself, with its own paths
/// (the workspace's model folder, the index `cargo xtask index` built under
/// `.chalie/`), prints the same transcript.
#[test]
fn the_demo_binary_prints_the_transcript() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_assistant"))
        .output()
        .expect("the assistant binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the demo failed:\n{stderr}");
    let expected_path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/assistant/demo.txt");
    let expected = std::fs::read_to_string(expected_path).unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), expected);
}

/// The demo's discovery request measures retrieval, not recall of a
/// phrase: no ability lists it as an example, and the golden set
/// `cargo xtask golden` gates on holds it with `weather` as its answer.
#[test]
fn the_discovery_request_is_no_example_phrase_and_is_in_the_golden_set() {
    let request = assistant::demo::DISCOVERY_REQUEST;
    let registry = chalie_core::registry().unwrap();
    for entry in registry.iter() {
        assert!(
            !entry.spec().examples().contains(&request),
            "`{request}` is one of `{}`'s examples",
            entry.name()
        );
    }
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("eval/golden.jsonl");
    let line = serde_json::json!({ "query": request, "tools": ["weather"] });
    let held = std::fs::read_to_string(golden)
        .unwrap()
        .lines()
        .any(|l| serde_json::from_str::<serde_json::Value>(l).unwrap() == line);
    assert!(held, "the golden set holds {line}");
}
