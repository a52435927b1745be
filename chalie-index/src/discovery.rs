//! [`Discovery`]: the index as host state, the extension `find_tools` and `find_skills`
//! read, and the context-safe bodies they return.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use chalie_core::{
    Registry, ToolResult, Turn, contracts::Profile, descriptor::AssembleOptions,
    descriptor::assemble,
};
use serde_json::{Value, json};

use crate::descriptor::{Descriptor, Source};
use crate::embed::Embedder;
use crate::error::IndexError;
use crate::find::{FindOptions, FindOutcome, Scope};
use crate::index::Index;

/// Personalisation rules for skills, e.g. the user's standing preferences, supplied by the
/// host and appended to each playbook `find_skills` returns.
pub trait SkillRules: Send + Sync {
    /// The rules of each skill in `skills` on this turn, in the same order: one list per
    /// skill, empty for none. Asked once per `find_skills` call with every skill it found,
    /// so a host reads the user's rules once, not once per playbook. A list missing at the
    /// end reads as no rules for those skills.
    fn rules(&self, skills: &[&str], turn: &Turn) -> Vec<Vec<String>>;
}

/// The discovery index as the host hands it to `find_tools` and `find_skills`: give one to
/// the dispatcher with `DispatcherBuilder::extension(discovery)`.
///
/// Opening never fails here: an index that is missing, corrupt or stale is kept as its
/// error, and every call answers with that error's code (`index-missing`, `index-corrupt`,
/// `index-stale`) and a hint, so the assistant keeps running and the model is told why
/// discovery is unavailable. Check [`Discovery::error`] at start-up to log it.
#[derive(Clone)]
pub struct Discovery {
    index: Result<Arc<Index>, Arc<IndexError>>,
    rules: Option<Arc<dyn SkillRules>>,
    /// Local abilities and external tools the profile does not expose; never returned.
    hidden: HashSet<String>,
}

impl std::fmt::Debug for Discovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Discovery")
            .field("index", &self.index)
            .field("hidden", &self.hidden.len())
            .finish_non_exhaustive()
    }
}

impl Discovery {
    /// Discovery over an index already opened.
    pub fn new(index: Arc<Index>) -> Discovery {
        Discovery {
            index: Ok(index),
            rules: None,
            hidden: HashSet::new(),
        }
    }

    /// Opens (and verifies) the index at `dir`; a failure is kept, see [`Discovery`].
    pub fn open(dir: &Path, embedder: Arc<dyn Embedder>) -> Discovery {
        Discovery::from_result(Index::open(dir, embedder))
    }

    /// Like [`Discovery::open`], and also `index-stale` unless the index was built from
    /// exactly the abilities of `registry` (skills and external tools are not compared).
    pub fn open_linked(dir: &Path, embedder: Arc<dyn Embedder>, registry: &Registry) -> Discovery {
        let linked = Descriptor::from_registry(registry);
        Discovery::from_result(
            Index::open(dir, embedder).and_then(|index| index.check_local(&linked).map(|()| index)),
        )
    }

    /// Discovery that answers every call with `error`.
    pub fn unavailable(error: IndexError) -> Discovery {
        Discovery {
            index: Err(Arc::new(error)),
            rules: None,
            hidden: HashSet::new(),
        }
    }

    fn from_result(result: Result<Index, IndexError>) -> Discovery {
        match result {
            Ok(index) => Discovery::new(Arc::new(index)),
            Err(error) => Discovery::unavailable(error),
        }
    }

    /// Appends `rules` to the playbooks `find_skills` returns.
    pub fn with_skill_rules(mut self, rules: impl SkillRules + 'static) -> Discovery {
        self.rules = Some(Arc::new(rules));
        self
    }

    /// Returns only the local abilities and external tools `profile` exposes: an ability by
    /// its toolset or the core, an external tool by its server or its name
    /// ([`Profile::allows_external`]), the rule the dispatcher applies to what `find_tools`
    /// activates on a channel with that profile. Skills are not governed by profiles.
    pub fn with_profile(mut self, profile: &Profile) -> Discovery {
        if let Ok(index) = &self.index {
            self.hidden = index
                .entries
                .iter()
                .filter(|e| match &e.source {
                    Source::Local => !profile.is_core(&e.name) && !profile.enables(&e.toolset),
                    Source::External { .. } => !profile.allows_external(&e.qualified),
                    Source::Skill => false,
                })
                .map(|e| e.qualified.clone())
                .collect();
        }
        self
    }

    /// The index, or why it is unavailable.
    pub fn index(&self) -> Result<&Index, &IndexError> {
        self.index.as_deref().map_err(|e| &**e)
    }

    /// Why the index is unavailable, if it is.
    pub fn error(&self) -> Option<&IndexError> {
        self.index.as_ref().err().map(|e| &**e)
    }

    #[allow(clippy::result_large_err)] // the error is the result the ability returns
    /// The options every search of this discovery runs with.
    pub(crate) fn find_options(&self, scope: Scope) -> FindOptions {
        FindOptions {
            scope,
            exclude: self.hidden.clone(),
            ..FindOptions::default()
        }
    }

    fn find(&self, queries: &[String], scope: Scope) -> Result<(&Index, FindOutcome), ToolResult> {
        let index = self.index().map_err(error_result)?;
        let options = self.find_options(scope);
        let outcome = index
            .find(queries, &options)
            .map_err(|e| error_result(&e))?;
        Ok((index, outcome))
    }

    /// What `find_tools` answers: activates the injected abilities on `turn` and returns
    /// `{"injected":[{"name","summary","parameters"}],"suggested":[{"name","summary"}],
    /// "not_found":[…],"ambiguous":[…]}`. `suggested` (present when not empty) names the
    /// runners-up the index showed but did not activate ([`crate::FindOutcome::suggested`]),
    /// each with its summary's first sentence; asking `find_tools` for one by its exact name
    /// activates it.
    /// Where the turn offers what it activates in its next request
    /// ([`Turn::offers_activated_tools`], a session's turns) the model reads the tool's whole
    /// definition there, a linked ability's or an external tool's alike, so its entry is
    /// only its name and its summary's first sentence ([`chalie_rules::first_sentence`]):
    /// nothing is paid for twice. Elsewhere (an MCP client calling through the proxy) each
    /// entry carries the whole summary and parameters.
    pub fn find_tools(&self, queries: &[String], turn: &Turn) -> ToolResult {
        let (index, outcome) = match self.find(queries, Scope::Abilities) {
            Ok(found) => found,
            Err(error) => return error,
        };
        let offered_next = turn.offers_activated_tools();
        let options = AssembleOptions::for_channel(turn.channel());
        let registry = chalie_core::registry().ok();
        let injected: Vec<Value> = outcome
            .injected
            .iter()
            .map(|hit| {
                if offered_next && hit.source != Source::Skill {
                    // The next request's tool list carries the whole definition, summary
                    // included: here a line says what the tool is, and nothing is paid twice.
                    return json!({
                        "name": hit.name,
                        "summary": chalie_rules::first_sentence(&hit.summary),
                    });
                }
                // A local ability's schema comes from the registry, exactly what the
                // dispatcher validates against; an external one's from its descriptor.
                let live = (hit.source == Source::Local)
                    .then(|| registry.and_then(|r| r.get(&hit.name)))
                    .flatten()
                    .map(|entry| assemble(entry, options).parameters().clone());
                let parameters = live
                    .or_else(|| index.parameters_of(&hit.name).cloned())
                    .unwrap_or_else(|| json!({ "type": "object", "properties": {} }));
                json!({ "name": hit.name, "summary": hit.summary, "parameters": parameters })
            })
            .collect();
        turn.activate_tools(outcome.injected.iter().map(|hit| hit.name.clone()));
        respond(injected, &outcome)
    }

    /// What `find_skills` answers: `{"injected":[{"name","summary","playbook","rules"}],
    /// "not_found":[…]}`, the playbook in full and the host's rules for this turn.
    pub fn find_skills(&self, queries: &[String], turn: &Turn) -> ToolResult {
        let (index, outcome) = match self.find(queries, Scope::Skills) {
            Ok(found) => found,
            Err(error) => return error,
        };
        // The host's rules for every hit at once: one read of the user's rules per call.
        let names: Vec<&str> = outcome
            .injected
            .iter()
            .map(|hit| hit.name.as_str())
            .collect();
        let mut rules = match &self.rules {
            Some(host) if !names.is_empty() => host.rules(&names, turn).into_iter(),
            _ => Vec::new().into_iter(),
        };
        let injected: Vec<Value> = outcome
            .injected
            .iter()
            .map(|hit| {
                let rules = rules.next().unwrap_or_default();
                json!({
                    "name": hit.name,
                    "summary": hit.summary,
                    "playbook": index.playbook_of(&hit.name).unwrap_or_default(),
                    "rules": rules,
                })
            })
            .collect();
        respond(injected, &outcome)
    }
}

fn respond(injected: Vec<Value>, outcome: &FindOutcome) -> ToolResult {
    let count = injected.len();
    let mut body = json!({ "injected": injected, "not_found": outcome.not_found });
    if !outcome.suggested.is_empty() {
        // Named, not activated: a line each, for the model to ask for by exact name.
        body["suggested"] = outcome
            .suggested
            .iter()
            .map(|hit| {
                json!({
                    "name": hit.name,
                    "summary": chalie_rules::first_sentence(&hit.summary),
                })
            })
            .collect();
        body["hint"] =
            json!("not added yet: call find_tools with a suggested tool's exact name to add it");
    }
    if !outcome.ambiguous.is_empty() {
        // Refused entries say which qualified names to ask for instead of being guessed.
        body["ambiguous"] = json!(outcome.ambiguous);
    }
    let result = ToolResult::success(body).with_metadata("injected", count);
    let result = if outcome.suggested.is_empty() {
        result
    } else {
        result.with_metadata("suggested", outcome.suggested.len())
    };
    result
        .with_metadata("not_found", outcome.not_found.len())
        .with_metadata("ambiguous", outcome.ambiguous.len())
}

/// An index error as the model reads it: the index's code and what to do next.
pub(crate) fn error_result(error: &IndexError) -> ToolResult {
    let hint = match error {
        IndexError::Missing { .. } | IndexError::Corrupt { .. } | IndexError::Stale { .. } => {
            "discovery is unavailable until the operator rebuilds the index (`cargo xtask index`); do not retry, carry on with the tools you have"
        }
        IndexError::Embed(_) | IndexError::Search(_) => {
            "retry once; if it fails again, carry on with the tools you have"
        }
        IndexError::InvalidDescriptor { .. }
        | IndexError::DuplicateName { .. }
        | IndexError::Write { .. } => "do not retry; carry on with the tools you have",
    };
    ToolResult::error(
        chalie_core::result::ErrorCode::new(error.code()),
        error.to_string(),
        hint,
    )
}
