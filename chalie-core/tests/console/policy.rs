//! The policy manager: a permission set to `ask` on the chat channel gates
//! the very next call; an internal ability is shown and cannot be changed.

use chalie_core::session::Reply;
use serde_json::json;

use crate::abilities::done;
use crate::server::{ALICE, serve};
use crate::webdriver::launch;
use crate::{new_session, screenshot_path, send, sign_in, wait_card};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_changed_in_the_console_gates_the_next_call() {
    let Some(browser) = launch().await else {
        return;
    };
    let app = serve(vec![
        Reply::tool_call("lookup", json!({ "query": "rent" })),
        Reply::text("Found it."),
    ])
    .await;
    sign_in(&browser, &app, ALICE, "alice").await;
    browser.click("#nav-policy").await;
    let cell = "#policy-table tr[data-permission=lookup] td[data-channel=chat]";
    browser.find(&format!("{cell} select")).await;
    assert_eq!(
        browser
            .eval(
                &format!("return document.querySelector('{cell} select').value"),
                json!([])
            )
            .await,
        "allow"
    );
    let internal = browser
        .eval(
            "const row = document.querySelector('#policy-table tr[data-permission=recall]'); \
             return row && [...row.querySelectorAll('td')].map(td => td.querySelector('select') === null && td.textContent)",
            json!([]),
        )
        .await;
    let internal = internal.as_array().expect("the internal ability is shown");
    assert!(!internal.is_empty());
    assert!(
        internal.iter().all(|cell| cell
            .as_str()
            .is_some_and(|text| text.starts_with("internal"))),
        "internal is shown on every channel and offers no change: {internal:?}"
    );

    browser
        .click(&format!("{cell} select option[value=ask]"))
        .await;
    browser
        .wait(
            "the saved change",
            "return document.getElementById('status').textContent === 'lookup on chat: ask'",
        )
        .await;
    browser.screenshot(&screenshot_path("policy")).await;

    browser.click("#nav-chat").await;
    let session = new_session(&browser).await;
    browser.click("#mode option[value=auto]").await;
    browser
        .wait(
            "auto mode",
            "return document.getElementById('status').textContent === 'Mode: auto'",
        )
        .await;
    send(&browser, "look up rent").await;
    wait_card(&browser, "lookup", "awaiting").await;
    assert!(done(&session).is_empty(), "the read waits for an approval");
}
