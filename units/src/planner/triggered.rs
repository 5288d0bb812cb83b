//! The triggered set T of the module documentation: a trigger that fires
//! puts its unit in T ([`Planner::fire`]), as a unit that failed for good
//! puts its `on-failure` units ([`Planner::start_on_failure`]); the unit is required from then
//! until it settles ([`Planner::settle_triggered`]) or its trigger stops
//! ([`Planner::stop_trigger`]). T holds names, as the wants do, so that it
//! outlives a new unit set. Socket and path units' own cells are here too:
//! armed by the init ([`Planner::trigger_armed`]), their events counted
//! against their trigger limit ([`Planner::event_fired`]), and whether the
//! init watches for their next event ([`Planner::trigger_waits`]).

use super::facts::Action;
use super::record::{count_in_window, Phase, Status};
use super::Planner;
use crate::graph::UnitId;
use crate::spec::Ready;
use crate::state::{FailureKind, UnitState};
use crate::trigger::{Activation, TriggerLimit};
use std::path::PathBuf;

pub use super::activated::Activated;

/// Why a unit joins T: a trigger fired (with what it saw, if anything),
/// or a unit ended (`on-failure`, `on-success`).
enum Cause {
    Fired(Option<Activated>),
    Ended(Monitor),
}

/// A unit in T, and the trigger that put it there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Triggered {
    pub unit: String,
    pub by: String,
    /// How `by` ended, when its end put the unit here (`on-failure`,
    /// `on-success`).
    pub monitor: Option<Monitor>,
}

/// How the unit whose end started an `on-failure` or `on-success` unit
/// ended: what systemd hands that unit's start commands as
/// `MONITOR_SERVICE_RESULT`, `MONITOR_EXIT_CODE`, `MONITOR_EXIT_STATUS`,
/// `MONITOR_INVOCATION_ID` and `MONITOR_UNIT` ([`Monitor::env`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Monitor {
    /// The unit that ended.
    pub unit: String,
    /// systemd's `Result`: `success`, `exit-code`, `signal`, ….
    pub result: &'static str,
    /// `exited` or `killed`.
    pub exit_code: &'static str,
    /// The exit status, or the signal's name without `SIG`.
    pub exit_status: String,
    /// 32 hexadecimal digits, one for each end of the unit.
    pub invocation_id: String,
}

impl Monitor {
    /// The variables, in systemd's names.
    pub fn env(&self) -> [(&'static str, &str); 5] {
        [
            ("MONITOR_SERVICE_RESULT", self.result),
            ("MONITOR_EXIT_CODE", self.exit_code),
            ("MONITOR_EXIT_STATUS", &self.exit_status),
            ("MONITOR_INVOCATION_ID", &self.invocation_id),
            ("MONITOR_UNIT", &self.unit),
        ]
    }
}

impl Planner {
    /// Trigger `t` fires (a path unit: for `path`): its unit joins T and,
    /// if it is idle, starts afresh (an `exited` or `failed` unit too); a
    /// unit that is up is left as it is. Returns the unit, if the graph
    /// has it.
    pub(super) fn fire(&mut self, t: UnitId, path: Option<PathBuf>) -> Option<UnitId> {
        let by = self.spec_of(t).name.clone();
        let name = self.spec_of(t).extras.triggers.first()?.clone();
        let activated = self.activated(t, path);
        let u = self.pull_in(name.clone(), by, Cause::Fired(activated));
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
        let names = self.spec_of(u).extras.on_failure.clone();
        self.start_on_end(u, names);
    }

    /// Unit `u` became inactive without a failure (stopped, or done and
    /// not remaining): each unit its `on-success` names joins T, as for
    /// `on-failure` (systemd's `OnSuccess=`).
    pub(in crate::planner) fn start_on_success(&mut self, u: UnitId) {
        let names = self.spec_of(u).extras.on_success.clone();
        self.start_on_end(u, names);
    }

    /// Puts `names` in T for unit `u`'s end, each told how it ended.
    fn start_on_end(&mut self, u: UnitId, names: crate::spec::Names) {
        if self.shutting_down || names.is_empty() {
            return;
        }
        let by = self.spec_of(u).name.clone();
        let monitor = self.monitor_of_end(u);
        for name in names {
            self.pull_in(name, by.clone(), Cause::Ended(monitor.clone()));
        }
    }

    /// What trigger `t` tells the unit it starts: a path unit the path
    /// that fired it, a timer when it elapsed; a socket nothing.
    fn activated(&self, t: UnitId, path: Option<PathBuf>) -> Option<Activated> {
        let timer = match self.spec_of(t).kind.row().ready {
            Ready::Clock => self.records[t.index()]
                .rare()
                .timer_run
                .and_then(|r| r.last_trigger)
                .map(|(mono, real)| (real, mono.0 / 1000)),
            Ready::Armed(crate::spec::Arm::Paths) => None,
            _ => return None,
        };
        Some(Activated {
            by: self.spec_of(t).name.clone(),
            path,
            timer,
        })
    }

    /// What the path unit or timer that started unit `u` saw, until `u`
    /// is inactive again (its commands get it: [`Activated::env`]).
    pub fn activated_by(&self, u: UnitId) -> Option<&Activated> {
        self.records.get(u.index())?.rare().activated.as_ref()
    }

    /// How unit `u` just ended, from its record.
    fn monitor_of_end(&self, u: UnitId) -> Monitor {
        use std::hash::{Hash, Hasher};
        let name = &self.spec_of(u).name;
        let failure = self.records[u.index()].rare().failure.as_ref();
        let (result, exit_code, exit_status) = match failure {
            None => ("success", "exited", "0".to_string()),
            Some(f) => match (f.kind, f.exit) {
                (crate::state::FailureKind::Signal, Some(s)) => (
                    f.kind.as_str(),
                    "killed",
                    crate::spec::Signal(s)
                        .name()
                        .trim_start_matches("SIG")
                        .to_string(),
                ),
                (_, exit) => (f.kind.as_str(), "exited", exit.unwrap_or(1).to_string()),
            },
        };
        let half = |salt: u8| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (salt, name, self.now.0).hash(&mut h);
            h.finish()
        };
        Monitor {
            unit: name.clone(),
            result,
            exit_code,
            exit_status,
            invocation_id: format!("{:016x}{:016x}", half(0), half(1)),
        }
    }

    /// How the unit whose end started unit `u` ended, while `u` is in T
    /// for it (its start commands get it: [`Monitor::env`]).
    pub fn monitor(&self, u: UnitId) -> Option<&Monitor> {
        let name = &self.spec_of(u).name;
        self.triggered
            .iter()
            .find(|t| &t.unit == name)
            .and_then(|t| t.monitor.as_ref())
    }

    /// Unit `name` joins T, put there by `by`, and, if it is idle, starts
    /// afresh (an `exited` or `failed` unit too); a unit that is up is
    /// left as it is. Returns the unit, if the graph has it.
    fn pull_in(&mut self, name: String, by: String, cause: Cause) -> Option<UnitId> {
        let u = self.resolve_triggered(&name)?;
        // T holds the unit's own name, not an alias of it.
        let name = self.graph.node(u).spec.name.clone();
        let i = u.index();
        if self.units[i].up() {
            return Some(u);
        }
        // A trigger ends a stop by hand, as systemd's socket or timer
        // starts a unit that was told to stop.
        self.held.retain(|n| *n != name);
        if !self.triggered.iter().any(|x| x.unit == name) {
            let monitor = match &cause {
                Cause::Ended(m) => Some(m.clone()),
                Cause::Fired(_) => None,
            };
            self.triggered.push(super::triggered::Triggered {
                unit: name,
                by: by.clone(),
                monitor,
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
        // After the state moves above, which drop what an earlier start
        // was told.
        if let Cause::Fired(Some(a)) = cause {
            self.records[i].rare_mut().activated = Some(a);
        }
        self.update_required();
        self.push(u);
        Some(u)
    }

    /// Whether unit `u` in T for trigger `by` has settled: idle and done
    /// (`exited`, but not while it remains after its exit for a path unit:
    /// systemd's path unit holds its unit up then; `failed` with no
    /// restart pending; blocked; stopped by hand).
    fn has_settled(&self, u: UnitId, by: &str) -> bool {
        let unit = &self.units[u.index()];
        if unit.phase != Phase::Idle {
            return false;
        }
        match unit.state {
            UnitState::Exited => !self.remains_for_path(u, by),
            UnitState::Failed => !self.records[u.index()].restart_due,
            UnitState::Waiting => unit.blocked,
            UnitState::Disabled => self.held.contains(&self.spec_of(u).name),
            _ => false,
        }
    }

    /// Whether unit `u`, `exited`, says it remains active after its exit
    /// (`remain-after-exit: yes`, systemd's `RemainAfterExit=yes`; a YAML
    /// oneshot that only defaults to it settles, as it always has), was
    /// not skipped by a condition, and was started by path unit `by`.
    fn remains_for_path(&self, u: UnitId, by: &str) -> bool {
        self.spec_of(u).remain_after_exit == Some(true)
            && !self.records[u.index()].rare().skipped
            && self
                .graph
                .unit(by)
                .is_some_and(|t| self.spec_of(t).path().is_some())
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
            if self.has_settled(u, &self.triggered[i].by) {
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
                    && self.spec_of(t).kind.row().ready == Ready::Clock
                {
                    self.arm_timer(t);
                }
            }
        }
        true
    }

    /// `Main` + the init bound the sockets (watched the paths): `Up`,
    /// waiting for its event.
    pub(super) fn trigger_armed(&mut self, u: UnitId) {
        let status = match self.spec_of(u).kind.row().ready {
            Ready::Armed(arm) => arm.armed_status(),
            _ => "waiting",
        };
        self.records[u.index()].rare_reset(|r| r.fires = None);
        self.become_up(u, status);
    }

    /// `Up` + a socket's or path's event: the trigger fires, unless it
    /// fired more than its limit allows in the window
    /// (`TriggerLimitBurst=` in `TriggerLimitIntervalSec=`): then it fails,
    /// as systemd's does, its sockets closed.
    pub(super) fn event_fired(&mut self, t: UnitId, path: Option<PathBuf>) {
        if self.over_trigger_limit(t) {
            return;
        }
        self.fire(t, path);
    }

    /// `Up` + an `accept: yes` socket's connection, for which the init
    /// made `instance`: the instance joins T (put there by the socket), as
    /// a fired trigger's unit does, unless the socket is over its trigger
    /// limit (it fails).
    pub(super) fn connection_accepted(&mut self, t: UnitId, instance: String) {
        if self.over_trigger_limit(t) {
            return;
        }
        let by = self.spec_of(t).name.clone();
        if self
            .pull_in(instance.clone(), by, Cause::Fired(None))
            .is_none()
        {
            self.records[t.index()].status =
                Status::Text(format!("{instance} is not a known unit"));
            self.mark_changed(t);
        }
    }

    /// Counts one event of trigger `t` against its limit; past it, the
    /// trigger fails and its sockets close (whether it did).
    fn over_trigger_limit(&mut self, t: UnitId) -> bool {
        let limit = match self.spec_of(t).activation() {
            Some(Activation::Socket(s)) => s.trigger_limit,
            Some(Activation::Path(p)) => p.trigger_limit,
            _ => TriggerLimit::default(),
        };
        let now = self.now;
        let fires = &mut self.records[t.index()].rare_mut().fires;
        let n = count_in_window(fires, now, limit.interval);
        if limit.burst > 0 && n > limit.burst {
            self.actions.push(Action::Disarm { unit: t });
            self.fail(
                t,
                FailureKind::TriggerLimitHit,
                "trigger limit hit".to_string(),
            );
            return true;
        }
        false
    }

    /// Whether the init should watch trigger `t`'s sockets or paths now: it
    /// is up, and the unit it starts is known, idle and not in T (a socket
    /// with `accept: no` is the service's while that runs, one with
    /// `accept: yes` always the init's; a path unit looks again once its
    /// unit settled and is not active: one that says it remains after its
    /// exit keeps it from looking until it is stopped).
    pub fn trigger_waits(&self, t: UnitId) -> bool {
        let Some(node) = self.graph.get(t) else {
            return false;
        };
        let spec = &node.spec;
        if !matches!(spec.kind.row().ready, Ready::Armed(_))
            || self
                .units
                .get(t.index())
                .is_none_or(|x| x.phase != Phase::Up)
        {
            return false;
        }
        // An `accept: yes` socket accepts every connection itself.
        if spec.socket().is_some_and(|s| s.accept) {
            return true;
        }
        let Some(u) = spec
            .extras
            .triggers
            .first()
            .and_then(|n| self.resolve_triggered(n))
        else {
            return false;
        };
        let name = &self.graph.node(u).spec.name;
        // A path unit looks again only once its unit is inactive, as
        // systemd's: not while it remains after its exit (one skipped by a
        // condition is inactive).
        let unit = &self.units[u.index()];
        let remains = spec.path().is_some()
            && unit.state == UnitState::Exited
            && self.spec_of(u).remain_after_exit == Some(true)
            && !self.records[u.index()].rare().skipped;
        unit.phase == Phase::Idle && !remains && !self.triggered.iter().any(|x| &x.unit == name)
    }

    /// The unit a trigger's (or `on-failure`'s) name stands for: the unit
    /// of that name, else the unit that provides it (an alias, as
    /// `syslog.service` of `rsyslog.service`); not a ghost or masked.
    pub fn resolve_triggered(&self, name: &str) -> Option<UnitId> {
        self.graph
            .unit(name)
            .or_else(|| self.graph.provider(name))
            .filter(|&i| {
                let n = self.graph.node(i);
                !n.ghost && !n.masked
            })
    }

    /// Trigger `u` leaves the required set (or the system shuts down): it
    /// stops at once (a socket's or path unit's sockets closed and watches
    /// removed), and what it triggered leaves T. A socket's
    /// `exec-stop-post` commands then run (systemd.socket(5)'s
    /// `ExecStopPost=`), and the unit is idle after them.
    pub(super) fn stop_trigger(&mut self, u: UnitId, why: &'static str) {
        let i = u.index();
        if matches!(self.spec_of(u).kind.row().ready, Ready::Armed(_)) {
            self.leave_starting(u);
            self.actions.push(Action::Disarm { unit: u });
        }
        self.clear_timer(u);
        self.units[i].to_stop = false;
        self.records[i].rare_reset(|r| r.timer_run = None);
        let name = &self.graph.node(u).spec.name;
        let before = self.triggered.len();
        self.triggered.retain(|x| &x.by != name);
        if self.triggered.len() != before {
            self.update_required();
        }
        if self.units[i].phase == Phase::Up && !self.spec_of(u).extras.exec_stop_post.is_empty() {
            self.stop_post(u, 0);
            return;
        }
        self.units[i].phase = Phase::Idle;
        self.records[i].running_spec = None;
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
