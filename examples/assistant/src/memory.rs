//! Memory: store facts and recall them by topic or place; semantic when
//! the host gave an embedder, by keywords otherwise.

use chalie_core::{Params, ToolResult, Turn, ability, contracts::TopK, contracts::list_body};
use serde_json::{Value, json};

use crate::state::{Memory, MemoryItem, lock};
use crate::text::{keyword_score, words};

/// Semantic matches closer than this cosine similarity are kept; MiniLM
/// puts unrelated short sentences well below it.
const MIN_SIMILARITY: f32 = 0.35;

/// Parameters of [`memory()`].
#[derive(Params)]
pub struct MemoryParams {
    /// `store` a fact, `recall` facts or `forget` one.
    pub action: String,
    /// The fact to remember, in the user's words.
    pub content: Option<String>,
    /// A place: where the fact applies, or (`recall`) only facts about it.
    pub location: Option<String>,
    /// What to look for (`recall`).
    pub query: Option<String>,
    /// The memory to forget, from a `recall` result.
    pub id: Option<u32>,
    /// Most memories to recall, 1 to 50; default 10.
    pub top_k: TopK,
}

/// Stores facts the user asks to remember and recalls them by topic or by
/// place. Use `recall` before answering about their own life or plans,
/// `forget` when they take something back.
// 1.1.0: the lock's first `memory` (1.0.0) had no `forget`, `id` or `top_k`;
// 1.1.1: shorter field descriptions.
#[ability(
    internal,
    version = "1.1.1",
    toolset = "memory",
    actions(store = [content], recall = [], forget = [id]),
    examples = [
        "remember that my sister's birthday is in May",
        "what did I tell you about my car",
        "note that I prefer window seats",
        "do you remember my dentist's name",
        "what do you know about my trip to Rome",
        "forget what I said about the hotel",
    ],
)]
pub async fn memory(params: MemoryParams, turn: &Turn) -> ToolResult {
    let store = match turn.require::<Memory>() {
        Ok(store) => store,
        Err(not_configured) => return not_configured,
    };
    match params.action.as_str() {
        "store" => store_fact(store, params, turn),
        "forget" => forget(store, params.id.unwrap_or_default()),
        _ => recall(store, params, turn),
    }
}

fn store_fact(store: &Memory, params: MemoryParams, turn: &Turn) -> ToolResult {
    let content = params.content.unwrap_or_default().trim().to_owned();
    if content.is_empty() {
        return ToolResult::error(
            "empty-content",
            "there is nothing to remember: `content` is empty",
            "pass the fact to remember as content, in the user's words",
        );
    }
    let vector = store.embedder.as_ref().and_then(|embedder| {
        turn.report_progress("embedding the memory");
        embedder
            .embed_batch(&[content.as_str()])
            .ok()
            .and_then(|mut vectors| vectors.pop())
    });
    let mut items = lock(&store.items);
    let id = items.iter().map(|item| item.id).max().unwrap_or(0) + 1;
    items.push(MemoryItem {
        id,
        content,
        location: params.location.filter(|place| !place.trim().is_empty()),
        stored_at: turn.now(),
        vector,
    });
    ToolResult::success(json!({ "stored": id, "summary": "remembered" }))
}

fn forget(store: &Memory, id: u32) -> ToolResult {
    let mut items = lock(&store.items);
    let before = items.len();
    items.retain(|item| item.id != id);
    if items.len() == before {
        return ToolResult::error(
            "unknown-memory",
            format!("there is no memory {id}"),
            "recall first and pass the `id` of the memory to forget",
        )
        .with_valid_values(items.iter().map(|item| item.id.to_string()));
    }
    ToolResult::success(json!({ "forgotten": id }))
}

fn recall(store: &Memory, params: MemoryParams, turn: &Turn) -> ToolResult {
    let query = params.query.filter(|query| !query.trim().is_empty());
    let place = params.location.filter(|place| !place.trim().is_empty());
    if query.is_none() && place.is_none() {
        return ToolResult::error(
            "no-query-or-location",
            "recall needs a query, a location, or both",
            "pass query to search by topic, or location to filter by place",
        );
    }
    let items = lock(&store.items).clone();
    let about_place: Vec<MemoryItem> = items
        .into_iter()
        .filter(|item| {
            place.as_deref().is_none_or(|place| {
                item.location
                    .as_deref()
                    .is_some_and(|at| at.eq_ignore_ascii_case(place.trim()))
            })
        })
        .collect();
    let (mut scored, method) = match &query {
        None => (
            about_place.into_iter().map(|item| (1.0, item)).collect(),
            "location",
        ),
        Some(query) => match semantic_scores(store, query, &about_place, turn) {
            Some(scored) => (scored, "semantic"),
            None => (keyword_scores(query, about_place), "keyword"),
        },
    };
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.id.cmp(&b.1.id)));
    scored.truncate(params.top_k.get());
    let found: Vec<Value> = scored
        .into_iter()
        .map(|(score, item)| {
            json!({
                "id": item.id,
                "content": item.content,
                "location": item.location,
                "score": (score * 100.0).round() / 100.0,
            })
        })
        .collect();
    let summary = match (found.is_empty(), method) {
        (true, _) => "nothing remembered matches; say so rather than guess".to_owned(),
        (false, method) => format!("matched by {method}"),
    };
    let mut body = list_body(found, None, false, Some(&summary));
    body["method"] = json!(method);
    let count = body["count"].clone();
    ToolResult::success(body).with_metadata("count", count.as_u64().unwrap_or(0))
}

/// Cosine similarity of the query to each memory, when every memory has a
/// vector; `None` to fall back to keywords.
fn semantic_scores(
    store: &Memory,
    query: &str,
    items: &[MemoryItem],
    turn: &Turn,
) -> Option<Vec<(f32, MemoryItem)>> {
    let embedder = store.embedder.as_ref()?;
    if items.iter().any(|item| item.vector.is_none()) {
        return None;
    }
    turn.report_progress("embedding the query");
    let query_vector = embedder.embed_batch(&[query]).ok()?.pop()?;
    Some(
        items
            .iter()
            .filter_map(|item| {
                let vector = item.vector.as_ref()?;
                // Vectors are unit length, so the dot product is the cosine.
                let similarity: f32 = vector.iter().zip(&query_vector).map(|(a, b)| a * b).sum();
                (similarity >= MIN_SIMILARITY).then(|| (similarity, item.clone()))
            })
            .collect(),
    )
}

fn keyword_scores(query: &str, items: Vec<MemoryItem>) -> Vec<(f32, MemoryItem)> {
    let query_words = words(query);
    items
        .into_iter()
        .filter_map(|item| {
            let haystack = format!(
                "{} {}",
                item.content,
                item.location.clone().unwrap_or_default()
            );
            let score = keyword_score(&query_words, &haystack);
            (score > 0.0).then_some((score, item))
        })
        .collect()
}
