//! Wall times of the init's monotonic instants.
//!
//! The init keeps every moment (a unit's `since`, its timers) on the
//! monotonic clock and shows it as wall time. A fixed offset taken at the
//! start is wrong for every moment after the wall clock was set (`date
//! -s`, a virtual machine resumed, the first NTP step): systemd reads the
//! wall clock at each change, so `InactiveEnterTimestamp` and the others
//! are the time the clock showed at that moment. The init gets the same
//! answer from the clock's settings: the start and each time the wall
//! clock was set (its watch, `runtime/timers.rs`), as a pair of readings
//! of both clocks. A moment is shown against the last pair at or before
//! it, so what happened before a jump keeps its time and what happens
//! after it is on the new clock. The slow drift an NTP daemon slews away
//! is not followed (it sets no clock).

use crate::sys::WallTime;
use flotilla_units::time::Instant;

/// How many settings of the clock are kept besides the start: a clock set
/// again and again in a loop must not grow the init; a moment before the
/// oldest kept setting is shown against the one before it was dropped,
/// at worst off by the settings in between.
const KEPT: usize = 32;

/// Both clocks read together: at the start and at each setting since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WallClock {
    start: (Instant, WallTime),
    /// The settings after the start, ordered by the monotonic reading.
    sets: Vec<(Instant, WallTime)>,
}

impl WallClock {
    /// The clocks as they read at the start.
    pub(super) fn new(mono: Instant, wall: WallTime) -> WallClock {
        WallClock {
            start: (mono, wall),
            sets: Vec::new(),
        }
    }

    /// The clocks at the start and at each setting after it, as a previous
    /// image carried them (`Snapshot::mono0`, `wall0`, `wall_sets`).
    pub(super) fn resumed(start: (Instant, WallTime), sets: Vec<(Instant, WallTime)>) -> Self {
        let mut clock = WallClock::new(start.0, start.1);
        for (mono, wall) in sets {
            clock.set(mono, wall);
        }
        clock
    }

    /// The wall clock was set: it read `wall` at `mono`.
    pub(super) fn set(&mut self, mono: Instant, wall: WallTime) {
        if mono < self.latest().0 {
            return;
        }
        if self.sets.len() == KEPT {
            self.sets.remove(0);
        }
        self.sets.push((mono, wall));
    }

    /// The start's readings.
    pub(super) fn start(&self) -> (Instant, WallTime) {
        self.start
    }

    /// The latest readings (the start's if the clock was never set).
    pub(super) fn latest(&self) -> (Instant, WallTime) {
        self.sets.last().copied().unwrap_or(self.start)
    }

    /// The settings after the start, for the next image.
    pub(super) fn sets(&self) -> &[(Instant, WallTime)] {
        &self.sets
    }

    /// The wall time of moment `t`.
    pub(super) fn wall_of(&self, t: Instant) -> WallTime {
        let after = self.sets.partition_point(|(m, _)| *m <= t);
        let (mono, wall) = match after.checked_sub(1) {
            Some(i) => self.sets.get(i).copied().unwrap_or(self.start),
            None => self.start,
        };
        let d = t.0 as i128 - mono.0 as i128;
        let total = wall.secs as i128 * 1_000_000_000 + wall.nanos as i128 + d;
        WallTime {
            secs: total.div_euclid(1_000_000_000) as i64,
            nanos: total.rem_euclid(1_000_000_000) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn w(secs: i64) -> WallTime {
        WallTime { secs, nanos: 0 }
    }

    #[test]
    fn a_moment_is_shown_on_the_clock_as_it_read_then() {
        let mut c = WallClock::new(Instant(10 * S), w(1_000));
        assert_eq!(c.wall_of(Instant(15 * S)), w(1_005));
        // A day forward at 20 s: before it unchanged, after it on the new clock.
        c.set(Instant(20 * S), w(1_010 + 86_400));
        assert_eq!(c.wall_of(Instant(15 * S)), w(1_005));
        assert_eq!(c.wall_of(Instant(19 * S)), w(1_009));
        assert_eq!(c.wall_of(Instant(20 * S)), w(1_010 + 86_400));
        assert_eq!(c.wall_of(Instant(25 * S)), w(1_015 + 86_400));
        // Back two days at 30 s.
        c.set(Instant(30 * S), w(1_020 - 86_400));
        assert_eq!(c.wall_of(Instant(25 * S)), w(1_015 + 86_400));
        assert_eq!(c.wall_of(Instant(31 * S)), w(1_021 - 86_400));
        // Before the start: against the start.
        assert_eq!(c.wall_of(Instant(9 * S)), w(999));
        assert_eq!(c.latest(), (Instant(30 * S), w(1_020 - 86_400)));
        assert_eq!(c.start(), (Instant(10 * S), w(1_000)));
    }

    #[test]
    fn settings_are_bounded_and_carried() {
        let mut c = WallClock::new(Instant(0), w(0));
        for k in 1..=100u64 {
            c.set(Instant(k * S), w(k as i64 * 10));
        }
        assert_eq!(c.sets().len(), KEPT);
        assert_eq!(c.start(), (Instant(0), w(0)));
        assert_eq!(c.wall_of(Instant(100 * S)), w(1_000));
        // A reading out of order (never from the kernel) is ignored.
        c.set(Instant(50 * S), w(7));
        assert_eq!(c.latest(), (Instant(100 * S), w(1_000)));
        let again = WallClock::resumed(c.start(), c.sets().to_vec());
        assert_eq!(again, c);
    }
}
