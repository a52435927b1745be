//! `Clock`: what time it is, for abilities, from the host.
//!
//! An ability that reasons about "today" or "overdue" reads the time from
//! the turn ([`Turn::now`](crate::Turn::now)) rather than the system, so a host (or a test)
//! can pin it: give the dispatcher a [`Clock::fixed`] as an extension and
//! every call sees the same instant.

use chrono::{DateTime, Utc};

/// A source of the current time: the system's, or one fixed instant.
///
/// ```
/// use chalie_core::{Channel, turn::Clock, Turn};
///
/// let clock = Clock::parse("2026-03-02T09:30:00Z").expect("an RFC 3339 time");
/// let turn = Turn::builder(Channel::Chat).extension(clock).build();
/// assert_eq!(turn.now().to_rfc3339(), "2026-03-02T09:30:00+00:00");
/// // Without a clock, a turn reads the system time.
/// let unpinned = Turn::builder(Channel::Chat).build();
/// assert!(unpinned.now().timestamp() > 1_700_000_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Clock {
    fixed: Option<DateTime<Utc>>,
}

/// Why [`Clock::parse`] refused a text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not an RFC 3339 time such as `2026-03-02T09:30:00Z`: {reason}")]
pub struct ClockError {
    text: String,
    reason: String,
}

impl Clock {
    /// The system clock.
    pub const fn system() -> Self {
        Self { fixed: None }
    }

    /// A clock that always reads `at`: deterministic tests and demos.
    pub const fn fixed(at: DateTime<Utc>) -> Self {
        Self { fixed: Some(at) }
    }

    /// A fixed clock from an RFC 3339 text, e.g. `2026-03-02T09:30:00Z`.
    pub fn parse(text: &str) -> Result<Self, ClockError> {
        DateTime::parse_from_rfc3339(text)
            .map(|at| Self::fixed(at.with_timezone(&Utc)))
            .map_err(|error| ClockError {
                text: text.to_owned(),
                reason: error.to_string(),
            })
    }

    /// Whether it is fixed rather than the system's.
    pub const fn is_fixed(&self) -> bool {
        self.fixed.is_some()
    }

    /// The current time.
    pub fn now(&self) -> DateTime<Utc> {
        self.fixed.unwrap_or_else(Utc::now)
    }
}
