//! `cargo xtask lint`: no import cycle between the files of any crate
//! (see [`cycles`](crate::cycles)), then: would a model understand every
//! linked ability? That second part is chalie-core's [`lint_command`], the
//! same a user's `Xtask` runs.

use chalie_core::contracts::build::lint_command;

use crate::Outcome;

pub(crate) fn run(args: &[String]) -> Outcome {
    crate::cycles::check()?;
    abilities(args)
}

/// The second part alone, for `cargo xtask test`, which checked the
/// import cycles before its long steps.
pub(crate) fn abilities(args: &[String]) -> Outcome {
    Ok(lint_command(args)?)
}
