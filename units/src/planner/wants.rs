//! Wants: units the required set holds besides the target's. A want names
//! a unit; the required set is the target's and everything reachable from
//! each wanted unit. A want lasts until the next target switch
//! ([`WantLife::UntilSwitch`], what `systemctl start` means on a running
//! target), or until it is dropped or its unit leaves the unit set
//! ([`WantLife::Kept`], the transient units of `initctl run` and `initctl
//! add`). A switch gives a fresh start only to the failed units of the new
//! target's own set: a wanted unit that ran and failed stays as it ended.
//!
//! A start by hand ([`Planner::want`]) ends the stop by hand of the unit
//! and of every unit its start pulls in, as systemd's transaction starts
//! a `Requires=` stopped by hand.
//!
//! A stop by hand ([`Planner::unwant`]) leaves the starts it did not ask
//! for going: a unit not read from a YAML file (a systemd unit file's,
//! a transient unit's, a fleet unit's) that was pulled in
//! (`Requires=`, `Wants=`, a trigger's unit's) and is still `waiting` or
//! `starting` when what pulled it in is stopped gets a want of its own
//! ([`WantLife::UntilSwitch`], as `systemctl start` of it), so it stays
//! in the required set, starts, and stays up. systemd does the same: the
//! dependency's start job is a job of its own, which the stop of the unit
//! that pulled it in does not cancel. A YAML unit keeps flotilla's own
//! rule (docs/contract.md): what nothing requires any more is stopped.

use super::{Phase, Planner};
use crate::graph::UnitId;
use crate::state::{DepKind, UnitState};
use crate::time::Instant;

/// How long a want lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WantLife {
    /// Until the next `set-target`.
    UntilSwitch,
    /// Until it is dropped, or its unit leaves the unit set.
    Kept,
}

/// Why a unit cannot be wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WantError {
    /// No unit by that name.
    UnknownUnit(String),
    /// It is masked.
    Masked(String),
    /// The system is shutting down.
    ShuttingDown,
    /// Its unit says it may not be started by hand (`RefuseManualStart=`).
    RefusedManualStart(String),
    /// Its unit says it may not be stopped by hand (`RefuseManualStop=`).
    RefusedManualStop(String),
}

impl Planner {
    /// Wants unit `name` for `life` (a unit wanted already keeps the
    /// longer of the two lives). Returns its id.
    pub fn want(&mut self, name: &str, life: WantLife, now: Instant) -> Result<UnitId, WantError> {
        self.now = now;
        let id = self
            .graph
            .unit(name)
            .filter(|&i| !self.graph.node(i).ghost)
            .ok_or_else(|| WantError::UnknownUnit(name.to_string()))?;
        if self.graph.node(id).masked {
            return Err(WantError::Masked(name.to_string()));
        }
        if self.shutting_down {
            return Err(WantError::ShuttingDown);
        }
        if life == WantLife::UntilSwitch
            && self.graph.node(id).spec.extras.refuse_manual_start == Some(true)
        {
            return Err(WantError::RefusedManualStart(name.to_string()));
        }
        // A start by hand ends a stop by hand (held by the unit's own name,
        // as T holds it, whatever name the stop or start used), of the
        // unit and of everything its start pulls in: systemd's transaction
        // gives each of its `Requires=` and `Wants=` a start job of its
        // own, stopped by hand or not (Debian's `avahi-daemon.service`
        // with its socket stopped).
        let pulled = self.graph.reachable(&[id]);
        let graph = &self.graph;
        self.held
            .retain(|n| !graph.unit(n).is_some_and(|i| pulled[i.index()]));
        // A failed unit kept failed after a stop by hand starts anew, as
        // systemd's start of a failed unit does.
        let u = &self.units[id.index()];
        if u.kept_failed && u.state == UnitState::Failed && u.phase == Phase::Idle {
            self.reset_failed(id);
        }
        self.add_want(name, life);
        self.update_required();
        self.run();
        Ok(id)
    }

    /// [`Planner::want`], and the unit starts at once if it is not up:
    /// not waiting for the units it is ordered after or requires
    /// (systemd's `--job-mode=ignore-dependencies`). What it requires is
    /// still pulled in and starts beside it, and a hard dependency that
    /// does not come up stops it as it would any running unit (systemd
    /// pulls nothing in for such a job: docs/dbus.md, "Job modes").
    pub fn start_at_once(
        &mut self,
        name: &str,
        life: WantLife,
        now: Instant,
    ) -> Result<UnitId, WantError> {
        let id = self.want(name, life, now)?;
        // Only an idle unit's next evaluation takes the flag.
        if self.units[id.index()].phase == Phase::Idle {
            self.units[id.index()].start_at_once = true;
            self.push(id);
            self.run();
        }
        Ok(id)
    }

    /// Records a want of `name` for `life`; a unit wanted already keeps
    /// the longer of the two lives.
    pub(super) fn add_want(&mut self, name: &str, life: WantLife) {
        match self.wants.iter_mut().find(|(n, _)| n == name) {
            Some((_, l)) => {
                if life == WantLife::Kept {
                    *l = WantLife::Kept;
                }
            }
            None => self.wants.push((name.to_string(), life)),
        }
    }

    /// Stops unit `name` by hand (`systemctl stop`): its want is dropped,
    /// and if the required set still holds it (the target's, another
    /// want's), it is held out of that set, with what only it pulls in,
    /// until it is started again ([`Planner::want`], or a trigger's
    /// firing) or the target switches, as systemd leaves a unit it was
    /// told to stop stopped.
    /// Units that depend on it stop with it and wait. Refused when its unit
    /// may not be stopped by hand (a switch of the target still drops its
    /// want, [`Planner::prune_wants`]).
    pub fn unwant(&mut self, name: &str, now: Instant) -> Result<(), WantError> {
        self.now = now;
        // A `not-found` unit still running can be stopped (not started).
        let id = self
            .graph
            .unit(name)
            .filter(|&i| !self.graph.node(i).ghost || self.graph.node(i).not_found())
            .ok_or_else(|| WantError::UnknownUnit(name.to_string()))?;
        if self.graph.node(id).spec.extras.refuse_manual_stop == Some(true) {
            return Err(WantError::RefusedManualStop(name.to_string()));
        }
        let pending = self.pending_starts(id);
        // A failed unit stopped by hand stays failed, its result shown, as
        // systemd's stop of an inactive unit changes nothing (until a
        // reset or its next start).
        let u = &mut self.units[id.index()];
        if u.state == UnitState::Failed && u.phase == Phase::Idle {
            u.kept_failed = true;
        }
        self.wants.retain(|(n, _)| n != name);
        self.update_required();
        let own = &self.graph.node(id).spec.name;
        if self.is_required(id) && !self.held.iter().any(|n| n == own) {
            self.held.push(own.clone());
            self.update_required();
        }
        self.keep_starts(&pending);
        self.run();
        Ok(())
    }

    /// The units not read from YAML, other than `stopped`, whose start
    /// is under way (`waiting` or `starting`): what a stop of `stopped`
    /// must not cancel (module doc).
    fn pending_starts(&self, stopped: UnitId) -> Vec<UnitId> {
        (0..self.units.len())
            .map(|i| UnitId(i as u32))
            .filter(|&i| i != stopped && self.is_required(i))
            .filter(|&i| {
                let n = self.graph.node(i);
                !n.ghost && !n.masked && !n.synthetic && !n.origin.is_yaml()
            })
            .filter(|&i| matches!(self.state(i), UnitState::Waiting | UnitState::Starting))
            .collect()
    }

    /// Gives each unit of `pending` that left the required set a want of
    /// its own, so its start goes on (module doc).
    fn keep_starts(&mut self, pending: &[UnitId]) {
        let left: Vec<String> = pending
            .iter()
            .filter(|&&i| !self.is_required(i))
            .map(|&i| self.graph.node(i).spec.name.clone())
            .collect();
        for name in &left {
            self.add_want(name, WantLife::UntilSwitch);
        }
        if !left.is_empty() {
            self.update_required();
        }
    }

    /// The units stopped by hand and held out of the required set.
    pub fn held(&self) -> impl Iterator<Item = &str> {
        self.held.iter().map(String::as_str)
    }

    /// The wanted units, by name, with how long each want lasts.
    pub fn wants(&self) -> impl Iterator<Item = (&str, WantLife)> {
        self.wants.iter().map(|(n, l)| (n.as_str(), *l))
    }

    /// The ids of the wanted units in the current graph (wants of names
    /// that are gone are left out).
    pub(super) fn want_roots(&self) -> Vec<UnitId> {
        self.wants
            .iter()
            .filter_map(|(n, _)| self.graph.unit(n))
            .filter(|&i| {
                let n = self.graph.node(i);
                (!n.ghost || n.not_found()) && !n.masked
            })
            .collect()
    }

    /// Drops the wants of units the graph no longer has (after a new unit
    /// set) and those that last until a switch (at a switch).
    pub(super) fn prune_wants(&mut self, switching: bool) {
        let graph = &self.graph;
        // A `not-found` unit keeps its want: it runs on (`not_found.rs`).
        let present = |n: &str| {
            graph
                .unit(n)
                .is_some_and(|i| !graph.node(i).ghost || graph.node(i).not_found())
        };
        self.wants
            .retain(|(n, life)| present(n) && !(switching && *life == WantLife::UntilSwitch));
        // A switch is a fresh start: what was stopped by hand may run again.
        self.held.retain(|n| present(n) && !switching);
    }

    /// The required set as it is now: the target's and the wants'.
    pub(super) fn required_now(&self) -> Vec<bool> {
        let mut roots = self.want_roots();
        roots.extend(self.target_provider);
        roots.extend(self.triggered_roots());
        let mut held: Vec<UnitId> = self
            .held
            .iter()
            .filter_map(|n| self.graph.unit(n))
            .collect();
        if !held.is_empty() {
            // What is `PartOf=` a unit held stopped by hand stopped with it
            // and stays stopped while it is held, as systemd's stop job,
            // propagated along `PartOf=`, leaves it (Debian's cups.path
            // and cups.socket with cups.service: the path, started again
            // for the target, would fire and start the service again).
            let part_of: Vec<UnitId> = held
                .iter()
                .flat_map(|&h| self.graph.dependents(h))
                .filter(|d| d.kind == DepKind::PartOf)
                .map(|d| d.unit)
                .collect();
            held.extend(part_of);
        }
        self.graph.reachable_except(&roots, &held)
    }

    /// Moves to the required set as it is now: the units whose flag
    /// changes are evaluated.
    pub(super) fn update_required(&mut self) {
        let req = self.required_now();
        self.set_required(req);
    }
}
