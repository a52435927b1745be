//! The console in a real headless Chromium (the distribution's package,
//! installed by `cargo xtask browser`), driven over WebDriver against an
//! app served in-process: sign-in, streaming, tool cards, approvals, a
//! reload, plans, the policy manager, the Tools view, and one user's
//! sessions kept from another.
//!
//! Without Chromium the tests pass with a loud message, except in CI (`CI`
//! set), where a missing browser fails them.

// A failed unwrap is a failed test, which is what a test should do.
#![allow(clippy::unwrap_used)]

mod abilities;
mod chat;
mod isolation;
mod plans;
mod policy;
mod server;
mod tools;
mod webdriver;

use std::path::PathBuf;

use server::App;
use webdriver::Browser;

/// Opens the console and signs in with `token`.
pub async fn sign_in(browser: &Browser, app: &App, token: &str, principal: &str) {
    browser.goto(&format!("{}/", app.base)).await;
    browser.type_into("#token", token).await;
    browser.click("#sign-in-form button[type=submit]").await;
    browser
        .wait(
            "the signed-in principal",
            &format!(
                "return document.getElementById('principal').textContent === 'Signed in as {principal}'"
            ),
        )
        .await;
}

/// Opens a new session from the Chat view; returns its id.
pub async fn new_session(browser: &Browser) -> String {
    let before = browser
        .eval(
            "return document.getElementById('session-id').textContent",
            serde_json::json!([]),
        )
        .await;
    browser.click("#new-session").await;
    let script = format!(
        "const id = document.getElementById('session-id').textContent; return id !== {before} && id"
    );
    browser
        .wait("a new session", &script)
        .await
        .as_str()
        .unwrap()
        .to_owned()
}

/// Sends `text` from the composer (Enter sends).
pub async fn send(browser: &Browser, text: &str) {
    browser
        .type_into("#message", &format!("{text}\u{E007}"))
        .await;
}

/// Where a view's screenshot goes: the README's images under
/// `CHALIE_BLESS=1`, the build's scratch space otherwise (a test run leaves
/// the working tree as it was).
pub fn screenshot_path(view: &str) -> PathBuf {
    let name = format!("console-{view}.png");
    if std::env::var_os("CHALIE_BLESS").is_some() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../docs")
            .join(name)
    } else {
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
    }
}

/// The status a card of `tool` shows, once it shows `status`.
pub async fn wait_card(browser: &Browser, tool: &str, status: &str) {
    let script = format!(
        "return [...document.querySelectorAll('#messages .card[data-tool=\"{tool}\"]')].some(c => c.dataset.status === '{status}')"
    );
    browser
        .wait(&format!("a {tool} card {status}"), &script)
        .await;
}
