//! Time as the planner sees it: plain numbers on the caller's monotonic clock.
//!
//! The planner never reads a clock. The init passes `CLOCK_MONOTONIC` readings
//! in; tests pass whatever they like.

use std::time::Duration;

/// A point on the caller's monotonic clock, in nanoseconds since an arbitrary
/// origin (the init uses `CLOCK_MONOTONIC`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(pub u64);

impl Instant {
    /// The instant `d` after `self`, saturating at the end of time.
    pub fn after(self, d: Duration) -> Instant {
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Instant(self.0.saturating_add(nanos))
    }

    /// The time from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// Milliseconds since the clock's origin.
    pub fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
}
