//! A lease on a transient set (docs/control-protocol.md "Leases on
//! transient sets"): the units it covers must be stopped from `stop_at`
//! and dead by
//! `kill_at`, unless a renewal moves both on first. The init keeps it and
//! acts at those instants on its own, so that a client that holds a set
//! and dies or freezes (`clusterd`, docs/cluster.md "A cut longer than the
//! TTL: the fence") leaves nothing running past what it promised
//! elsewhere.
//!
//! The logic only: what is due when, and what a request may ask. The
//! instants are `CLOCK_MONOTONIC` nanoseconds, the clock both processes
//! of one kernel read alike, so a request's own delay shifts nothing.

use crate::time::Instant;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// How far a lease got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// Waiting for `stop_at`.
    #[default]
    Armed,
    /// The covered units were taken out of the set; waiting for `kill_at`.
    Stopped,
    /// What was left of them was killed; waiting for a renewal.
    Killed,
}

/// A lease on one transient set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// When the covered units are taken out of the set.
    pub stop_at: u64,
    /// When every process left of them gets SIGKILL.
    pub kill_at: u64,
    /// The units of the set it covers.
    pub units: BTreeSet<String>,
    /// The units the stop took out: those the kill is for.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub stopped: BTreeSet<String>,
    /// How far it got.
    #[serde(default)]
    pub stage: Stage,
}

/// What a lease has due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Take the covered units out of the set.
    Stop,
    /// Kill what is left of the stopped units.
    Kill,
}

/// The problems of a request for a lease on `set`, whose units are
/// `members` (`None`: no such set), until `stop_at` and `kill_at`,
/// covering `units` (`None`: as before). Empty: it may be taken.
pub fn problems(
    set: &str,
    members: Option<&BTreeSet<&str>>,
    stop_at: u64,
    kill_at: u64,
    units: Option<&[String]>,
) -> Vec<String> {
    let mut bad = Vec::new();
    let Some(members) = members else {
        return vec![format!("no transient set named `{set}`")];
    };
    if kill_at < stop_at {
        bad.push(format!("kill-at ({kill_at}) is before stop-at ({stop_at})"));
    }
    let mut seen = BTreeSet::new();
    for u in units.unwrap_or_default() {
        if !seen.insert(u.as_str()) {
            bad.push(format!("`{u}` is given twice"));
        } else if !members.contains(u.as_str()) {
            bad.push(format!("`{u}` is not in the transient set `{set}`"));
        }
    }
    bad
}

impl Lease {
    /// A lease until `stop_at` and `kill_at` on `units`.
    pub fn new(stop_at: u64, kill_at: u64, units: BTreeSet<String>) -> Lease {
        Lease {
            stop_at,
            kill_at,
            units,
            stopped: BTreeSet::new(),
            stage: Stage::Armed,
        }
    }

    /// A renewal: the units change when given; the instants move (back
    /// too, while armed: the client knows best). A fence that fired is
    /// armed again only by a later stop: a request with the instants it
    /// fired at (the client's new list of units, sent before etcd answered
    /// again) leaves its kill to come.
    pub fn renew(&mut self, stop_at: u64, kill_at: u64, units: Option<BTreeSet<String>>) {
        if let Some(u) = units {
            self.units = u;
        }
        if self.stage != Stage::Armed && stop_at <= self.stop_at {
            return;
        }
        self.stop_at = stop_at;
        self.kill_at = kill_at;
        self.stopped.clear();
        self.stage = Stage::Armed;
    }

    /// When something is due next (none: until a renewal).
    pub fn next_at(&self) -> Option<Instant> {
        match self.stage {
            Stage::Armed => Some(Instant(self.stop_at)),
            Stage::Stopped => Some(Instant(self.kill_at)),
            Stage::Killed => None,
        }
    }

    /// What is due at `now`.
    pub fn due(&self, now: Instant) -> Option<Due> {
        match self.stage {
            Stage::Armed if now.0 >= self.stop_at => Some(Due::Stop),
            Stage::Stopped if now.0 >= self.kill_at => Some(Due::Kill),
            _ => None,
        }
    }

    /// The covered units are out of the set: the kill is for all of them,
    /// those the client itself took out just before included (its clock
    /// may have run a hair ahead).
    pub fn stopped(&mut self) {
        self.stopped = std::mem::take(&mut self.units);
        self.stage = Stage::Stopped;
    }

    /// What was left of them was killed.
    pub fn killed(&mut self) {
        self.stopped.clear();
        self.stage = Stage::Killed;
    }

    /// The set's units are `members` (at a renewal): the covered ones it
    /// lost are covered no more.
    pub fn keep_only(&mut self, members: &BTreeSet<&str>) {
        self.units.retain(|u| members.contains(u.as_str()));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> BTreeSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_lease_stops_then_kills_then_waits_for_a_renewal() {
        let mut l = Lease::new(100, 150, names(&["a", "b"]));
        assert_eq!(l.next_at(), Some(Instant(100)));
        assert_eq!(l.due(Instant(99)), None);
        assert_eq!(l.due(Instant(100)), Some(Due::Stop));
        l.stopped();
        assert!(l.units.is_empty());
        assert_eq!(l.next_at(), Some(Instant(150)));
        // The same instants again, with new units: the kill still comes.
        l.renew(100, 150, Some(BTreeSet::new()));
        assert_eq!(l.stage, Stage::Stopped);
        assert_eq!(l.stopped, names(&["a", "b"]));
        assert_eq!(l.due(Instant(120)), None);
        assert_eq!(l.due(Instant(150)), Some(Due::Kill));
        l.killed();
        assert_eq!((l.next_at(), l.due(Instant(1000))), (None, None));
        // A renewal arms it again, with what it covers as it was (none).
        l.renew(2000, 2050, None);
        assert_eq!(l.next_at(), Some(Instant(2000)));
        assert!(l.units.is_empty());
        l.renew(2100, 2150, Some(names(&["c"])));
        assert_eq!(l.units, names(&["c"]));
    }

    #[test]
    fn a_set_that_loses_a_unit_takes_it_out_of_the_lease() {
        let mut l = Lease::new(100, 150, names(&["a", "b"]));
        l.keep_only(&["b", "c"].into_iter().collect());
        assert_eq!(l.units, names(&["b"]));
    }

    #[test]
    fn every_problem_of_a_request() {
        let members: BTreeSet<&str> = ["a", "b"].into_iter().collect();
        assert_eq!(
            problems("s", None, 1, 2, None),
            ["no transient set named `s`"]
        );
        let units = ["a".to_string(), "zz".into(), "a".into()];
        assert_eq!(
            problems("s", Some(&members), 20, 10, Some(&units)),
            [
                "kill-at (10) is before stop-at (20)",
                "`zz` is not in the transient set `s`",
                "`a` is given twice",
            ]
        );
        assert!(problems("s", Some(&members), 10, 10, None).is_empty());
    }
}
