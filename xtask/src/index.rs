//! `cargo xtask index`, `eval` and `fetch-model`: chalie-index's library entry, the same one a
//! user's own xtask calls, over the abilities linked into this binary.

use chalie_index::xtask::Xtask;

/// The assistant's playbooks, which it also ships inside its binary.
pub(crate) const SKILLS_DIR: &str = "examples/assistant/skills";

/// The discovery task of this workspace: the index the assistant and the MCP server open,
/// at the default folder (`.chalie/index`).
pub(crate) fn task() -> Xtask {
    Xtask::new(crate::project_root()).skills(SKILLS_DIR)
}

/// The assistant's golden requests: user phrasings of what its abilities serve, none a copy
/// of an example phrase, and requests none serves.
pub(crate) const GOLDEN_SET: &str = "examples/assistant/eval/golden.jsonl";

/// The retrieval gate `cargo xtask golden` (and so `cargo xtask test`) applies to
/// [`GOLDEN_SET`] when given no file. Measured with all-MiniLM-L6-v2: recall@5 0.925 (62 of
/// 67) and abstention 0.667 (16 of 24); each threshold leaves one request of slack.
const GOLDEN_GATE: [&str; 4] = ["--min-recall", "0.90", "--min-abstention", "0.625"];

/// Runs `command` with `args` through the library entry; `golden` alone runs the
/// assistant's set against its gate.
pub(crate) fn run(command: &str, args: &[String]) -> crate::Outcome {
    let args: Vec<String> = if command == "golden" && args.is_empty() {
        std::iter::once(GOLDEN_SET)
            .chain(GOLDEN_GATE)
            .map(str::to_owned)
            .collect()
    } else {
        args.to_vec()
    };
    let args = std::iter::once(command.to_owned()).chain(args);
    Ok(task().run(args)?)
}
