//! The app under test, put together as an app would: sessions over a
//! dispatcher and a scripted model, the API under `/ai` with the Tools
//! routes merged in, the console at `/`, two users with bearer tokens.

use std::sync::Arc;

use axum::Router;
use chalie_core::session::{
    BearerTokens, Candidate, CountTokens, Discover, DiscoveryReport, Reply, RungReport,
    ScriptedModel, Sessions, ToolsApi, console, router,
};
use chalie_core::turn::Principal;
use chalie_core::{Channel, Dispatcher, Registry, dispatch::Policy, dispatch::Setting};

/// Alice's token (she may change the policy) and Bob's, as the deployment
/// configured them.
pub const ALICE: &str = "alice-0123456789abcdef0123456789abcdef";
pub const BOB: &str = "bob-0123456789abcdef0123456789abcdef00";

/// Every test ability, allowed on a chat (the mode still holds writes).
pub const ABILITIES: [&str; 4] = ["list_tasks", "lookup", "delete_task", "rename_task"];

/// A served app: its address, the model it scripts, its sessions.
pub struct App {
    pub base: String,
    pub model: Arc<ScriptedModel>,
    pub sessions: Sessions,
}

pub fn registry() -> Registry {
    chalie_core::registry().unwrap().clone()
}

/// Serves the app on a loopback port; the model answers with `replies`.
pub async fn serve(replies: Vec<Reply>) -> App {
    let model = Arc::new(ScriptedModel::new(replies));
    let mut policy = Policy::new();
    for name in ABILITIES {
        policy.set(Channel::Chat, name, Setting::Allow).unwrap();
    }
    let dispatcher = Dispatcher::builder(registry()).policy(policy).build();
    let sessions = Sessions::builder(Arc::new(dispatcher), model.clone())
        .pinned(ABILITIES)
        .build();
    let tokens = BearerTokens::new()
        .with_admin(ALICE, Principal::new("alice"))
        .unwrap()
        .with(BOB, Principal::new("bob"))
        .unwrap();
    let tools = ToolsApi::new(registry())
        .tokens(O200k(tiktoken_rs::o200k_base().unwrap()))
        .discovery(WordOverlap(registry()));
    let api = router(sessions.clone(), tokens.clone()).merge(tools.router(tokens));
    let app = Router::new().nest("/ai", api).merge(console());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    App {
        base,
        model,
        sessions,
    }
}

/// Counts as `cargo xtask tokens` does.
pub struct O200k(pub tiktoken_rs::CoreBPE);

impl CountTokens for O200k {
    fn count(&self, text: &str) -> usize {
        self.0.encode_ordinary(text).len()
    }
    fn encoding(&self) -> &str {
        "o200k_base"
    }
}

/// The test's stand-in for chalie-index's discovery (which needs the
/// index engine): the name rung, then words shared with an ability's
/// summary and examples as a distance (1 - overlap) under a ceiling.
pub struct WordOverlap(pub Registry);

/// The distance a candidate must be within to be activated.
pub const CEILING: f32 = 0.3;

/// Words too common to say what a request is about.
const STOP: [&str; 8] = ["the", "and", "for", "with", "that", "this", "what", "use"];

fn words(text: &str) -> std::collections::BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.len() > 2 && !STOP.contains(&word.to_lowercase().as_str()))
        .map(str::to_lowercase)
        .collect()
}

impl Discover for WordOverlap {
    fn discover(&self, query: &str) -> Result<DiscoveryReport, String> {
        let asked = words(query);
        let exact: Vec<Candidate> = self
            .0
            .iter()
            .filter(|entry| entry.name() == query.trim())
            .map(|entry| Candidate {
                name: entry.name().into(),
                score: None,
                ceiling: None,
                passes: true,
                activated: true,
            })
            .collect();
        let mut overlap: Vec<Candidate> = self
            .0
            .iter()
            .filter_map(|entry| {
                let spec = entry.spec();
                let known = words(&format!("{} {}", spec.summary(), spec.examples().join(" ")));
                let shared = asked.intersection(&known).count();
                (shared > 0).then(|| {
                    let distance = 1.0 - shared as f32 / asked.len().max(1) as f32;
                    Candidate {
                        name: entry.name().into(),
                        score: Some(distance),
                        ceiling: Some(CEILING),
                        passes: distance <= CEILING,
                        activated: distance <= CEILING,
                    }
                })
            })
            .collect();
        overlap.sort_by(|a, b| a.score.partial_cmp(&b.score).unwrap());
        let activated = exact
            .iter()
            .chain(&overlap)
            .filter(|c| c.activated)
            .map(|c| c.name.clone())
            .collect();
        let suggested = overlap
            .iter()
            .filter(|c| !c.activated)
            .map(|c| c.name.clone())
            .collect();
        Ok(DiscoveryReport {
            query: query.into(),
            rungs: vec![
                RungReport {
                    rung: "exact".into(),
                    candidates: exact,
                },
                RungReport {
                    rung: "words".into(),
                    candidates: overlap,
                },
            ],
            ceiling: format!("{CEILING:.2}"),
            activated,
            suggested,
        })
    }
}
