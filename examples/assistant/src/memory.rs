//! Memory: store facts for the turn's user and recall them by topic or
//! place: by keywords and, once the host gave an embedder, by meaning too
//! (hybrid). Preferences and corrections are stored by
//! [`preference`](crate::preferences::preference()) into the same memory.

use chalie_core::turn::Principal;
use chalie_core::{Params, ToolResult, Turn, ability, contracts::TopK, contracts::list_body};
use serde_json::{Value, json};

use crate::text::{keyword_score, words};
use crate::userdata::{Memory, MemoryItem, MemoryKind, owner, store_failed};

/// Semantic matches closer than this cosine similarity count; MiniLM puts
/// unrelated short sentences well below it.
const MIN_SIMILARITY: f32 = 0.35;

/// How much of a hybrid score is the meaning's; the rest is the keywords'.
/// Meaning leads (it finds what shares no word with the query), keywords
/// break near ties in favour of the user's own words.
const SEMANTIC_WEIGHT: f32 = 0.7;

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
// 1.1.1: shorter field descriptions; 1.2.0: `kind` and `skill`; 2.0.0: those
// two moved to their own ability (`preference`), found when needed, since
// `memory` is offered on every turn and every token of it is paid each time.
#[ability(
    internal,
    version = "2.0.0",
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
    let owner = match owner(turn, "memory") {
        Ok(owner) => owner,
        Err(refused) => return refused,
    };
    match params.action.as_str() {
        "store" => store_fact(store, owner, params, turn),
        "forget" => forget(store, owner, params.id.unwrap_or_default()),
        _ => recall(store, owner, params, turn),
    }
}

fn store_fact(store: &Memory, owner: &Principal, params: MemoryParams, turn: &Turn) -> ToolResult {
    let content = params.content.unwrap_or_default();
    let location = params.location.filter(|place| !place.trim().is_empty());
    remember(
        store,
        owner,
        &content,
        location,
        MemoryKind::Fact,
        None,
        turn,
    )
}

/// Keeps `content` in the user's memory as `kind` (embedded when the host
/// has an embedder): the one way `memory` and `preference` store.
pub(crate) fn remember(
    store: &Memory,
    owner: &Principal,
    content: &str,
    location: Option<String>,
    kind: MemoryKind,
    skill: Option<String>,
    turn: &Turn,
) -> ToolResult {
    let content = content.trim().to_owned();
    if content.is_empty() {
        return ToolResult::error(
            "empty-content",
            "there is nothing to remember: `content` is empty",
            "pass what to remember as content, in the user's words",
        );
    }
    let vector = store.embedder.as_ref().and_then(|embedder| {
        turn.report_progress("embedding the memory");
        embedder
            .embed_batch(&[content.as_str()])
            .ok()
            .and_then(|mut vectors| vectors.pop())
    });
    let item = MemoryItem {
        id: 0,
        content,
        location,
        kind,
        skill: skill.filter(|skill| !skill.trim().is_empty()),
        stored_at: turn.now(),
        vector,
    };
    match store.store(owner, &item) {
        Ok(id) => ToolResult::success(json!({ "stored": id, "summary": "remembered" })),
        Err(error) => store_failed(&error),
    }
}

fn forget(store: &Memory, owner: &Principal, id: u32) -> ToolResult {
    match store.forget(owner, u64::from(id)) {
        Ok(true) => ToolResult::success(json!({ "forgotten": id })),
        // Another user's memory reads the same as a missing one.
        Ok(false) => ToolResult::error(
            "unknown-memory",
            format!("there is no memory {id}"),
            "recall first and pass the `id` of the memory to forget",
        ),
        Err(error) => store_failed(&error),
    }
}

fn recall(store: &Memory, owner: &Principal, params: MemoryParams, turn: &Turn) -> ToolResult {
    let query = params.query.filter(|query| !query.trim().is_empty());
    let place = params.location.filter(|place| !place.trim().is_empty());
    if query.is_none() && place.is_none() {
        return ToolResult::error(
            "no-query-or-location",
            "recall needs a query, a location, or both",
            "pass query to search by topic, or location to filter by place",
        );
    }
    let items = match store.items(owner) {
        Ok(items) => items,
        Err(error) => return store_failed(&error),
    };
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
        Some(query) => hybrid_scores(store, owner, query, about_place, turn),
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
                "kind": item.kind,
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

/// Each memory's score for `query` and the method: `hybrid` (meaning and
/// keywords) when the host has an embedder, `keyword` otherwise. A
/// memory stored before the embedder was configured is embedded now, once,
/// and kept with its vector.
fn hybrid_scores(
    store: &Memory,
    owner: &Principal,
    query: &str,
    mut items: Vec<MemoryItem>,
    turn: &Turn,
) -> (Vec<(f32, MemoryItem)>, &'static str) {
    let query_words = words(query);
    let keyword = |item: &MemoryItem| {
        let haystack = format!(
            "{} {}",
            item.content,
            item.location.clone().unwrap_or_default()
        );
        keyword_score(&query_words, &haystack)
    };
    let query_vector = store.embedder.as_ref().and_then(|embedder| {
        embed_missing(store, owner, embedder.as_ref(), &mut items, turn);
        turn.report_progress("embedding the query");
        embedder.embed_batch(&[query]).ok()?.pop()
    });
    let Some(query_vector) = query_vector else {
        let scored = items
            .into_iter()
            .filter_map(|item| {
                let score = keyword(&item);
                (score > 0.0).then_some((score, item))
            })
            .collect();
        return (scored, "keyword");
    };
    let scored = items
        .into_iter()
        .filter_map(|item| {
            let words = keyword(&item);
            // Vectors are unit length, so the dot product is the cosine.
            let meaning = item.vector.as_ref().map_or(0.0, |vector| {
                vector.iter().zip(&query_vector).map(|(a, b)| a * b).sum()
            });
            let relevant = meaning >= MIN_SIMILARITY || words > 0.0;
            let score = SEMANTIC_WEIGHT * meaning.max(0.0) + (1.0 - SEMANTIC_WEIGHT) * words;
            relevant.then_some((score, item))
        })
        .collect();
    (scored, "hybrid")
}

/// Embeds the memories that have no vector yet and writes them back, so
/// memories kept before the host had an embedder are recalled by meaning
/// from now on. A failure leaves them to keywords.
fn embed_missing(
    store: &Memory,
    owner: &Principal,
    embedder: &dyn chalie_index::Embedder,
    items: &mut [MemoryItem],
    turn: &Turn,
) {
    let missing: Vec<usize> = (0..items.len())
        .filter(|&index| items[index].vector.is_none())
        .collect();
    if missing.is_empty() {
        return;
    }
    turn.report_progress("embedding earlier memories");
    let texts: Vec<&str> = missing
        .iter()
        .map(|&index| items[index].content.as_str())
        .collect();
    let Ok(vectors) = embedder.embed_batch(&texts) else {
        return;
    };
    for (index, vector) in missing.into_iter().zip(vectors) {
        items[index].vector = Some(vector);
        // Kept for the next recall; failing to keep it costs only time.
        let _ = store.put(owner, &items[index]);
    }
}
