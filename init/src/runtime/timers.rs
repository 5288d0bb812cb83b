//! Timer units on the init's side: what the planner's timers read besides
//! the monotonic clock ([`TimerEnv`]: the wall clock, the local and the
//! named zones, the persistent last triggers), the watch on the wall clock
//! (set or jumped: the calendar elapses move), and keeping `Persistent=`
//! timers' last triggers.
//!
//! The stamps live in one small file, `timer-stamps` in the init's state
//! directory (a line `NAME MICROSECONDS` per timer), read once at start.
//! A trigger updates the stamps in memory; the file is rewritten at most
//! once a minute (a trigger within a minute of the last write only marks
//! the stamps dirty; the next trigger after the minute, or the init's exit,
//! writes them). So the loop's file writes for timers are bounded by one
//! small file a minute, whatever the timers do; a crash loses at most a
//! minute of stamps, and a persistent timer then fires once more at start.
//! Without a state directory (no config file) the stamps are kept in
//! memory only.
//!
//! The zones are read when the unit set is loaded (at start), which reads
//! files anyway: `/etc/localtime` and `/usr/share/zoneinfo/NAME` of each
//! zone an `OnCalendar=` names.

use super::{Runtime, CLOCK_TOKEN};
use crate::args::Settings;
use crate::sys::{Interest, Sys, WallTime};
use flotilla_units::graph::Graph;
use flotilla_units::planner::TimerEnv;
use flotilla_units::systemd::tz::TimeZone;
use flotilla_units::systemd::CalendarZone;
use flotilla_units::time::Instant;
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The stamps file, in the state directory.
const STAMPS_FILE: &str = "timer-stamps";
/// The longest stamps file or zone file read.
const FILE_MAX: usize = 1 << 20;
/// At most one write of the stamps file in this time.
const STAMP_WRITE_GAP: Duration = Duration::from_secs(60);

/// The init's part of the timers.
#[derive(Debug, Default)]
pub(super) struct Timers {
    /// The wall-clock watch, once it is watched.
    clock: Option<OwnedFd>,
    /// The persistent stamps: timer name, realtime microseconds.
    stamps: BTreeMap<String, u64>,
    /// Stamps changed since the file was written.
    dirty: bool,
    written_at: Option<Instant>,
    /// The stamps file (`None`: no state directory).
    path: Option<PathBuf>,
}

/// Microseconds since the epoch of a wall-clock reading.
fn wall_us(w: WallTime) -> u64 {
    u64::try_from(w.secs)
        .unwrap_or(0)
        .saturating_mul(1_000_000)
        .saturating_add(u64::from(w.nanos / 1000))
}

/// The stamps file's lines; a bad line is left out.
fn parse_stamps(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (name, us) = l.trim().split_once(' ')?;
            Some((name.to_string(), us.trim().parse().ok()?))
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
    /// [`TimerEnv`] as of `mono0`/`wall0`, and the problems (for the
    /// console).
    pub fn load(
        sys: &impl Sys,
        settings: &Settings,
        graph: &Graph,
        mono0: Instant,
        wall0: WallTime,
    ) -> (Timers, TimerEnv, Vec<String>) {
        let mut problems = Vec::new();
        let path = settings.state_dir.as_ref().map(|d| d.join(STAMPS_FILE));
        let stamps = match &path {
            Some(p) => match sys.read_file_limited(p, FILE_MAX) {
                Ok(b) => parse_stamps(&String::from_utf8_lossy(&b)),
                Err(_) => BTreeMap::new(),
            },
            None => BTreeMap::new(),
        };
        let (local, zones, seed, found) =
            read_zone_files(sys, graph, mono0.0 ^ u64::from(wall0.nanos));
        problems.extend(found);
        let env = TimerEnv {
            realtime_us: wall_us(wall0),
            at: mono0,
            local,
            zones,
            init_start: mono0,
            in_container: crate::sys::conditions::in_container(),
            seed,
            stamps: stamps.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        };
        let timers = Timers {
            clock: None,
            stamps,
            dirty: false,
            written_at: None,
            path,
        };
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
        let now = self.now();
        self.planner.set_timer_env(
            TimerEnv {
                local,
                zones,
                seed,
                ..env
            },
            now,
        );
    }

    /// Watches the wall clock for the timers (said once on the console if
    /// it cannot be: the calendar elapses then do not follow a clock set).
    pub(super) fn watch_wall_clock(&mut self) {
        let watched = self.sys.wall_clock_watch().and_then(|fd| {
            self.sys
                .watch(fd.as_raw_fd(), CLOCK_TOKEN, Interest::Read)
                .map(|()| fd)
        });
        match watched {
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
            let wall = wall_us(self.sys.wall_now());
            self.planner.wall_clock_set(wall, now);
        }
    }

    /// A persistent timer fired: its stamp is kept (see the module doc
    /// for when the file is written).
    pub(super) fn save_timer_stamp(&mut self, timer: String, realtime_us: u64) {
        self.timers.stamps.insert(timer, realtime_us);
        self.timers.dirty = true;
        let now = self.now();
        let due = self
            .timers
            .written_at
            .is_none_or(|t| now.since(t) >= STAMP_WRITE_GAP);
        if due {
            self.write_timer_stamps();
        }
    }

    /// Writes the stamps file if stamps changed since it was written.
    pub(super) fn write_timer_stamps(&mut self) {
        if !self.timers.dirty {
            return;
        }
        let Some(path) = self.timers.path.clone() else {
            return;
        };
        let text: String = self
            .timers
            .stamps
            .iter()
            .map(|(name, us)| format!("{name} {us}\n"))
            .collect();
        self.timers.dirty = false;
        self.timers.written_at = Some(self.now());
        if let Err(e) = self.sys.write_file(&path, text.as_bytes()) {
            self.sys.console(&format!("init: timer stamps: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_and_zone_names() {
        let s = parse_stamps("a.timer 5\nbad\nb.timer x\nc.timer  7\n");
        assert_eq!(s.get("a.timer"), Some(&5));
        assert_eq!(s.get("c.timer"), Some(&7));
        assert_eq!(s.len(), 2);
        assert!(zone_path("Europe/Berlin").is_some());
        assert!(zone_path("../etc/passwd").is_none());
        assert!(zone_path("/etc/passwd").is_none());
    }
}
