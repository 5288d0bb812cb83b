//! What the planner says about the units and the target, for status
//! replies and the init's decisions. Nothing here changes the planner.

use super::facts::Role;
use super::record::{Phase, Status, Timer};
use super::Planner;
use crate::graph::{Graph, UnitId};
use crate::state::{FailureKind, UnitState};
use crate::time::Instant;
use std::time::Duration;

/// A unit's state as the planner knows it, for status replies.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitView {
    /// The state.
    pub state: UnitState,
    /// When it entered the state.
    pub since: Instant,
    /// The main process.
    pub pid: Option<i32>,
    /// Active with something below it not active.
    pub degraded: bool,
    /// The failed or missing target it waits on.
    pub blocked_by: Option<String>,
    /// How many restarts after failures.
    pub restarts: u32,
    /// Status text.
    pub status: String,
    /// When the next restart is due.
    pub restart_at: Option<Instant>,
    /// Required by the current target.
    pub required: bool,
    /// When the last start began.
    pub start_at: Option<Instant>,
    /// When it last became active.
    pub active_at: Option<Instant>,
    /// When it last stopped or failed.
    pub end_at: Option<Instant>,
    /// A condition failed at its last start: it was skipped.
    pub skipped: bool,
    /// While it is failed: why, in systemd's words, and the exit status
    /// or signal of the process whose end it was.
    pub failure: Option<(FailureKind, Option<i32>)>,
    /// The last reload failed, so (systemd's `ReloadResult`).
    pub reload_failure: Option<FailureKind>,
}

impl Planner {
    /// The graph.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The current target.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Whether a missed `WATCHDOG=1` fails its unit
    /// ([`Planner::set_service_watchdogs`]).
    pub fn service_watchdogs(&self) -> bool {
        self.service_watchdogs
    }

    /// Turns the service watchdogs on or off (systemd's
    /// `ServiceWatchdogs`): off, a unit's watchdog timeout is ignored, as
    /// systemd logs and ignores it; the next `WATCHDOG=1` arms it again.
    pub fn set_service_watchdogs(&mut self, on: bool) {
        self.service_watchdogs = on;
    }

    /// Whether the system is shutting down.
    pub fn shutting_down(&self) -> bool {
        self.shutting_down
    }

    /// Whether `id` is required by the current target.
    pub fn is_required(&self, id: UnitId) -> bool {
        self.required.get(id.index()).copied().unwrap_or(false)
    }

    /// The units nothing holds ([`Graph::collectable`]): a unit is held
    /// while it is not disabled (active, failed, starting or stopping:
    /// systemd's job or its keeping of a failed unit) or the target
    /// requires it (the target, `want`, a trigger).
    pub fn collectable(&self) -> Vec<bool> {
        let g = self.graph();
        let held: Vec<bool> = g
            .node_ids()
            .map(|id| self.state(id) != UnitState::Disabled || self.is_required(id))
            .collect();
        g.collectable(&held)
    }

    /// The state of unit `id`.
    pub fn state(&self, id: UnitId) -> UnitState {
        self.units
            .get(id.index())
            .map(|u| u.state)
            .unwrap_or_default()
    }

    /// The full view of unit `id`.
    pub fn view(&self, id: UnitId) -> Option<UnitView> {
        let unit = self.units.get(id.index())?;
        let rec = self.records.get(id.index())?;
        let restart_at = match rec.timer {
            Some((t, Timer::Restart)) => Some(t),
            _ => None,
        };
        let status = if let Some(s) = rec.rare().notify_status.as_ref().filter(|_| unit.up()) {
            s.clone()
        } else if let Some(s) = self.timer_status(id) {
            s
        } else if let Some(t) = restart_at {
            let d = t.since(self.now);
            format!("{}; restart in {}", self.status_text(id), short(d))
        } else if let Some(w) = self.lost_to(id) {
            format!("conflicts with {}", self.graph.node(w).spec.name)
        } else {
            self.status_text(id)
        };
        let status = match self.triggered_by(id) {
            Some(by) => format!("{status} (triggered by {by})"),
            None => status,
        };
        Some(UnitView {
            state: unit.state,
            since: rec.since,
            pid: rec.main_pid,
            degraded: unit.degraded,
            blocked_by: rec.rare().blocked_by.clone(),
            restarts: rec.restarts,
            status,
            restart_at,
            required: self.is_required(id),
            start_at: rec.start_at,
            active_at: rec.active_at,
            end_at: rec.end_at,
            skipped: rec.rare().skipped,
            // Failed, or skipped by an exec-condition command (systemd's
            // `exec-condition` result while inactive).
            failure: (unit.state == UnitState::Failed || rec.rare().skipped)
                .then(|| rec.rare().failure.as_ref().map(|f| (f.kind, f.exit)))
                .flatten(),
            reload_failure: rec.rare().reload_failure,
        })
    }

    /// The required unit that a `disabled` unit `id` conflicts with, if
    /// any: why it does not run.
    fn lost_to(&self, id: UnitId) -> Option<UnitId> {
        if self.state(id) != UnitState::Disabled || self.is_required(id) {
            return None;
        }
        let mut required = self.graph.conflicts_of(id).iter().copied();
        required.find(|&w| self.is_required(w))
    }

    /// The status text of unit `id`, formatted.
    pub(super) fn status_text(&self, id: UnitId) -> String {
        match self.records.get(id.index()).map(|r| &r.status) {
            Some(Status::Fixed(s)) => (*s).to_string(),
            Some(Status::WaitingFor(j)) => {
                format!("waiting for {}", self.graph.dep_target(id, *j))
            }
            Some(Status::Text(s)) => s.clone(),
            None => String::new(),
        }
    }

    /// The state of the current target (its provider's), or `None` if no
    /// unit provides it.
    pub fn target_state(&self) -> Option<UnitState> {
        self.graph.provider(&self.target).map(|p| self.state(p))
    }

    /// Whether anything in the required set is not active, or the target's
    /// provider is degraded.
    pub fn degraded(&self) -> bool {
        match self.graph.provider(&self.target) {
            Some(p) => {
                let u = &self.units[p.index()];
                u.degraded || !u.state.is_active()
            }
            None => true,
        }
    }

    /// When the target was last set, and when it last became active.
    pub fn target_times(&self) -> (Instant, Option<Instant>) {
        (self.target_set_at, self.target_active_at)
    }

    /// The targets of `id` that are up only because another of its targets
    /// is required.
    pub fn coincidental(&self, id: UnitId) -> Vec<String> {
        let Some(node) = self.graph.get(id) else {
            return Vec::new();
        };
        // A unit wanted by name is up for itself, not for a target.
        let wanted = self.wants.iter().any(|(n, _)| *n == node.spec.name);
        if self.state(id) == UnitState::Disabled || node.ghost || wanted {
            return Vec::new();
        }
        node.spec
            .provides
            .iter()
            .filter(|t| {
                **t != self.target
                    && !self.graph.dependents(id).iter().any(|d| {
                        // A declared target's node needs its members for
                        // the target it is named after.
                        let node_of_t = self.graph.is_target(d.unit)
                            && d.kind != crate::state::DepKind::Standby
                            && self.graph.node(d.unit).spec.name == **t;
                        self.is_required(d.unit)
                            && (node_of_t
                                || self.graph.named_deps(d.unit).any(|dep| dep.target == **t))
                    })
            })
            .cloned()
            .collect()
    }

    /// Whether the target is settled: `Some(true)` when its provider is
    /// active, `Some(false)` when it failed or is blocked, `None` while it is
    /// still on its way (or the target is unknown).
    pub fn target_settled(&self) -> Option<bool> {
        let p = self.graph.provider(&self.target)?;
        let u = &self.units[p.index()];
        if u.state.is_active() {
            Some(true)
        } else if u.state == UnitState::Failed || (u.state == UnitState::Waiting && u.blocked) {
            Some(false)
        } else {
            None
        }
    }

    /// The required units that are failed.
    pub fn failed_units(&self) -> Vec<UnitId> {
        self.graph
            .ids()
            .filter(|&i| self.is_required(i) && self.state(i) == UnitState::Failed)
            .collect()
    }

    /// Whether every unit is idle and disabled (after shutdown).
    pub fn drained(&self) -> bool {
        self.units
            .iter()
            .all(|u| u.phase == Phase::Idle && u.state == UnitState::Disabled)
    }

    /// The unit and role a PID belongs to, if any.
    pub fn owner(&self, pid: i32) -> Option<(UnitId, Role)> {
        self.pids.get(&pid).copied()
    }
}

/// `1.5s`, `250ms`, `2m` — short, for status lines.
pub(super) fn short(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}
