//! The console is served beside the API: the page at `/`, the Tools
//! view's routes under `/ai` behind the same tokens, counting and
//! discovering over the assistant's own abilities.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{ALICE, Service, Workdir, body, client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_page_and_its_tools_view_are_served_beside_the_api() {
    let work = Workdir::new();
    let script = work.script("script.json", json!([]));
    let service = Service::start(&work, &["--script", script.to_str().unwrap()], &[]);
    let base = &service.base;
    let root = base.strip_suffix("/ai").expect("the API is under /ai");

    let page = reqwest::get(format!("{root}/")).await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.unwrap();
    assert!(page.contains("<title>chalie console</title>"), "{page}");

    // The Tools view needs a signed-in caller, like every other route.
    let anonymous = reqwest::get(format!("{base}/tools")).await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);

    let alice = client(ALICE);
    let tools = body(alice.get(format!("{base}/tools")).send().await.unwrap()).await;
    let calendar = tools["tools"]
        .as_array()
        .expect("a list of tools")
        .iter()
        .find(|tool| tool["name"] == "calendar")
        .expect("the assistant's calendar is listed");
    let counted = &calendar["providers"]["openai_chat"]["tokens"];
    assert!(
        counted.as_u64().is_some_and(|tokens| tokens > 20),
        "the calendar's OpenAI definition is counted: {calendar}"
    );

    // The playground runs the index `find_tools` searches.
    let found = body(
        alice
            .get(format!(
                "{base}/tools/discover?q=what%27s%20the%20weather%20in%20Rome"
            ))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let activated: Vec<&str> = found["activated"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(activated.contains(&"weather"), "{found}");
}
