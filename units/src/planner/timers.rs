//! Timer units in the planner: a timer in the required set is up with no
//! process (`running`, its status the next elapse), its deadline on the
//! planner's heap as the unit's one timer ([`Timer::Elapse`]); at the
//! elapse it fires ([`Planner::fire`]) and is armed again. What elapses
//! when is [`TimerSettings::next_elapse`]'s; this file gives it the
//! instants it reads.
//!
//! The planner reads no clock: the init tells it the wall clock
//! ([`TimerEnv`], at start and again whenever the wall clock is set,
//! [`Planner::wall_clock_set`]), and the realtime elapses of `OnCalendar=`
//! are turned into monotonic deadlines through the offset between the two
//! clocks. `Persistent=` timers ask the init to keep their last trigger
//! ([`Action::SaveTimerStamp`]); the init hands the kept ones back in
//! [`TimerEnv::stamps`].

use super::facts::Action;
use super::record::{Phase, Status, Timer, TimerRun};
use super::Planner;
use crate::graph::UnitId;
use crate::spec::Ready;
use crate::state::UnitState;
use crate::time::Instant;
use crate::timer::{wake_between, TimerClock, TimerNext, TimerSettings};
use crate::tz::TimeZone;
use std::collections::HashMap;
use std::time::Duration;

/// What timers read besides the monotonic clock: the wall clock, the
/// zones of `OnCalendar=`, the init's start, the seed of
/// `RandomizedDelaySec=` and the persistent last triggers.
#[derive(Debug, Clone, Default)]
pub struct TimerEnv {
    /// The wall clock (microseconds since the epoch) at `at`.
    pub realtime_us: u64,
    /// The monotonic instant of that reading.
    pub at: Instant,
    /// The local zone (`/etc/localtime`; UTC when it cannot be read).
    pub local: Option<TimeZone>,
    /// The named zones of the timers' `OnCalendar=` (`Europe/Berlin`):
    /// a spec whose zone is not here is skipped.
    pub zones: HashMap<String, TimeZone>,
    /// When the init started (monotonic).
    pub init_start: Instant,
    /// In a container: `OnBootSec=` counts from the init's start.
    pub in_container: bool,
    /// The seed of `RandomizedDelaySec=` (and of where in a minute
    /// coalesced elapses fall).
    pub seed: u64,
    /// Each persistent timer's last trigger, realtime microseconds, by
    /// the timer's name.
    pub stamps: HashMap<String, u64>,
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A 64-bit mix (splitmix64's finaliser): a seed per timer and per
/// trigger from one seed.
pub(super) fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

pub(super) fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

impl Planner {
    /// The wall clock at monotonic instant `t`, in microseconds.
    pub(super) fn realtime_at(&self, t: Instant) -> u64 {
        let env = &self.timer_env;
        let m = t.0 / 1000;
        let at = env.at.0 / 1000;
        if m >= at {
            env.realtime_us.saturating_add(m - at)
        } else {
            env.realtime_us.saturating_sub(at - m)
        }
    }

    /// The monotonic instant at which the wall clock reads `r` µs.
    fn monotonic_at(&self, r: u64) -> Instant {
        let env = &self.timer_env;
        let at = env.at.0 / 1000;
        let m = if r >= env.realtime_us {
            at.saturating_add(r - env.realtime_us)
        } else {
            at.saturating_sub(env.realtime_us - r)
        };
        Instant(m.saturating_mul(1000))
    }

    /// What timers read besides the monotonic clock.
    pub fn timer_env(&self) -> &TimerEnv {
        &self.timer_env
    }

    /// Sets what timers read besides the monotonic clock, and arms every
    /// running timer again by it.
    pub fn set_timer_env(&mut self, env: TimerEnv, now: Instant) {
        self.now = now;
        *self.timer_env = env;
        // A reload is no change of the clock: `OnClockChange=` stays put.
        self.rearm_timers(false);
        self.run();
    }

    /// The wall clock was set (or jumped): it reads `realtime_us` at `now`.
    /// Every running timer is armed again, its calendar elapses moved.
    pub fn wall_clock_set(&mut self, realtime_us: u64, now: Instant) {
        self.now = now;
        self.timer_env.realtime_us = realtime_us;
        self.timer_env.at = now;
        // A last trigger in the future means the clock was set back: it
        // counts as now, so that the next elapse is the next one from here
        // (a daily timer that ran while the clock was a day ahead runs
        // again at the next midnight, not at the one after), as systemd's.
        for r in self.records.iter_mut() {
            // (`rare_reset` changes the rare part only where there is one.)
            r.rare_reset(|rare| {
                if let Some((_, real)) = rare
                    .timer_run
                    .as_mut()
                    .and_then(|t| t.last_trigger.as_mut())
                {
                    *real = (*real).min(realtime_us);
                }
            });
        }
        self.rearm_timers(true);
        self.run();
    }

    /// Every running timer armed again; when the wall clock changed
    /// (`clock_changed`), those with `OnClockChange=` fire instead (which
    /// arms them again), as systemd's.
    fn rearm_timers(&mut self, clock_changed: bool) {
        for i in 0..self.units.len() {
            let u = UnitId(i as u32);
            if self.units[i].phase != Phase::Up || self.spec_of(u).kind.row().ready != Ready::Clock
            {
                continue;
            }
            if self.records[i].rare().timer_run.is_some() {
                if clock_changed && self.timer_settings(u).on_clock_change {
                    self.timer_elapsed(u);
                } else {
                    self.arm_timer(u);
                }
            } else {
                // Up without a run: carried across a re-exec, which keeps
                // no timer runs. Armed afresh from now (its persistent
                // stamp, if any, is in the environment just given).
                self.start_timer(u);
            }
        }
    }

    /// `Idle` + start rule, for a `timer`: up at once, armed.
    pub(super) fn start_timer(&mut self, u: UnitId) {
        let i = u.index();
        self.units[i].phase = Phase::Up;
        let activated_real = self.realtime_at(self.now);
        // A persistent timer's stamp is its last trigger (when it is not
        // in the future: the clock would be wrong); one that has none gets
        // one now, so that the next start counts from this one (systemd's
        // `timer_start`).
        let mut last_trigger = None;
        if self.timer_settings(u).persistent {
            let name = self.spec_of(u).name.clone();
            match self.timer_env.stamps.get(&name).copied() {
                Some(stamp) => {
                    last_trigger = (stamp < activated_real).then_some((Instant(0), stamp));
                }
                None => {
                    self.timer_env.stamps.insert(name.clone(), activated_real);
                    self.actions.push(Action::SaveTimerStamp {
                        unit: u,
                        timer: name,
                        realtime_us: activated_real,
                    });
                }
            }
        }
        self.records[i].rare_mut().timer_run = Some(TimerRun {
            activated: self.now,
            activated_real,
            last_trigger,
            next: None,
            fired: 0,
        });
        self.arm_timer(u);
    }

    /// The timer's settings (a timer without any has the defaults, which
    /// never elapse; the unit set refuses such a unit).
    fn timer_settings(&self, u: UnitId) -> TimerSettings {
        self.spec_of(u).timer().cloned().unwrap_or_default()
    }

    /// Computes the next elapse and sets the deadline: `running` with it
    /// as the status, or `exited` when nothing is left to fire.
    pub(super) fn arm_timer(&mut self, u: UnitId) {
        let i = u.index();
        let Some(run) = self.records[i].rare().timer_run else {
            return;
        };
        let settings = self.timer_settings(u);
        let name = self.spec_of(u).name.clone();
        let unit = self
            .spec_of(u)
            .extras
            .triggers
            .first()
            .and_then(|n| self.graph.unit(n));
        let (active_since, inactive_since) = match unit {
            Some(t) => {
                let r = &self.records[t.index()];
                (r.active_at, r.end_at)
            }
            None => (None, None),
        };
        let env = &self.timer_env;
        let per_timer = mix(env.seed ^ name_hash(&name));
        let random_seed = if settings.fixed_random_delay {
            per_timer
        } else {
            mix(per_timer ^ run.fired)
        };
        let clock = TimerClock {
            now: self.now,
            now_realtime: self.realtime_at(self.now),
            init_start: env.init_start,
            in_container: env.in_container,
            timer_activated: Some((run.activated, run.activated_real)),
            unit_active_since: active_since,
            unit_inactive_since: inactive_since,
            last_trigger: run.last_trigger,
            // The stamp as the timer's start found it: one that was in the
            // future then (a wrong clock) stays unused when the clock has
            // passed it since, as systemd reads it at the start only.
            stamp: env
                .stamps
                .get(&name)
                .copied()
                .filter(|&s| s < run.activated_real),
            random_seed,
        };
        let utc = TimeZone::utc();
        let local = env.local.as_ref().unwrap_or(&utc);
        let next = settings.next_elapse(&clock, local, &|z| env.zones.get(z).cloned());
        let perturb = env.seed % 60_000_000;
        match next {
            TimerNext::Waiting {
                monotonic,
                realtime,
                accuracy,
            } => {
                let acc = micros(accuracy);
                let mono = monotonic.map(|m| {
                    let a = m.0 / 1000;
                    Instant(wake_between(a, a.saturating_add(acc), perturb).saturating_mul(1000))
                });
                let real = realtime
                    .map(|r| self.monotonic_at(wake_between(r, r.saturating_add(acc), perturb)));
                let deadline = match (mono, real) {
                    (Some(a), Some(b)) => a.min(b),
                    (Some(a), None) | (None, Some(a)) => a,
                    // `OnClockChange=` alone: nothing to wait for but a
                    // change of the clock ([`Planner::wall_clock_set`]).
                    (None, None) => {
                        self.clear_timer(u);
                        if let Some(r) = self.records[i].rare_mut().timer_run.as_mut() {
                            r.next = None;
                        }
                        self.set_state(u, UnitState::Running, "waiting for the clock to change");
                        return;
                    }
                };
                let when = self.realtime_at(deadline);
                if let Some(r) = self.records[i].rare_mut().timer_run.as_mut() {
                    r.next = Some((deadline, when));
                }
                self.set_timer(u, deadline.since(self.now), Timer::Elapse);
                self.set_state(u, UnitState::Running, "waiting for the next elapse");
            }
            TimerNext::Elapsed { remain } => {
                self.clear_timer(u);
                if let Some(r) = self.records[i].rare_mut().timer_run.as_mut() {
                    r.next = None;
                }
                if !remain {
                    self.units[i].phase = Phase::Idle;
                    self.records[i].running_spec = None;
                    self.records[i].rare_reset(|r| r.timer_run = None);
                }
                self.set_state(u, UnitState::Exited, "elapsed");
            }
        }
    }

    /// `Up` + the elapse: the timer fires, keeps its last trigger (asking
    /// the init to store it, if persistent), and is armed again.
    pub(super) fn timer_elapsed(&mut self, u: UnitId) {
        let i = u.index();
        let real = self.realtime_at(self.now);
        let now = self.now;
        if let Some(r) = self.records[i].rare_mut().timer_run.as_mut() {
            r.last_trigger = Some((now, real));
            r.fired = r.fired.saturating_add(1);
        }
        if self.timer_settings(u).persistent {
            let name = self.spec_of(u).name.clone();
            self.timer_env.stamps.insert(name.clone(), real);
            self.actions.push(Action::SaveTimerStamp {
                unit: u,
                timer: name,
                realtime_us: real,
            });
        }
        self.fire(u, None);
        self.arm_timer(u);
    }

    /// The status of a timer unit: its next elapse and its last trigger,
    /// as wall-clock times (`None` for other units).
    pub(super) fn timer_status(&self, u: UnitId) -> Option<String> {
        let run = self.records.get(u.index())?.rare().timer_run?;
        let base = match &self.records[u.index()].status {
            Status::Text(t) => t.clone(),
            Status::Fixed(t) => (*t).to_string(),
            Status::WaitingFor(_) => String::new(),
        };
        let mut s = match run.next {
            Some((t, r)) => format!(
                "next elapse {} (in {})",
                wall(r),
                super::views::short(t.since(self.now))
            ),
            None => base,
        };
        match run.last_trigger {
            Some((_, r)) => s.push_str(&format!("; last trigger {}", wall(r))),
            None => s.push_str("; not triggered yet"),
        }
        Some(s)
    }

    /// A timer's next elapse and last trigger, realtime microseconds.
    pub fn timer_times(&self, u: UnitId) -> Option<(Option<u64>, Option<u64>)> {
        let run = self.records.get(u.index())?.rare().timer_run?;
        Some((run.next.map(|n| n.1), run.last_trigger.map(|l| l.1)))
    }
}

/// Realtime microseconds as RFC 3339.
fn wall(us: u64) -> String {
    let secs = i64::try_from(us / 1_000_000).unwrap_or(i64::MAX);
    crate::protocol::rfc3339(secs, ((us % 1_000_000) * 1000) as u32)
}
