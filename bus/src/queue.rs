//! The jobs the bus side shows (`ListJobs`, `GetJob`, the unit's `Job`
//! property, `JobNew`/`JobRemoved`; `docs/dbus.md`, "Jobs"): those asked
//! over D-Bus ([`crate::jobs`]) and those of the work the init has under
//! way on its own, read off the states its `subscribe` stream tells: a
//! unit `waiting` for its dependencies is a `waiting` start job, one
//! `starting` a `running` one, `stopping` a stop job, `reloading` a
//! reload job. So a unit a start pulls in (`Wants=`, `Requires=`, a path,
//! timer or socket trigger) has its job as under systemd. A job keeps its
//! number until its unit leaves that state; no I/O here.

use flotilla_units::protocol::UnitStatus;
use flotilla_units::state::UnitState;
use std::collections::{BTreeMap, BTreeSet};

/// A job under way.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The unit's systemd name.
    pub unit: String,
    /// `start`, `stop`, `restart`, `reload`.
    pub kind: &'static str,
    /// Asked over D-Bus (followed to its end by [`crate::jobs::follow`]);
    /// otherwise the init's own work, ended here.
    pub asked: bool,
    /// Its unit waits for its dependencies (systemd's job state
    /// `waiting`; otherwise `running`).
    pub waiting: bool,
    /// An asked stop a start asked after it replaced: it ends `canceled`
    /// ([`Queue::cancel_stop`]).
    pub canceled: bool,
}

impl Job {
    /// systemd's job state: `waiting` or `running`.
    pub fn state(&self) -> &'static str {
        if self.waiting {
            "waiting"
        } else {
            "running"
        }
    }
}

/// What a change of a unit did to the jobs: signals to send.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// `JobNew`: the job's number and unit.
    New(u32, String),
    /// `JobRemoved`: the job's number, unit and systemd's result word.
    Removed(u32, String, &'static str),
}

/// The job a unit's state stands for, if any: a unit waiting on a failed
/// or missing dependency has none (systemd's start job ended with
/// `dependency`).
pub fn pending_kind(s: &UnitStatus) -> Option<&'static str> {
    match s.state {
        UnitState::Waiting if s.blocked_by.is_none() => Some("start"),
        UnitState::Starting => Some("start"),
        UnitState::Stopping => Some("stop"),
        UnitState::Reloading => Some("reload"),
        _ => None,
    }
}

/// The result word of a job of `kind` that the unit's state `s` ended.
pub fn result(kind: &str, s: &UnitStatus) -> &'static str {
    match (kind, s.state) {
        (_, UnitState::Failed) => "failed",
        ("start", UnitState::Waiting) if s.blocked_by.is_some() => "dependency",
        ("start" | "reload", st) if st.is_active() => "done",
        ("stop", UnitState::Disabled) => "done",
        // Replaced by a job of another kind (a stop during a start).
        _ => "canceled",
    }
}

/// Every job, by number.
#[derive(Debug)]
pub struct Queue {
    next: u32,
    jobs: BTreeMap<u32, Job>,
    /// The units (systemd's names) a stop with the job mode
    /// `replace-irreversibly` is under way on: no start may replace it.
    irreversible: BTreeSet<String>,
    /// The stops asked of the init whose jobs are not made yet (its
    /// answer is awaited), and whether a start replaced one meanwhile:
    /// the unit's stop command may ask for that start before the answer
    /// comes ([`Queue::begin_stop`]).
    asking_stop: BTreeMap<String, bool>,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            next: 1,
            jobs: BTreeMap::new(),
            irreversible: BTreeSet::new(),
            asking_stop: BTreeMap::new(),
        }
    }
}

impl Queue {
    fn take_id(&mut self) -> u32 {
        let id = self.next;
        // systemd's job ids wrap too; 0 means "no job" on the bus.
        self.next = self.next.checked_add(1).unwrap_or(1);
        id
    }

    /// A job asked over D-Bus on `unit` (systemd's name), `waiting` when
    /// its unit is: its number and whether it is new (a job the init's
    /// own work already has of that kind is taken over, as systemd merges
    /// a job into the one installed: it was announced then).
    /// A stop's job is canceled from the start when a start came while
    /// it was being asked ([`Queue::begin_stop`]).
    pub fn ask(&mut self, unit: &str, kind: &'static str, waiting: bool) -> (u32, bool) {
        let canceled = kind == "stop" && self.asking_stop.remove(unit) == Some(true);
        if let Some((id, j)) = self
            .jobs
            .iter_mut()
            .find(|(_, j)| j.unit == unit && !j.asked && j.kind == kind)
        {
            j.asked = true;
            j.canceled |= canceled;
            return (*id, false);
        }
        let id = self.take_id();
        let job = Job {
            unit: unit.to_string(),
            kind,
            asked: true,
            waiting,
            canceled,
        };
        self.jobs.insert(id, job);
        (id, true)
    }

    /// Ends a job; an irreversible stop's end lets starts of its unit in
    /// again.
    pub fn end(&mut self, id: u32) {
        if let Some(j) = self.jobs.remove(&id) {
            if j.asked && j.kind == "stop" {
                self.irreversible.remove(&j.unit);
            }
        }
    }

    /// A stop of `unit` is about to be asked of the init, whose stop may
    /// run a command that asks for a start at once, before the init's
    /// answer makes the stop's job ([`Queue::ask`]): a start meanwhile
    /// still replaces it ([`Queue::cancel_stop`]). With the job mode
    /// `replace-irreversibly`, starts of the unit are refused instead
    /// until its job ends ([`Queue::irreversible`]). [`Queue::release`]
    /// undoes it when the stop could not be asked.
    pub fn begin_stop(&mut self, unit: &str, irreversible: bool) {
        self.asking_stop.insert(unit.to_string(), false);
        if irreversible {
            self.irreversible.insert(unit.to_string());
        }
    }

    /// Undoes [`Queue::begin_stop`].
    pub fn release(&mut self, unit: &str) {
        self.asking_stop.remove(unit);
        self.irreversible.remove(unit);
    }

    /// Whether an irreversible stop is under way on `unit`.
    pub fn irreversible(&self, unit: &str) -> bool {
        self.irreversible.contains(unit)
    }

    /// A start of `unit` was asked: the stops asked of it before end
    /// `canceled`, as systemd's start job replaces a stop job (the unit
    /// stops, then starts again). Whether one was.
    pub fn cancel_stop(&mut self, unit: &str) -> bool {
        let mut any = false;
        if let Some(asking) = self.asking_stop.get_mut(unit) {
            *asking = true;
            any = true;
        }
        for j in self.jobs.values_mut() {
            if j.unit == unit && j.asked && j.kind == "stop" {
                j.canceled = true;
                any = true;
            }
        }
        any
    }

    /// Whether job `id` was replaced ([`Queue::cancel_stop`]).
    pub fn canceled(&self, id: u32) -> bool {
        self.jobs.get(&id).is_some_and(|j| j.canceled)
    }

    /// A job by number.
    pub fn get(&self, id: u32) -> Option<&Job> {
        self.jobs.get(&id)
    }

    /// Every job, by number.
    pub fn all(&self) -> Vec<(u32, Job)> {
        self.jobs.iter().map(|(k, v)| (*k, v.clone())).collect()
    }

    /// The job of a unit (its systemd name), the first made if several.
    pub fn of(&self, unit: &str) -> Option<(u32, &Job)> {
        self.jobs
            .iter()
            .find(|(_, j)| j.unit == unit)
            .map(|(k, v)| (*k, v))
    }

    /// A unit `unit` (systemd's name) is now as `s` says: its jobs'
    /// states follow, the init's own job on it ends or begins.
    pub fn changed(&mut self, unit: &str, s: &UnitStatus) -> Vec<Change> {
        let mut out = Vec::new();
        let want = pending_kind(s);
        let waiting = s.state == UnitState::Waiting;
        for j in self.jobs.values_mut().filter(|j| j.unit == unit) {
            j.waiting = waiting;
        }
        let own = self
            .jobs
            .iter()
            .find(|(_, j)| j.unit == unit && !j.asked)
            .map(|(id, j)| (*id, j.kind));
        if let Some((id, kind)) = own {
            if want == Some(kind) {
                return out;
            }
            self.jobs.remove(&id);
            out.push(Change::Removed(id, unit.to_string(), result(kind, s)));
        }
        if let Some(kind) = want {
            if self.of(unit).is_none() {
                let id = self.take_id();
                let job = Job {
                    unit: unit.to_string(),
                    kind,
                    asked: false,
                    waiting,
                    canceled: false,
                };
                self.jobs.insert(id, job);
                out.push(Change::New(id, unit.to_string()));
            }
        }
        out
    }

    /// The init's own jobs of units that left the set end (`canceled`):
    /// `known` says whether a unit (systemd's name) is still there.
    pub fn forget(&mut self, known: impl Fn(&str) -> bool) -> Vec<Change> {
        let gone: Vec<u32> = self
            .jobs
            .iter()
            .filter(|(_, j)| !j.asked && !known(&j.unit))
            .map(|(id, _)| *id)
            .collect();
        gone.into_iter()
            .filter_map(|id| self.jobs.remove(&id).map(|j| (id, j)))
            .map(|(id, j)| Change::Removed(id, j.unit, "canceled"))
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
