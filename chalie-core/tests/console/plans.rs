//! A plan collected in `plan_collect`, shown with "In plan" on its card,
//! then executed from the console: the write runs once, only then.

use chalie_core::session::{Mode, Reply};
use serde_json::json;

use crate::abilities::done;
use crate::server::{ALICE, serve};
use crate::webdriver::launch;
use crate::{new_session, send, sign_in, wait_card};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_collect_gathers_a_write_and_execute_runs_it() {
    let Some(browser) = launch().await else {
        return;
    };
    let app = serve(vec![
        Reply::tool_call("rename_task", json!({ "id": 7, "title": "bills" })),
        Reply::text("The plan has one step."),
        Reply::text("Renamed."),
    ])
    .await;
    sign_in(&browser, &app, ALICE, "alice").await;
    let session = new_session(&browser).await;
    browser.click("#mode option[value=plan_collect]").await;
    browser
        .wait(
            "the mode change",
            "return document.getElementById('status').textContent === 'Mode: plan_collect'",
        )
        .await;
    assert_eq!(app.sessions.mode(&session).unwrap(), Mode::PlanCollect);

    send(&browser, "rename task 7 to bills").await;
    wait_card(&browser, "rename_task", "completed").await;
    browser
        .wait(
            "the plan",
            "return !document.getElementById('plan').hidden && document.querySelectorAll('#plan-steps li').length === 1",
        )
        .await;
    let badge = "#messages .card[data-tool=rename_task] .in-plan";
    browser
        .wait(
            "the In plan badge",
            &format!("return !document.querySelector('{badge}').hidden"),
        )
        .await;
    assert_eq!(browser.text(badge).await, "In plan");
    assert_eq!(
        browser.text("#plan-steps li code").await,
        "rename_task",
        "the step names its tool"
    );
    assert!(done(&session).is_empty(), "collected, not run");

    browser.click("#plan-execute").await;
    browser
        .wait(
            "the executed step",
            "return [...document.querySelectorAll('#messages .card[data-tool=rename_task]')].some(c => c.dataset.status === 'completed' && !c.dataset.inPlan)",
        )
        .await;
    browser
        .wait(
            "the execution run's end",
            "return [...document.querySelectorAll('#messages li.assistant')].every(li => li.dataset.done === 'true')",
        )
        .await;
    assert_eq!(done(&session), ["rename:7:bills"], "ran once");
    assert!(
        browser
            .eval("return document.getElementById('plan').hidden", json!([]))
            .await
            .as_bool()
            .unwrap(),
        "the plan is gone once executed"
    );
}
