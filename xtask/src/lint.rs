//! `cargo xtask lint`: would a model understand every linked ability? The
//! command is chalie-core's [`lint_command`], the same a user's `Xtask`
//! runs.

use chalie_core::contracts::build::lint_command;

use crate::Outcome;

pub(crate) fn run(args: &[String]) -> Outcome {
    Ok(lint_command(args)?)
}
