//! Web search over a local fixture corpus (no network): not discoverable,
//! pinned only on the web profile, where every request carries it.

use std::sync::OnceLock;

use chalie_core::{
    Params, ToolResult, Turn, ability, contracts::Fields, contracts::Format, contracts::ItemShape,
    contracts::MaxChars, contracts::TopK, contracts::cap_result, contracts::list_body,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::state::Scratch;
use crate::text::{keyword_score, words};

#[derive(Deserialize)]
struct Corpus {
    pages: Vec<Page>,
}

#[derive(Deserialize)]
struct Page {
    url: String,
    title: String,
    text: String,
}

fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        // The fixture ships with the crate and a test parses it.
        serde_json::from_str(include_str!("../data/web/pages.json"))
            .unwrap_or_else(|error| panic!("data/web/pages.json is valid: {error}"))
    })
}

/// Parameters of [`web_search()`].
#[derive(Params)]
pub struct WebSearchParams {
    /// What to search the web for, e.g. `Rome weather in March`.
    pub query: String,
    /// How many results, 1 to 50; default 10.
    pub top_k: TopK,
    /// `concise` (`url`, `title`) or `detailed` (also `snippet`); default `concise`.
    pub format: Format,
    /// Only these keys of each result, e.g. `["url"]`; default the format's keys.
    pub fields: Option<Fields>,
}

/// A result's keys, and those `format: concise` keeps.
const RESULT_SHAPE: ItemShape = ItemShape::new(&["url", "title", "snippet"], &["url", "title"]);

/// Searches the web and returns result pages: `items` with `url` and
/// `title` (and a `snippet` when `detailed`), best first. Use it only when the user's notes and
/// memory lack the answer and the user wants outside information; read a
/// result with `web_page`. It sends the query to a search service, so
/// never put private details in it.
#[ability(
    version = "1.1.0",
    effect = read,
    toolset = "web",
    discoverable = false,
    tooltip = "Search the web",
    examples = [
        "search the web for Rome in March",
        "look up how vector search works",
        "find a guide to eating in Trastevere",
        "what does the internet say about caching embeddings",
        "google the Malta airport check-in times",
        "find articles on tool discovery",
    ],
)]
pub async fn web_search(params: WebSearchParams) -> ToolResult {
    let query_words = words(&params.query);
    let mut hits: Vec<(f32, &Page)> = corpus()
        .pages
        .iter()
        .map(|page| {
            (
                keyword_score(&query_words, &format!("{} {}", page.title, page.text)),
                page,
            )
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    hits.sort_by(|a, b| b.0.total_cmp(&a.0));
    hits.truncate(params.top_k.get());
    let items: Vec<Value> = hits
        .iter()
        .map(|(_, page)| {
            let snippet: String = page.text.chars().take(140).collect();
            json!({ "url": page.url, "title": page.title, "snippet": snippet })
        })
        .collect();
    let items = match RESULT_SHAPE.apply(params.format, params.fields.as_ref(), items) {
        Ok(items) => items,
        Err(invalid) => return invalid,
    };
    let count = items.len();
    ToolResult::success(list_body(
        items,
        None,
        false,
        Some("read one with web_page"),
    ))
    .with_metadata("count", count)
}

/// Parameters of [`web_page()`].
#[derive(Params)]
pub struct WebPageParams {
    /// The page's `url`, from a `web_search` result.
    pub url: String,
    /// The most characters to return, 200 to 20000; default 4000.
    pub max_chars: MaxChars,
}

/// Reads one web page from a `web_search` result as plain text, at most
/// `max_chars` characters. Use it after `web_search` to read a result.
/// A longer page is cut: the header says `truncated=true` with
/// `next_cursor`; read on with `scratchpad` and that cursor. Only pages
/// the search returned can be read.
#[ability(
    effect = read,
    toolset = "web",
    discoverable = false,
    tooltip = "Read a web page",
    examples = [
        "open that article",
        "read the first result",
        "what does the report say",
        "show me the Trastevere guide",
        "read the page about vector search",
        "open the airport page",
    ],
)]
pub async fn web_page(params: WebPageParams, turn: &Turn) -> ToolResult {
    let scratch = match turn.require::<Scratch>() {
        Ok(scratch) => scratch,
        Err(not_configured) => return not_configured,
    };
    let url = params.url.trim();
    let Some(page) = corpus().pages.iter().find(|page| page.url == url) else {
        return ToolResult::error(
            "unknown-page",
            format!("`{url}` is not a page web_search returned"),
            "search with web_search and pass one result's url exactly",
        );
    };
    turn.report_progress(format!("reading {}", page.title));
    let text = format!("{}\n\n{}", page.title, page.text);
    cap_result(
        ToolResult::success(text),
        params.max_chars.get(),
        url,
        &scratch.pad(turn),
        &scratch.key,
    )
}
