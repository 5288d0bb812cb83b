//! The output rate limit of a unit (docs/contract.md §4): at most `burst` lines in each
//! window of `interval` (journald's `RateLimitIntervalSec=` and
//! `RateLimitBurst=`, a unit's `LogRateLimitIntervalSec=` and
//! `LogRateLimitBurst=`, with journald's defaults); the lines past it are
//! dropped, and the first line kept after the window tells how many were
//! ([`dropped_note`]).
//!
//! A window begins with the first line after the last one ended, as in
//! journald. Dropping alone would not bound what a flooding unit costs the
//! init (it would still read and split every byte as fast as the unit
//! writes), so while a unit is over its limit the loop reads its pipes at
//! most once every [`THROTTLE`] (one read budget each time, see
//! `runtime/sources.rs`): the unit's writes block on the full pipe in
//! between, and what is read is counted and dropped. Pure: time comes in
//! as an argument.

use flotilla_units::duration::format_duration;
use flotilla_units::time::Instant;
use std::time::Duration;

/// journald's `RateLimitIntervalSec=` default.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(30);

/// journald's `RateLimitBurst=` default.
pub const DEFAULT_BURST: u32 = 10_000;

/// While a unit is over its limit, its pipes are read at most this often.
pub const THROTTLE: Duration = Duration::from_millis(50);

/// A unit's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// The window; zero turns the limit off.
    pub interval: Duration,
    /// Lines kept per window; zero turns the limit off.
    pub burst: u32,
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit {
            interval: DEFAULT_INTERVAL,
            burst: DEFAULT_BURST,
        }
    }
}

impl RateLimit {
    /// Whether there is no limit.
    pub fn is_off(&self) -> bool {
        self.interval.is_zero() || self.burst == 0
    }
}

/// A unit's count in its current window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limiter {
    /// When the window began (none before the first line).
    start: Option<Instant>,
    /// Lines kept in it.
    kept: u32,
    /// Lines dropped and not yet told.
    dropped: u64,
    /// When the unit's pipes were last read.
    read_at: Instant,
}

/// What [`Limiter::admit`] says about a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// Keep the line.
    pub keep: bool,
    /// A window with dropped lines just ended: note how many before the
    /// line.
    pub dropped: Option<u64>,
}

impl Limiter {
    /// Counts a line read at `now`.
    pub fn admit(&mut self, now: Instant, limit: RateLimit) -> Verdict {
        let mut dropped = None;
        if limit.is_off() || self.ended(now, limit) {
            dropped = self.take_dropped();
            self.start = Some(now);
            self.kept = 0;
        }
        let keep = limit.is_off() || self.kept < limit.burst;
        if keep {
            self.kept = self.kept.saturating_add(1);
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
        Verdict { keep, dropped }
    }

    /// Whether the unit is over its limit now: its lines are dropped and
    /// its pipes throttled until the window ends.
    pub fn over(&self, now: Instant, limit: RateLimit) -> bool {
        !limit.is_off() && !self.ended(now, limit) && self.kept >= limit.burst
    }

    /// While the unit is over its limit and has dropped lines in this
    /// window: how many so far (for `status`).
    pub fn dropping(&self, now: Instant, limit: RateLimit) -> Option<u64> {
        (self.dropped > 0 && self.over(now, limit)).then_some(self.dropped)
    }

    /// While the unit is over its limit: when its pipes may be read again,
    /// if not yet at `now` ([`THROTTLE`] after the last read).
    pub fn read_due(&self, now: Instant, limit: RateLimit) -> Option<Instant> {
        let due = self.read_at.after(THROTTLE);
        (self.over(now, limit) && now < due).then_some(due)
    }

    /// The unit's pipes were read at `now`.
    pub fn note_read(&mut self, now: Instant) {
        self.read_at = now;
    }

    /// The lines dropped in a window that has ended by `now` and not told
    /// yet (for a unit that fell silent after its flood).
    pub fn ended_with_drops(&mut self, now: Instant, limit: RateLimit) -> Option<u64> {
        if self.ended(now, limit) {
            self.take_dropped()
        } else {
            None
        }
    }

    /// The lines dropped and not told yet, now told (at the end of the
    /// unit's output).
    pub fn take_dropped(&mut self) -> Option<u64> {
        (self.dropped > 0).then(|| std::mem::take(&mut self.dropped))
    }

    fn ended(&self, now: Instant, limit: RateLimit) -> bool {
        self.start
            .is_none_or(|s| now.since(s) >= limit.interval || limit.is_off())
    }
}

/// The note in the unit's log after a window with dropped lines.
pub fn dropped_note(n: u64, limit: RateLimit) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!(
        "-- rate limit: {n} line{s} dropped (more than {} in {}) --",
        limit.burst,
        format_duration(limit.interval)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant(ms * 1_000_000)
    }

    const LIMIT: RateLimit = RateLimit {
        interval: Duration::from_secs(1),
        burst: 3,
    };

    #[test]
    fn keeps_the_burst_then_drops_until_the_window_ends() {
        let mut l = Limiter::default();
        for i in 0..3 {
            assert_eq!(
                l.admit(at(i), LIMIT),
                Verdict {
                    keep: true,
                    dropped: None
                }
            );
        }
        assert!(l.over(at(3), LIMIT));
        l.note_read(at(3));
        assert_eq!(l.read_due(at(4), LIMIT), Some(at(53)));
        assert_eq!(l.read_due(at(53), LIMIT), None);
        assert_eq!(l.dropping(at(3), LIMIT), None, "over, nothing dropped yet");
        for i in 3..10 {
            assert!(!l.admit(at(i), LIMIT).keep);
        }
        assert_eq!(l.dropping(at(10), LIMIT), Some(7), "status says so");
        assert_eq!(l.dropping(at(1000), LIMIT), None, "the window ended");
        assert_eq!(l.ended_with_drops(at(999), LIMIT), None, "not over yet");
        assert!(!l.over(at(1000), LIMIT), "the window ended");
        // The first line of the next window brings the count.
        assert_eq!(
            l.admit(at(1500), LIMIT),
            Verdict {
                keep: true,
                dropped: Some(7)
            }
        );
        // The new window began with that line.
        assert!(l.admit(at(2400), LIMIT).keep);
        assert!(l.admit(at(2400), LIMIT).keep);
        assert!(!l.admit(at(2499), LIMIT).keep);
        assert_eq!(l.ended_with_drops(at(2500), LIMIT), Some(1));
        assert_eq!(l.take_dropped(), None);
    }

    #[test]
    fn zero_turns_it_off() {
        for off in [
            RateLimit {
                interval: Duration::ZERO,
                burst: 3,
            },
            RateLimit {
                interval: Duration::from_secs(1),
                burst: 0,
            },
        ] {
            let mut l = Limiter::default();
            for i in 0..100 {
                assert!(l.admit(at(i), off).keep);
            }
            assert!(!l.over(at(100), off));
        }
    }

    #[test]
    fn the_note() {
        assert_eq!(
            dropped_note(5, RateLimit::default()),
            "-- rate limit: 5 lines dropped (more than 10000 in 30s) --"
        );
        assert_eq!(
            dropped_note(1, LIMIT),
            "-- rate limit: 1 line dropped (more than 3 in 1s) --"
        );
    }
}
