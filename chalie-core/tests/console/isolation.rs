//! One user's console shows nothing of another's sessions: not in the
//! list, not in the page, not by planting the other's session id.

use chalie_core::session::Reply;
use serde_json::{Value, json};

use crate::server::{ALICE, BOB, serve};
use crate::webdriver::launch;
use crate::{new_session, sign_in};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alice_finds_no_trace_of_bobs_sessions() {
    let Some(browser) = launch().await else {
        return;
    };
    let app = serve(vec![Reply::text("Your tulips are ordered.")]).await;
    let bob = reqwest::Client::new();
    let api = format!("{}/ai", app.base);
    let opened: Value = serde_json::from_slice(
        &bob.post(format!("{api}/sessions"))
            .bearer_auth(BOB)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap(),
    )
    .unwrap();
    let bobs = opened["id"].as_str().unwrap().to_owned();
    let sent = bob
        .post(format!("{api}/sessions/{bobs}/messages"))
        .bearer_auth(BOB)
        .header("content-type", "application/json")
        .body(json!({ "content": "order bob-secret-7731" }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 201);

    sign_in(&browser, &app, ALICE, "alice").await;
    new_session(&browser).await;
    // Bob's session id planted where the console remembers the open one.
    browser
        .eval(
            "sessionStorage.setItem('chalie.session', arguments[0])",
            json!([bobs]),
        )
        .await;
    browser.refresh().await;
    browser
        .wait(
            "Alice's session list",
            "return document.querySelectorAll('#sessions .session').length === 1 && document.getElementById('session-id').textContent",
        )
        .await;
    for view in ["#nav-tools", "#nav-chat"] {
        browser.click(view).await;
        let page = browser
            .eval("return document.documentElement.outerHTML", json!([]))
            .await;
        let page = page.as_str().unwrap();
        for trace in [bobs.as_str(), "bob-secret-7731", "tulips", "bob"] {
            assert!(!page.contains(trace), "`{trace}` shows in Alice's console");
        }
    }
}
