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

/// Runs `command` with `args` through the library entry.
pub(crate) fn run(command: &str, args: &[String]) -> crate::Outcome {
    let args = std::iter::once(command.to_owned()).chain(args.iter().cloned());
    Ok(task().run(args)?)
}
