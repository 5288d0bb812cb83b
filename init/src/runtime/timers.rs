//! Timer units on the init's side: what the planner's timers read besides
//! the monotonic clock ([`TimerEnv`]: the wall clock, the local and the
//! named zones, the persistent last triggers), the watch on the wall clock
//! (set or jumped: the calendar elapses move), and keeping `Persistent=`
//! timers' last triggers.
//!
//! The stamps are systemd's (systemd.timer(5)): a file `stamp-NAME` per
//! timer in `/var/lib/systemd/timers` as PID 1 (`timers/` in the state
//! directory otherwise: `Settings::timer_stamps`), its modification time
//! the last trigger. So the two inits of one Debian machine share them: a
//! daily job that ran under one does not run again at the switch to the
//! other. They are read when the unit set is loaded (at start and at each
//! reload); a trigger sets the file's time (one `utimensat` a trigger, as
//! systemd), and a persistent timer started without a stamp makes one with
//! the time of its start, as systemd does, so that a run missed between
//! two boots is caught up at the second. Without a directory the stamps
//! live in memory only.
//!
//! The zones are read when the unit set is loaded (at start), which reads
//! files anyway: `/etc/localtime` and `/usr/share/zoneinfo/NAME` of each
//! zone an `OnCalendar=` names.

use super::wallclock::WallClock;
use super::{Runtime, CLOCK_TOKEN};
use crate::args::Settings;
use crate::sys::{Sys, WallTime};
use flotilla_units::calendar::CalendarZone;
use flotilla_units::graph::Graph;
use flotilla_units::planner::TimerEnv;
use flotilla_units::tz::TimeZone;
use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// The longest zone file read.
const FILE_MAX: usize = 1 << 20;

/// The init's part of the timers.
#[derive(Debug, Default)]
pub(super) struct Timers {
    /// The wall-clock watch, once it is watched.
    clock: Option<OwnedFd>,
    /// The directory of the stamps (`None`: in memory only).
    dir: Option<PathBuf>,
}

/// Microseconds since the epoch of a wall-clock reading.
fn wall_us(w: WallTime) -> u64 {
    u64::try_from(w.secs)
        .unwrap_or(0)
        .saturating_mul(1_000_000)
        .saturating_add(u64::from(w.nanos / 1000))
}

/// A timer's stamp file in `dir` (systemd's name); `None` for a name that
/// is not one file name.
fn stamp_path(dir: &Path, timer: &str) -> Option<PathBuf> {
    let ok = !timer.is_empty() && !timer.contains('/') && timer != "." && timer != "..";
    ok.then(|| dir.join(format!("stamp-{timer}")))
}

/// The stamps of `graph`'s persistent timers found in `dir`.
fn read_stamps(sys: &impl Sys, dir: Option<&Path>, graph: &Graph) -> HashMap<String, u64> {
    let Some(dir) = dir else {
        return HashMap::new();
    };
    graph
        .units()
        .filter(|(s, _)| s.timer().is_some_and(|t| t.persistent))
        .filter_map(|(s, _)| {
            let path = stamp_path(dir, &s.name)?;
            let us = sys.file_mtime_us(&path).ok().flatten()?;
            Some((s.name.clone(), us))
        })
        .collect()
}

/// A zone name that stays below the zoneinfo directory.
fn zone_path(name: &str) -> Option<PathBuf> {
    let ok = !name.is_empty()
        && !name.starts_with('/')
        && name
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..");
    ok.then(|| Path::new("/usr/share/zoneinfo").join(name))
}

impl Timers {
    /// Reads the stamps and the zones the units need; returns the planner's
    /// [`TimerEnv`] as of the clocks' latest reading, and the problems (for
    /// the console).
    pub fn load(
        sys: &impl Sys,
        settings: &Settings,
        graph: &Graph,
        clock: &WallClock,
    ) -> (Timers, TimerEnv, Vec<String>) {
        let (mono0, wall0) = clock.start();
        let (at, wall) = clock.latest();
        let mut problems = Vec::new();
        let dir = settings.timer_stamps.clone();
        let stamps = read_stamps(sys, dir.as_deref(), graph);
        let (local, zones, seed, found) =
            read_zone_files(sys, graph, mono0.0 ^ u64::from(wall0.nanos));
        problems.extend(found);
        let env = TimerEnv {
            realtime_us: wall_us(wall),
            at,
            local,
            zones,
            init_start: mono0,
            in_container: crate::sys::conditions::in_container(),
            seed,
            stamps,
        };
        let timers = Timers { clock: None, dir };
        (timers, env, problems)
    }
}

/// What the timers of `graph` read from files, if it has any: the local
/// zone (`/etc/localtime`), the seed of their random delays (from the
/// machine ID; else `seed`) and each zone an `OnCalendar=` names; and the
/// problems (for the console).
fn read_zone_files(
    sys: &impl Sys,
    graph: &Graph,
    mut seed: u64,
) -> (
    Option<TimeZone>,
    HashMap<String, TimeZone>,
    u64,
    Vec<String>,
) {
    let mut problems = Vec::new();
    let mut local = None;
    let mut zones = HashMap::new();
    let timers: Vec<_> = graph
        .units()
        .filter_map(|(s, _)| s.timer().cloned())
        .collect();
    if !timers.is_empty() {
        if let Ok(b) = sys.read_file_limited(Path::new("/etc/localtime"), FILE_MAX) {
            match TimeZone::from_tzif("localtime", &b) {
                Ok(z) => local = Some(z),
                Err(e) => problems.push(format!("/etc/localtime: {e}; timers use UTC")),
            }
        }
        // The same seed on every boot of the machine (systemd draws
        // `FixedRandomDelay=` from the machine ID too).
        if let Ok(id) = sys.read_file_limited(Path::new("/etc/machine-id"), 64) {
            seed = id.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            });
        }
    }
    for t in &timers {
        for spec in &t.on_calendar {
            let CalendarZone::Named(name) = &spec.zone else {
                continue;
            };
            if zones.contains_key(name) {
                continue;
            }
            let zone = zone_path(name)
                .ok_or_else(|| "not a zone name".to_string())
                .and_then(|p| {
                    sys.read_file_limited(&p, FILE_MAX)
                        .map_err(|e| e.to_string())
                })
                .and_then(|b| TimeZone::from_tzif(name, &b).map_err(|e| e.to_string()));
            match zone {
                Ok(z) => {
                    zones.insert(name.clone(), z);
                }
                Err(e) => problems.push(format!(
                    "time zone {name}: {e}; the OnCalendar= specs in it never elapse"
                )),
            }
        }
    }
    (local, zones, seed, problems)
}

impl<S: Sys> Runtime<S> {
    /// After a new unit set: its timers' zone files read again (a reload
    /// reads files anyway), so that a timer new in the set, or a zone
    /// first named in it, is armed in its zone rather than in UTC. Nothing
    /// is read for a set without timers.
    pub(super) fn reread_timer_zones(&mut self) {
        let graph = self.planner.graph();
        if !graph.units().any(|(s, _)| s.timer().is_some()) {
            return;
        }
        let env = self.planner.timer_env().clone();
        let (local, zones, seed, problems) = read_zone_files(&self.sys, graph, env.seed);
        for p in &problems {
            self.sys.console(&format!("init: {p}"));
        }
        // A timer new in the set (or made persistent) finds its stamp.
        let stamps = read_stamps(&self.sys, self.timers.dir.as_deref(), graph);
        let now = self.now();
        self.planner.set_timer_env(
            TimerEnv {
                local,
                zones,
                seed,
                stamps,
                ..env
            },
            now,
        );
    }

    /// Watches the wall clock for the timers (said once on the console if
    /// it cannot be: the calendar elapses then do not follow a clock set).
    pub(super) fn watch_wall_clock(&mut self) {
        match self.read_watched(self.sys.wall_clock_watch(), CLOCK_TOKEN) {
            Ok(fd) => self.timers.clock = Some(fd),
            Err(e) => self.sys.console(&format!(
                "init: {e}: timers will not follow changes of the wall clock"
            )),
        }
    }

    /// The wall-clock watch is readable: if the clock was set, the timers
    /// are armed again by it.
    pub(super) fn on_wall_clock(&mut self) {
        let Some(fd) = &self.timers.clock else {
            return;
        };
        if self.sys.wall_clock_was_set(fd.as_fd()) {
            let now = self.now();
            let wall = self.sys.wall_now();
            self.wall.set(now, wall);
            self.planner.wall_clock_set(wall_us(wall), now);
        }
    }

    /// A persistent timer fired (or started without a stamp): its stamp
    /// file gets the time.
    pub(super) fn save_timer_stamp(&mut self, timer: String, realtime_us: u64) {
        let Some(path) = self
            .timers
            .dir
            .as_deref()
            .and_then(|d| stamp_path(d, &timer))
        else {
            return;
        };
        if let Err(e) = self.sys.touch_at(&path, realtime_us) {
            self.sys.console(&format!("init: {timer}'s stamp: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_and_zone_names() {
        let d = Path::new("/var/lib/systemd/timers");
        assert_eq!(
            stamp_path(d, "apt-daily.timer"),
            Some(d.join("stamp-apt-daily.timer"))
        );
        assert_eq!(stamp_path(d, "a/b.timer"), None);
        assert_eq!(stamp_path(d, ".."), None);
        assert!(zone_path("Europe/Berlin").is_some());
        assert!(zone_path("../etc/passwd").is_none());
        assert!(zone_path("/etc/passwd").is_none());
    }
}
