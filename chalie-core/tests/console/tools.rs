//! The Tools view: each ability's five descriptors, its definition per
//! provider with the tokens it costs, and the discovery playground.

use chalie_core::descriptor::{AssembleOptions, Provider, assemble};
use chalie_core::session::Reply;
use serde_json::{Value, json};

use crate::server::{ALICE, registry, serve};
use crate::webdriver::launch;
use crate::{screenshot_path, sign_in};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_view_shows_descriptors_token_counts_and_discovery() {
    let app = serve(Vec::<Reply>::new()).await;
    // The routes answer only a signed-in caller, and say how to ask.
    let http = reqwest::Client::new();
    let anonymous = http.get(format!("{}/ai/tools", app.base)).send().await;
    assert_eq!(anonymous.unwrap().status(), 401);
    let empty = http
        .get(format!("{}/ai/tools/discover?q=%20", app.base))
        .bearer_auth(ALICE)
        .send()
        .await
        .unwrap();
    assert_eq!(empty.status(), 422);

    let Some(browser) = launch().await else {
        return;
    };
    sign_in(&browser, &app, ALICE, "alice").await;
    browser.click("#nav-tools").await;
    browser
        .find("#tool-list article[data-tool=delete_task]")
        .await;

    let bpe = tiktoken_rs::o200k_base().unwrap();
    let options = AssembleOptions::for_channel(chalie_core::Channel::Chat);
    for entry in registry().iter() {
        let spec = entry.spec();
        let article = format!("#tool-list article[data-tool={}]", spec.name());
        let shown = browser
            .eval(
                "const a = document.querySelector(arguments[0]); return { \
                 dd: [...a.querySelectorAll('dl > dd')].map(d => d.textContent), \
                 examples: [...a.querySelectorAll('dl > dd li')].map(l => l.textContent), \
                 effect: a.querySelector('h3 .badge').textContent, \
                 tokens: Object.fromEntries([...a.querySelectorAll('tr[data-provider]')].map(r => [r.dataset.provider, r.querySelector('.count').textContent])) }",
                json!([article]),
            )
            .await;
        assert_eq!(shown["dd"][0], spec.summary());
        let tooltip = if spec.tooltip().is_empty() {
            "—"
        } else {
            spec.tooltip()
        };
        assert_eq!(shown["dd"][1], tooltip);
        assert_eq!(shown["examples"], json!(spec.examples()));
        let effect = format!("{:?}", spec.effect()).to_lowercase();
        assert_eq!(shown["effect"], effect);
        let descriptor = assemble(entry, options);
        for (provider, key) in [
            (Provider::OpenAiChat, "openai_chat"),
            (Provider::Anthropic, "anthropic"),
            (Provider::Gemini, "gemini"),
        ] {
            let tokens = bpe
                .encode_ordinary(&descriptor.render(provider).to_string())
                .len();
            assert_eq!(
                shown["tokens"][key],
                tokens.to_string(),
                "{key} of {}",
                spec.name()
            );
        }
    }

    browser
        .type_into("#discover-q", "delete the rent task\u{E007}")
        .await;
    browser
        .find("#discover-result .rung[data-rung=words]")
        .await;
    assert_eq!(
        browser.text("#discover-result .activated strong").await,
        "delete_task"
    );
    let row: Value = browser
        .eval(
            "return [...document.querySelectorAll('#discover-result tr[data-candidate=delete_task] td')].map(td => td.textContent)",
            json!([]),
        )
        .await;
    assert_eq!(row[1], "0.300", "the ceiling it had to pass");
    assert_eq!(row[3], "yes", "activated");
    browser.screenshot(&screenshot_path("tools")).await;

    // A phone's width: nothing wider than the screen.
    browser.resize(390, 844).await;
    let overflow = browser
        .eval(
            "return document.documentElement.scrollWidth - window.innerWidth",
            json!([]),
        )
        .await;
    assert!(overflow.as_i64().unwrap() <= 0, "{overflow} px too wide");
}
