//! The Chat view: a reply streaming, a card going from started to
//! completed, a held write approved and run once, a reload rebuilding the
//! same cards.

use chalie_core::session::Reply;
use serde_json::{Value, json};

use crate::abilities::{SECOND_PAGE, done};
use crate::server::{ALICE, serve};
use crate::webdriver::launch;
use crate::{new_session, screenshot_path, send, sign_in, wait_card};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_streams_and_its_tool_card_goes_from_started_to_completed() {
    let Some(browser) = launch().await else {
        return;
    };
    let app = serve(vec![
        Reply::text("Here is your list.").then_tool_call(
            "list_tasks",
            json!({ "act_summary": "Checking your tasks" }),
        ),
        Reply::deltas(["You ", "have ", "one ", "task: ", "pay rent."]),
    ])
    .await;
    sign_in(&browser, &app, ALICE, "alice").await;
    new_session(&browser).await;
    send(&browser, "what are my tasks?").await;

    // The ability is held between its pages: the card is running, its first
    // progress line shown, and the reply's first words are already there.
    wait_card(&browser, "list_tasks", "started").await;
    browser
        .wait(
            "the first progress line",
            "return [...document.querySelectorAll('#messages .card .progress li')].some(li => li.textContent === 'fetched page 1 of 2')",
        )
        .await;
    let card = "#messages .card[data-tool=list_tasks]";
    assert_eq!(
        browser.text(&format!("{card} .label")).await,
        "Checking your tasks"
    );
    assert_eq!(
        browser.text("#messages li.assistant .text").await,
        "Here is your list."
    );
    assert_eq!(
        browser
            .eval(
                "return document.querySelector('#messages li.assistant').getAttribute('aria-busy')",
                json!([])
            )
            .await,
        "true",
        "the run is still going while its first words show"
    );

    SECOND_PAGE.add_permits(1);
    wait_card(&browser, "list_tasks", "completed").await;
    let progress = browser.text(&format!("{card} .progress")).await;
    assert!(
        progress.ends_with("fetched page 1 of 2\nfetched page 2 of 2"),
        "{progress}"
    );
    let outcome = browser.text(&format!("{card} .outcome")).await;
    assert!(
        outcome.starts_with("succeeded in ") && outcome.ends_with(" ms"),
        "{outcome}"
    );
    let payload: Value =
        serde_json::from_str(&browser.text(&format!("{card} .payload")).await).unwrap();
    assert_eq!(payload, json!({ "title": "Open tasks", "count": 1 }));
    browser
        .wait(
            "the whole reply",
            "return document.querySelector('#messages li.assistant').dataset.done === 'true'",
        )
        .await;
    assert_eq!(
        browser.text("#messages li.assistant .text").await,
        "Here is your list.\nYou have one task: pay rent."
    );
    browser.screenshot(&screenshot_path("chat")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_write_is_approved_runs_once_and_a_reload_rebuilds_every_card() {
    let Some(browser) = launch().await else {
        return;
    };
    let app = serve(vec![
        Reply::tool_call("lookup", json!({ "query": "rent" })),
        Reply::tool_call(
            "delete_task",
            json!({ "id": 7, "act_summary": "Deleting the rent task" }),
        ),
        Reply::text("Deleted."),
    ])
    .await;
    sign_in(&browser, &app, ALICE, "alice").await;
    let session = new_session(&browser).await;
    send(&browser, "delete the rent task").await;

    wait_card(&browser, "delete_task", "awaiting").await;
    let card = "#messages .card[data-tool=delete_task]";
    let countdown = browser.text(&format!("{card} .countdown")).await;
    let seconds: u32 = countdown.trim_end_matches(" s left").parse().unwrap();
    assert!((55..=60).contains(&seconds), "{countdown}");
    assert!(done(&session).iter().all(|what| what != "delete:7"));
    browser.click(&format!("{card} button.approve")).await;
    wait_card(&browser, "delete_task", "completed").await;
    browser
        .wait(
            "the reply",
            "return document.querySelector('#messages li.assistant').dataset.done === 'true'",
        )
        .await;
    assert_eq!(done(&session), ["lookup:rent", "delete:7"], "ran once");

    let before = cards(&browser).await;
    assert_eq!(before.as_array().map(Vec::len), Some(2), "{before:?}");
    browser.refresh().await;
    browser
        .wait(
            "the cards again",
            "return document.querySelectorAll('#messages .card').length === 2",
        )
        .await;
    assert_eq!(cards(&browser).await, before);
    assert_eq!(
        done(&session),
        ["lookup:rent", "delete:7"],
        "a reload runs nothing"
    );
}

/// Every card on the page: tool, label, status and payload.
async fn cards(browser: &crate::webdriver::Browser) -> Value {
    browser
        .eval(
            "return [...document.querySelectorAll('#messages .card')].map(c => [c.dataset.callId, c.dataset.tool, c.querySelector('.label').textContent, c.dataset.status, c.querySelector('.payload').textContent])",
            json!([]),
        )
        .await
}
