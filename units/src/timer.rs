//! A `.timer` unit's arithmetic (systemd.timer(5)): its `[Timer]` settings
//! ([`TimerSettings::from_options`]) and, from the instants the caller
//! knows, when it next elapses ([`TimerSettings::next_elapse`]), by
//! systemd 252's rules:
//!
//! - `OnActiveSec=` counts from the timer's activation, `OnBootSec=` from
//!   boot (monotonic 0; in a container from the init's start),
//!   `OnStartupSec=` from the init's start: each fires once per activation
//!   (after the timer has triggered, one already past is dropped);
//! - `OnUnitActiveSec=`/`OnUnitInactiveSec=` count from the later of the
//!   triggered unit's last activation/deactivation and the last trigger, and
//!   only once the unit has been active/inactive at all;
//! - `OnCalendar=` counts from the last trigger (with `Persistent=yes`, the
//!   one stored across restarts of the init), else from the timer's
//!   activation; an elapse before the init started is moved to the init's
//!   start, so a persistent timer that missed its time while the machine was
//!   down fires at once;
//! - the monotonic and the realtime elapse are kept apart (two clocks);
//!   `RandomizedDelaySec=` adds `seed % delay` to each; `AccuracySec=` is
//!   the slack the caller may give its timer.

use crate::calendar::CalendarSpec;
use crate::fleet::UnitOption;
use crate::time::Instant;
use crate::timespan::parse_timespan;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A `[Timer]` section (the unit it starts is the unit's `triggers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct TimerSettings {
    /// `OnActiveSec=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_active: Vec<Duration>,
    /// `OnBootSec=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_boot: Vec<Duration>,
    /// `OnStartupSec=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_startup: Vec<Duration>,
    /// `OnUnitActiveSec=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_unit_active: Vec<Duration>,
    /// `OnUnitInactiveSec=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_unit_inactive: Vec<Duration>,
    /// `OnCalendar=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on_calendar: Vec<CalendarSpec>,
    /// `Persistent=`: keep the last trigger across restarts of the init.
    pub persistent: bool,
    /// `AccuracySec=` (default 1 minute).
    pub accuracy: Duration,
    /// `RandomizedDelaySec=` (default 0).
    pub randomized_delay: Duration,
    /// `FixedRandomDelay=`: the random delay is the same on every boot.
    pub fixed_random_delay: bool,
    /// `RemainAfterElapse=` (default yes).
    pub remain_after_elapse: bool,
    /// `OnClockChange=`: fire when the wall clock is set or jumps.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub on_clock_change: bool,
}

impl Default for TimerSettings {
    fn default() -> TimerSettings {
        TimerSettings {
            on_active: Vec::new(),
            on_boot: Vec::new(),
            on_startup: Vec::new(),
            on_unit_active: Vec::new(),
            on_unit_inactive: Vec::new(),
            on_calendar: Vec::new(),
            persistent: false,
            accuracy: DEFAULT_ACCURACY,
            randomized_delay: Duration::ZERO,
            fixed_random_delay: false,
            remain_after_elapse: true,
            on_clock_change: false,
        }
    }
}

/// systemd's default `AccuracySec=`.
pub const DEFAULT_ACCURACY: Duration = Duration::from_secs(60);

/// The `[Timer]` keys [`TimerSettings::set`] reads (`Unit=` is the unit's
/// `triggers`).
pub const TIMER_KEYS: [&str; 12] = [
    "OnActiveSec",
    "OnBootSec",
    "OnStartupSec",
    "OnUnitActiveSec",
    "OnUnitInactiveSec",
    "OnCalendar",
    "Persistent",
    "AccuracySec",
    "RandomizedDelaySec",
    "FixedRandomDelay",
    "RemainAfterElapse",
    "OnClockChange",
];

/// A `[Timer]` setting that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}={value}: {reason}")]
pub struct TimerError {
    /// The key, e.g. `OnCalendar`.
    pub key: String,
    /// The value as written.
    pub value: String,
    /// What is wrong.
    pub reason: String,
    /// The index of the option in the unit file (for its position).
    pub option: usize,
}

/// What the caller knows about time when it asks for the next elapse.
/// Monotonic instants are on the init's monotonic clock (boot = 0);
/// realtime instants are microseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimerClock {
    /// Now, monotonic.
    pub now: Instant,
    /// Now, realtime.
    pub now_realtime: u64,
    /// When the init started, monotonic.
    pub init_start: Instant,
    /// True in a container: `OnBootSec=` counts from the init's start.
    pub in_container: bool,
    /// When the timer was activated (monotonic, realtime), if it is active.
    pub timer_activated: Option<(Instant, u64)>,
    /// When the triggered unit last became active, if ever.
    pub unit_active_since: Option<Instant>,
    /// When the triggered unit last became inactive, if ever.
    pub unit_inactive_since: Option<Instant>,
    /// The last trigger in this activation (monotonic, realtime).
    pub last_trigger: Option<(Instant, u64)>,
    /// The last trigger from the persistent stamp (realtime); used only
    /// with `Persistent=yes` and when it is not in the future.
    pub stamp: Option<u64>,
    /// The seed of `RandomizedDelaySec=`: the delay is `seed % delay`.
    pub random_seed: u64,
}

/// When the timer elapses next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerNext {
    /// Waiting: the earliest monotonic and the earliest realtime elapse
    /// (each with its random delay); the timer fires at whichever comes
    /// first, at most `accuracy` late.
    Waiting {
        /// The next monotonic elapse.
        monotonic: Option<Instant>,
        /// The next realtime elapse, microseconds since the epoch.
        realtime: Option<u64>,
        /// The slack allowed (`AccuracySec=`).
        accuracy: Duration,
    },
    /// Nothing left to fire: the timer is `elapsed` (it stays active when
    /// `remain` is true, as with `RemainAfterElapse=yes` or `OnUnit…Sec=`).
    Elapsed {
        /// True when the timer stays active.
        remain: bool,
    },
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl TimerSettings {
    /// Reads the `[Timer]` options (a unit file's, in file order) of a
    /// timer named `timer_name`
    /// (`backup.timer`): every value in order ([`TimerSettings::set`]), then
    /// [`TimerSettings::check`]. Other keys (`Unit=` among them) are for the
    /// caller; errors name the key, the value and the option's index.
    pub fn from_options(
        timer_name: &str,
        options: &[UnitOption],
    ) -> Result<TimerSettings, TimerError> {
        let mut t = TimerSettings::default();
        for (i, o) in options.iter().enumerate() {
            if o.section != "Timer" {
                continue;
            }
            t.set(&o.name, &o.value).map_err(|reason| TimerError {
                key: o.name.clone(),
                value: o.value.clone(),
                reason,
                option: i,
            })?;
        }
        t.check(timer_name).map_err(|reason| TimerError {
            key: "Timer".to_string(),
            value: String::new(),
            reason,
            option: 0,
        })?;
        Ok(t)
    }

    /// One `[Timer]` assignment in systemd's syntax, as systemd applies it:
    /// a list grows with each value and an empty one empties it
    /// (`OnCalendar=`); an empty value resets any other setting. Returns
    /// whether `key` is one of [`TIMER_KEYS`]; the error says what is wrong
    /// with the value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<bool, String> {
        let v = value.trim();
        let span = || parse_timespan(v);
        let boolean =
            || crate::fleet::parse_bool(v).ok_or_else(|| "not a boolean (yes/no)".to_string());
        let list = match key {
            "OnActiveSec" => Some(&mut self.on_active),
            "OnBootSec" => Some(&mut self.on_boot),
            "OnStartupSec" => Some(&mut self.on_startup),
            "OnUnitActiveSec" => Some(&mut self.on_unit_active),
            "OnUnitInactiveSec" => Some(&mut self.on_unit_inactive),
            _ => None,
        };
        if let Some(list) = list {
            if v.is_empty() {
                list.clear();
            } else {
                list.push(span()?);
            }
            return Ok(true);
        }
        match key {
            "OnCalendar" if v.is_empty() => self.on_calendar.clear(),
            "OnCalendar" => self
                .on_calendar
                .push(CalendarSpec::parse(v).map_err(|e| e.to_string())?),
            "Persistent" => self.persistent = !v.is_empty() && boolean()?,
            "AccuracySec" if v.is_empty() => self.accuracy = DEFAULT_ACCURACY,
            "AccuracySec" => self.accuracy = span()?.max(Duration::from_micros(1)),
            "RandomizedDelaySec" if v.is_empty() => self.randomized_delay = Duration::ZERO,
            "RandomizedDelaySec" => self.randomized_delay = span()?,
            "FixedRandomDelay" => self.fixed_random_delay = !v.is_empty() && boolean()?,
            "RemainAfterElapse" => self.remain_after_elapse = v.is_empty() || boolean()?,
            "OnClockChange" => self.on_clock_change = !v.is_empty() && boolean()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// What a timer needs: something to elapse on.
    pub fn check(&self, timer_name: &str) -> Result<(), String> {
        if self.on_active.is_empty()
            && self.on_boot.is_empty()
            && self.on_startup.is_empty()
            && self.on_unit_active.is_empty()
            && self.on_unit_inactive.is_empty()
            && self.on_calendar.is_empty()
            && !self.on_clock_change
        {
            return Err(format!("{timer_name} has no OnActiveSec=, OnBootSec=, OnStartupSec=, OnUnitActiveSec=, OnUnitInactiveSec=, OnCalendar= or OnClockChange= setting"));
        }
        Ok(())
    }

    /// The next elapse of an active timer. `zone` is the zone of
    /// `OnCalendar=` specs without one of their own (the local zone);
    /// `zone_of` loads a spec's named zone (`None`: the spec is skipped, as
    /// systemd skips a spec it cannot compute).
    pub fn next_elapse(
        &self,
        c: &TimerClock,
        local: &crate::tz::TimeZone,
        zone_of: &dyn Fn(&str) -> Option<crate::tz::TimeZone>,
    ) -> TimerNext {
        let mut monotonic: Option<Instant> = None;
        let mut realtime: Option<u64> = None;
        let leave_around = !self.on_unit_active.is_empty() || !self.on_unit_inactive.is_empty();
        let last_trigger_real = c
            .last_trigger
            .map(|(_, r)| r)
            .or(c.stamp.filter(|&s| self.persistent && s < c.now_realtime));
        if !self.on_calendar.is_empty() {
            let base = last_trigger_real
                .or(c.timer_activated.map(|(_, r)| r))
                .unwrap_or(c.now_realtime);
            // The init's start on the realtime clock, through the monotonic
            // clock (the wall clock may have been wrong at boot).
            let started = c
                .now_realtime
                .saturating_sub(micros(c.now.since(c.init_start)));
            for spec in &self.on_calendar {
                let zone = match &spec.zone {
                    crate::calendar::CalendarZone::Named(n) => match zone_of(n) {
                        Some(z) => z,
                        None => continue,
                    },
                    _ => local.clone(),
                };
                let Some(next) = spec.next_elapse(base, &zone) else {
                    continue;
                };
                let next = next.max(started);
                realtime = Some(realtime.map_or(next, |r| r.min(next)));
            }
        }
        let once = [
            (&self.on_active, Base::Active),
            (&self.on_boot, Base::Boot),
            (&self.on_startup, Base::Startup),
            (&self.on_unit_active, Base::UnitActive),
            (&self.on_unit_inactive, Base::UnitInactive),
        ];
        for (values, kind) in once {
            for &d in values {
                let base = match kind {
                    Base::Active => c.timer_activated.map_or(c.now, |(m, _)| m),
                    Base::Boot if !c.in_container => Instant(0),
                    Base::Boot | Base::Startup => c.init_start,
                    Base::UnitActive | Base::UnitInactive => {
                        let unit = if kind == Base::UnitActive {
                            c.unit_active_since
                        } else {
                            c.unit_inactive_since
                        };
                        let base = unit.max(c.last_trigger.map(|(m, _)| m));
                        match base {
                            Some(b) if b.0 > 0 => b,
                            _ => continue,
                        }
                    }
                };
                let next = base.after(d);
                // A one-time value that already fired in this activation.
                // (Its elapse is not after the last trigger: a clock read
                // exactly at the elapse must not fire it twice.)
                if c.last_trigger
                    .is_some_and(|(last, _)| next <= last || next < c.now)
                    && matches!(kind, Base::Active | Base::Boot | Base::Startup)
                {
                    continue;
                }
                monotonic = Some(monotonic.map_or(next, |m| m.min(next)));
            }
        }
        if monotonic.is_none() && realtime.is_none() && !self.on_clock_change {
            return TimerNext::Elapsed {
                remain: self.remain_after_elapse || leave_around,
            };
        }
        let delay = micros(self.randomized_delay);
        let add = if delay == 0 { 0 } else { c.random_seed % delay };
        TimerNext::Waiting {
            monotonic: monotonic.map(|m| m.after(Duration::from_micros(add))),
            realtime: realtime.map(|r| r.saturating_add(add).min(u64::MAX - 1)),
            accuracy: self.accuracy,
        }
    }
}

/// When to wake for something due at `a` that may wait until `b` (both
/// in microseconds on one clock): systemd's `sleep_between` (sd-event),
/// so that timers coalesce: the same spot of every minute if there is one
/// in the window (`perturb`, below a minute, picks the spot; systemd draws
/// it from the boot ID), else of every 10 s, second or 250 ms, else `b`.
pub fn wake_between(a: u64, b: u64, perturb: u64) -> u64 {
    if b <= a.saturating_add(1) {
        return a;
    }
    for step in [60_000_000, 10_000_000, 1_000_000, 250_000] {
        let mut c = (b / step) * step + perturb % step;
        if c >= b {
            if c < step {
                return b;
            }
            c -= step;
        }
        if c >= a {
            return c;
        }
    }
    b
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Base {
    Active,
    Boot,
    Startup,
    UnitActive,
    UnitInactive,
}
