//! Rate limits: at most N calls in any window, per session, and per
//! session and ability for an ability that declares one.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// At most `calls` calls per session in any window of `per`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    calls: u32,
    per: Duration,
}

impl RateLimit {
    /// At most `calls` in any window of `per`; `calls` is at least 1.
    pub const fn new(calls: u32, per: Duration) -> Self {
        Self {
            calls: if calls == 0 { 1 } else { calls },
            per,
        }
    }

    /// At most `calls` a minute.
    pub const fn per_minute(calls: u32) -> Self {
        Self::new(calls, Duration::from_secs(60))
    }

    /// The calls allowed per window.
    pub const fn calls(&self) -> u32 {
        self.calls
    }

    /// The window.
    pub const fn per(&self) -> Duration {
        self.per
    }
}

impl Default for RateLimit {
    /// 30 calls a minute.
    fn default() -> Self {
        Self::per_minute(30)
    }
}

/// Whose calls a rate limit counts, within one session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RateScope<'a> {
    /// Every call of the session: the dispatcher's limit
    /// ([`DispatcherBuilder::rate_limit`](super::DispatcherBuilder::rate_limit)).
    Session,
    /// The session's calls of one ability: the limit it declares with
    /// `#[ability(rate_limit = "3/hour")]`.
    Ability(&'a str),
}

/// Counts a session's calls for its rate limits somewhere other than this
/// dispatcher: a store that several replicas share, so a limit holds for
/// all of them together (30 a minute in total, not 30 per replica). Without
/// one the dispatcher counts in its own memory.
pub trait RateCounter: Send + Sync {
    /// Counts a call of `session_id` in `scope` now if `limit` allows one;
    /// otherwise says how long until it will. Each scope is its own
    /// window. An error refuses the call: a limit that cannot be checked
    /// is not waived.
    fn admit(
        &self,
        session_id: &str,
        scope: RateScope<'_>,
        limit: RateLimit,
    ) -> Result<Admission, RateCounterError>;
}

/// What a [`RateCounter`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Counted: the call goes on.
    Admitted,
    /// Refused: the window is full for this long yet.
    Wait(Duration),
}

/// The rate counter could not count (its store failed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rate counter: {0}")]
pub struct RateCounterError(pub String);

/// The times of the session's last calls: a sliding log, exact for any
/// window, holding at most `calls` instants.
#[derive(Debug, Default)]
pub(crate) struct Window {
    calls: VecDeque<Instant>,
}

impl Window {
    /// Counts a call now, or says how long until one is allowed.
    pub(crate) fn admit(&mut self, limit: RateLimit, now: Instant) -> Result<(), Duration> {
        while let Some(&oldest) = self.calls.front() {
            if now.duration_since(oldest) >= limit.per {
                self.calls.pop_front();
            } else {
                break;
            }
        }
        if self.calls.len() < limit.calls as usize {
            self.calls.push_back(now);
            return Ok(());
        }
        let oldest = self.calls.front().copied().unwrap_or(now);
        Err(limit.per.saturating_sub(now.duration_since(oldest)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_slides() {
        let limit = RateLimit::new(2, Duration::from_secs(10));
        let start = Instant::now();
        let mut window = Window::default();
        assert!(window.admit(limit, start).is_ok());
        assert!(window.admit(limit, start + Duration::from_secs(4)).is_ok());
        assert_eq!(
            window.admit(limit, start + Duration::from_secs(5)),
            Err(Duration::from_secs(5))
        );
        assert!(window.admit(limit, start + Duration::from_secs(10)).is_ok());
    }
}
