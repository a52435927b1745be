//! Session modes: whether writes run now, after a human approves, or later
//! as a plan.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Whether a session's writes run now, after approval, or later as a plan.
/// Reads are never held back by the mode. `internal` only spares a write
/// the approval prompt: an `internal` write is blocked in `plan` and becomes a plan step in
/// `plan_collect` like any write. See [the gate table](crate::session#modes-and-the-permission-gate)
/// for how a mode composes with the permission policy.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Each write asks the human first (`tool.approval_required`).
    #[default]
    Approval,
    /// Writes run at once (a policy `ask` still asks).
    Auto,
    /// Writes are blocked with `plan_mode_read_only`; reads run.
    Plan,
    /// Writes are captured as ordered plan steps, to run later.
    PlanCollect,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 4] = [Mode::Approval, Mode::Auto, Mode::Plan, Mode::PlanCollect];

    /// The mode's name: `approval`, `auto`, `plan`, `plan_collect`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Mode::Approval => "approval",
            Mode::Auto => "auto",
            Mode::Plan => "plan",
            Mode::PlanCollect => "plan_collect",
        }
    }

    const fn to_u8(self) -> u8 {
        match self {
            Mode::Approval => 0,
            Mode::Auto => 1,
            Mode::Plan => 2,
            Mode::PlanCollect => 3,
        }
    }

    const fn from_u8(value: u8) -> Mode {
        match value {
            1 => Mode::Auto,
            2 => Mode::Plan,
            3 => Mode::PlanCollect,
            _ => Mode::Approval,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is not one of [`Mode::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode `{0}`; use one of `approval`, `auto`, `plan`, `plan_collect`")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == name)
            .ok_or_else(|| UnknownMode(name.to_owned()))
    }
}

/// A session's live mode, shared by its runs: a change is seen by the next
/// call the gate checks, even in a run already going.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModeCell(Arc<AtomicU8>);

impl ModeCell {
    pub(crate) fn new(mode: Mode) -> Self {
        Self(Arc::new(AtomicU8::new(mode.to_u8())))
    }
    pub(crate) fn get(&self) -> Mode {
        Mode::from_u8(self.0.load(Ordering::Acquire))
    }
    pub(crate) fn set(&self, mode: Mode) {
        self.0.store(mode.to_u8(), Ordering::Release);
    }
}
