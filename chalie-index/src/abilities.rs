//! `find_tools` and `find_skills` as plain async functions, ready to be wrapped as chalie
//! abilities: they take the index and the model's query array and return the JSON body the
//! model reads.

use serde_json::{Value, json};

use crate::error::IndexError;
use crate::find::{FindOptions, FindOutcome, Scope};
use crate::index::Index;

fn body(outcome: &FindOutcome) -> Value {
    let injected: Vec<Value> = outcome
        .injected
        .iter()
        .map(|hit| json!({ "name": hit.name, "summary": hit.summary }))
        .collect();
    let mut body = json!({ "injected": injected, "not_found": outcome.not_found });
    if !outcome.ambiguous.is_empty() {
        // Refused entries say which qualified names to ask for instead of being guessed.
        body["ambiguous"] = json!(outcome.ambiguous);
    }
    body
}

/// Abilities (local and external) for each query entry:
/// `{"injected":[{"name","summary"}],"not_found":[entries]}` (plus `ambiguous` when any).
/// The caller activates the injected names for the rest of the turn.
pub async fn find_tools(index: &Index, queries: &[String]) -> Result<Value, IndexError> {
    let options = FindOptions {
        scope: Scope::Abilities,
        ..FindOptions::default()
    };
    Ok(body(&index.find(queries, &options)?))
}

/// Skill playbooks for each query entry, in the same shape as [`find_tools`].
pub async fn find_skills(index: &Index, queries: &[String]) -> Result<Value, IndexError> {
    let options = FindOptions {
        scope: Scope::Skills,
        ..FindOptions::default()
    };
    Ok(body(&index.find(queries, &options)?))
}
