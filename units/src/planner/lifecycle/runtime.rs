//! The runtime limit of a running unit (`runtime-max-sec`, systemd's
//! `RuntimeMaxSec=`, and `runtime-randomized-extra-sec`,
//! `RuntimeRandomizedExtraSec=`): once the unit has been active that
//! long, plus a random part up to the extra, it is stopped as a stop
//! asked for is (`exec-stop`, then the kill signal, SIGKILL after
//! `stop-timeout`) and ends `failed` with systemd's result `timeout`
//! (docs/systemd-units.md, "The runtime limit").
//!
//! The limit counts while the unit is `Up`, from when it became active
//! (the end of its start, `exec-start-post` included); a reload does not
//! start it again, a restart does. It is no limit of a oneshot, which is
//! never `Up`, nor of a unit that remains `exited`: systemd arms it in its
//! `running` state only.
//!
//! A unit has one timer. While it is up, that timer is the earlier of the
//! watchdog's deadline and the runtime limit's ([`Planner::arm_up_timer`]):
//! whichever fires first decides. `EXTEND_TIMEOUT_USEC=` moves both to at
//! least its time, as systemd extends every timer the service has.

use super::super::record::{Failure, Phase, Status, Timer};
use super::super::timers::{mix, name_hash};
use super::super::Planner;
use crate::graph::UnitId;
use crate::state::FailureKind;
use crate::time::Instant;
use std::time::Duration;

impl Planner {
    /// When unit `u`'s runtime limit passes, if it has one and is
    /// active: the limit and its random part after it became active, or
    /// later if an `EXTEND_TIMEOUT_USEC=` asked for that.
    fn runtime_deadline(&self, u: UnitId) -> Option<Instant> {
        let (max, extra) = self.spec_of(u).runtime_max()?;
        let rec = &self.records[u.index()];
        let since = rec.active_at?;
        let own = since.after(max).after(self.runtime_extra(u, since, extra));
        Some(rec.rare().runtime_extended.map_or(own, |t| t.max(own)))
    }

    /// The random part of the limit, below `extra` (systemd draws it
    /// when it arms the timer). Drawn from the timers' seed, the unit's
    /// name and when it became active: the same for one activation, so
    /// that arming the timer again (a watchdog ping, a reload) does not
    /// move it, and another at the next start.
    fn runtime_extra(&self, u: UnitId, since: Instant, extra: Duration) -> Duration {
        let extra_ns = u64::try_from(extra.as_nanos()).unwrap_or(u64::MAX);
        if extra_ns == 0 {
            return Duration::ZERO;
        }
        let name = &self.graph.node(u).spec.name;
        let draw = mix(self.timer_env.seed ^ name_hash(name) ^ since.0);
        Duration::from_nanos(draw % extra_ns)
    }

    /// Sets the one timer of an `Up` unit to the earlier of `watchdog`
    /// (the watchdog's deadline, if it has one) and its runtime limit's;
    /// leaves it alone when it has neither.
    pub(in crate::planner) fn arm_up_timer(&mut self, u: UnitId, watchdog: Option<Instant>) {
        if self.units[u.index()].phase != Phase::Up {
            return;
        }
        let next = match (watchdog, self.runtime_deadline(u)) {
            (Some(w), Some(r)) if r < w => Some((r, Timer::RuntimeMax)),
            (Some(w), _) => Some((w, Timer::Watchdog)),
            (None, Some(r)) => Some((r, Timer::RuntimeMax)),
            (None, None) => None,
        };
        if let Some((t, kind)) = next {
            self.set_timer_at(u, t, kind);
        }
    }

    /// Unit `u` is `Up` (its start done, or a reload over): the watchdog
    /// counts from now, the runtime limit from when it became active.
    pub(in crate::planner) fn arm_running(&mut self, u: UnitId) {
        let watchdog = self.spec_of(u).watchdog().map(|d| self.now.after(d));
        self.arm_up_timer(u, watchdog);
    }

    /// After a daemon-reload that changed the definition of `u` while it
    /// runs on (systemd sets its timer again from the new settings): the
    /// runtime limit is the new one's. A pending watchdog deadline stays;
    /// one the runtime limit's timer hid counts again from now.
    pub(in crate::planner) fn rearm_running(&mut self, u: UnitId) {
        match self.records[u.index()].timer {
            Some((t, Timer::Watchdog)) => self.arm_up_timer(u, Some(t)),
            Some((_, Timer::RuntimeMax)) | None => {
                self.clear_timer(u);
                self.arm_running(u);
            }
            Some(_) => {}
        }
    }

    /// `EXTEND_TIMEOUT_USEC=` while `Up`: the watchdog and the runtime
    /// limit are each moved to at least `at`. The timer is the earlier of
    /// the two, so it moves to at least `at` with what it is for.
    pub(in crate::planner) fn extend_running(&mut self, u: UnitId, at: Instant) {
        let i = u.index();
        if self.units[i].phase != Phase::Up {
            return;
        }
        if self.runtime_deadline(u).is_some_and(|r| r < at) {
            self.records[i].rare_mut().runtime_extended = Some(at);
        }
        if let Some((t, kind @ (Timer::Watchdog | Timer::RuntimeMax))) = self.records[i].timer {
            if t < at {
                self.set_timer_at(u, at, kind);
            }
        }
    }

    /// `Up` + the runtime limit passed: stopped as a stop asked for is
    /// (its `exec-stop` runs), failed with systemd's `timeout`, and
    /// restarted if the restart policy restarts after a timeout.
    pub(super) fn runtime_passed(&mut self, u: UnitId) {
        let why = "runtime limit reached (runtime-max-sec)";
        let i = u.index();
        self.records[i].restart_due = self
            .restart_policy(u)
            .restarts_after(Some(FailureKind::Timeout));
        self.records[i].rare_mut().failure =
            Some(Failure::new(FailureKind::Timeout, why.to_string()));
        self.stop_running(u, Status::Fixed(why), true);
    }
}
