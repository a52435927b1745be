//! Reusing observations: within one run, the same read with the same
//! canonical arguments returns the earlier result; a write clears the run.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use crate::{ToolResult, contracts::canonical_json};

/// How many runs per session keep a cache; older runs are forgotten.
const RUNS_KEPT: usize = 4;

/// The reuse key: the tool and its arguments with every object's keys
/// sorted (framework fields are already gone).
pub(crate) fn reuse_key(tool: &str, arguments: &Value) -> String {
    let canonical = canonical_json(arguments);
    let mut key = String::with_capacity(tool.len() + 1 + canonical.len());
    key.push_str(tool);
    key.push('\0');
    key.push_str(&canonical);
    key
}

#[derive(Debug, Default)]
struct RunCache {
    /// Bumped by every write, so a read that ran across a write does not
    /// store what may already be stale.
    generation: u64,
    results: HashMap<String, ToolResult, foldhash::fast::RandomState>,
}

/// The reuse caches of one session's recent runs.
#[derive(Debug, Default)]
pub(crate) struct ReuseRuns {
    runs: VecDeque<(String, RunCache)>,
}

impl ReuseRuns {
    fn run(&mut self, run_id: &str) -> &mut RunCache {
        let position = match self.runs.iter().position(|(id, _)| id == run_id) {
            Some(position) => position,
            None => {
                if self.runs.len() == RUNS_KEPT {
                    self.runs.pop_front();
                }
                self.runs
                    .push_back((run_id.to_owned(), RunCache::default()));
                self.runs.len() - 1
            }
        };
        &mut self.runs[position].1
    }

    /// The earlier result for `key` in `run_id`, or the generation to
    /// store a new one under.
    pub(crate) fn lookup(&mut self, run_id: &str, key: &str) -> Result<ToolResult, u64> {
        let run = self.run(run_id);
        match run.results.get(key) {
            Some(result) => Ok(result.clone()),
            None => Err(run.generation),
        }
    }

    /// Stores a read's result unless a write happened since `generation`.
    pub(crate) fn store(&mut self, run_id: &str, key: String, generation: u64, result: ToolResult) {
        let run = self.run(run_id);
        if run.generation == generation {
            run.results.insert(key, result);
        }
    }

    /// A write: forget every observation of the run.
    pub(crate) fn invalidate(&mut self, run_id: &str) {
        if let Some((_, run)) = self.runs.iter_mut().find(|(id, _)| id == run_id) {
            run.generation += 1;
            run.results.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_sorted_at_every_depth() {
        let a = json!({ "b": 1, "a": { "y": [1, { "q": 2, "p": 1 }], "x": "s" } });
        let b = json!({ "a": { "x": "s", "y": [1, { "p": 1, "q": 2 }] }, "b": 1 });
        assert_eq!(reuse_key("t", &a), reuse_key("t", &b));
        assert_ne!(reuse_key("t", &a), reuse_key("u", &a));
    }
}
