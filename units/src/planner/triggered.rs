//! The triggered set T of the module documentation: a trigger that fires
//! puts its unit in T ([`Planner::fire`]), as a unit that failed for good
//! puts its `on-failure` units ([`Planner::start_on_failure`]); the unit is required from then
//! until it settles ([`Planner::settle_triggered`]) or its trigger stops
//! ([`Planner::stop_trigger`]). T holds names, as the wants do, so that it
//! outlives a new unit set.

use super::record::{Phase, Status};
use super::Planner;
use crate::graph::UnitId;
use crate::state::UnitState;

/// A unit in T, and the trigger that put it there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Triggered {
    pub unit: String,
    pub by: String,
}

impl Planner {
    /// Trigger `t` fires: its unit joins T and, if it is idle, starts
    /// afresh (an `exited` or `failed` unit too); a unit that is up is
    /// left as it is. Returns the unit, if the graph has it.
    pub(super) fn fire(&mut self, t: UnitId) -> Option<UnitId> {
        let by = self.spec_of(t).name.clone();
        let name = self.spec_of(t).triggers.first()?.clone();
        let u = self.pull_in(name.clone(), by);
        if u.is_none() {
            self.records[t.index()].status = Status::Text(format!("{name} is not a known unit"));
            self.mark_changed(t);
        }
        u
    }

    /// Unit `u` failed for good (no restart pending): each unit its
    /// `on-failure` names joins T as a trigger's unit does (systemd's
    /// `OnFailure=`), put there by `u`; a name the graph does not have (or
    /// a masked unit) is skipped.
    pub(in crate::planner) fn start_on_failure(&mut self, u: UnitId) {
        if self.shutting_down {
            return;
        }
        let spec = self.spec_of(u);
        if spec.extras.on_failure.is_empty() {
            return;
        }
        let (names, by) = (spec.extras.on_failure.clone(), spec.name.clone());
        for name in names {
            self.pull_in(name, by.clone());
        }
    }

    /// Unit `name` joins T, put there by `by`, and, if it is idle, starts
    /// afresh (an `exited` or `failed` unit too); a unit that is up is
    /// left as it is. Returns the unit, if the graph has it.
    fn pull_in(&mut self, name: String, by: String) -> Option<UnitId> {
        let u = self.graph.unit(&name).filter(|&i| {
            let n = self.graph.node(i);
            !n.ghost && !n.masked
        })?;
        let i = u.index();
        if self.units[i].up() {
            return Some(u);
        }
        if !self.triggered.iter().any(|x| x.unit == name) {
            self.triggered.push(super::triggered::Triggered {
                unit: name,
                by: by.clone(),
            });
        }
        self.units[i].kept_failed = false;
        if self.units[i].phase == Phase::Idle {
            match self.units[i].state {
                UnitState::Failed => self.reset_failed(u),
                UnitState::Exited => {
                    self.set_state(u, UnitState::Waiting, format!("triggered by {by}"))
                }
                _ => {}
            }
        }
        self.update_required();
        self.push(u);
        Some(u)
    }

    /// Whether unit `u` in T has settled: idle and done (`exited`; `failed`
    /// with no restart pending; blocked).
    fn has_settled(&self, u: UnitId) -> bool {
        let unit = &self.units[u.index()];
        if unit.phase != Phase::Idle {
            return false;
        }
        match unit.state {
            UnitState::Exited => true,
            UnitState::Failed => !self.records[u.index()].restart_due,
            UnitState::Waiting => unit.blocked,
            _ => false,
        }
    }

    /// Takes the settled units out of T; whether any left. A settled unit
    /// that failed keeps showing so outside the required set; each unit's
    /// trigger is armed again (a timer's `OnUnit…Sec=` count from it).
    pub(super) fn settle_triggered(&mut self) -> bool {
        let mut left = Vec::new();
        let mut i = 0;
        while i < self.triggered.len() {
            let Some(u) = self.graph.unit(&self.triggered[i].unit) else {
                self.triggered.swap_remove(i);
                continue;
            };
            if self.has_settled(u) {
                let t = self.triggered.swap_remove(i);
                left.push((u, t.by));
            } else {
                i += 1;
            }
        }
        if left.is_empty() {
            return false;
        }
        self.update_required();
        for (u, by) in left {
            if self.units[u.index()].state == UnitState::Failed {
                self.units[u.index()].kept_failed = true;
            }
            self.push(u);
            // A timer counts `OnUnit…Sec=` from here (an `on-failure`
            // unit was put in T by a unit that is no trigger).
            if let Some(t) = self.graph.unit(&by) {
                if self.units[t.index()].phase == Phase::Up
                    && self.spec_of(t).kind == crate::spec::UnitType::Timer
                {
                    self.arm_timer(t);
                }
            }
        }
        true
    }

    /// Trigger `u` leaves the required set (or the system shuts down): it
    /// stops at once, and what it triggered leaves T.
    pub(super) fn stop_trigger(&mut self, u: UnitId, why: &'static str) {
        let i = u.index();
        self.clear_timer(u);
        self.units[i].phase = Phase::Idle;
        self.units[i].to_stop = false;
        self.records[i].running_spec = None;
        self.records[i].rare_reset(|r| r.timer_run = None);
        let name = &self.graph.node(u).spec.name;
        let before = self.triggered.len();
        self.triggered.retain(|x| &x.by != name);
        if self.triggered.len() != before {
            self.update_required();
        }
        let state = if self.is_required(u) && !self.shutting_down {
            UnitState::Waiting
        } else {
            UnitState::Disabled
        };
        self.set_state(u, state, why);
    }

    /// The units in T, as roots of the required set.
    pub(super) fn triggered_roots(&self) -> impl Iterator<Item = UnitId> + '_ {
        self.triggered
            .iter()
            .filter_map(|x| self.graph.unit(&x.unit))
            .filter(|&i| {
                let n = self.graph.node(i);
                !n.ghost && !n.masked
            })
    }

    /// The trigger that has unit `u` in T, if one does.
    pub fn triggered_by(&self, u: UnitId) -> Option<&str> {
        let name = &self.graph.get(u)?.spec.name;
        self.triggered
            .iter()
            .find(|x| &x.unit == name)
            .map(|x| x.by.as_str())
    }
}
