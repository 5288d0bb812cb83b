//! The planner across a re-exec: each unit's record written out as a
//! [`UnitCarry`] ([`Planner::carry`]) and a planner rebuilt from them
//! ([`Planner::resume`]) with the same phases, states, processes,
//! counters and timers.
//!
//! What is derived (the dependency index, the required set, the rule
//! flags, the start queue and the start slots) is not carried: `resume`
//! restores the records, then computes the rest as [`Planner::new`] does
//! and lets the rules run, so the rules' invariants hold by construction.
//! A unit that is up stays up and keeps its PIDs: the rules see it as they
//! saw it before the re-exec.

use super::record::{Failure, Phase, Status, Timer};
use super::wants::WantLife;
use super::{Planner, PlannerOptions, Role};
use crate::graph::{Graph, UnitId};
use crate::snapshot::{PhaseCarry, RoleCarry, TimerCarry, TimerKind, UnitCarry, WantCarry};
use crate::state::FailureKind;
use crate::time::Instant;
use std::sync::Arc;
use std::time::Duration;

impl Planner {
    /// Why the state cannot be carried now (a shutdown is under way, or
    /// units removed by a reload are still stopping: they are in no unit
    /// set the snapshot could name).
    pub fn carry_refusal(&self) -> Option<String> {
        if self.shutting_down {
            return Some("the system is shutting down".into());
        }
        let ghosts: Vec<&str> = self
            .graph
            .node_ids()
            .filter(|&i| self.graph.node(i).ghost)
            .map(|i| self.graph.node(i).spec.name.as_str())
            .collect();
        (!ghosts.is_empty()).then(|| {
            format!(
                "units removed from the unit set are still stopping ({}); try again once they stopped",
                ghosts.join(", ")
            )
        })
    }

    /// Every unit's record, timers as the time left after `now`.
    pub fn carry(&self, now: Instant) -> Vec<UnitCarry> {
        self.graph
            .node_ids()
            .filter(|&i| !self.graph.node(i).ghost)
            .map(|i| self.carry_unit(i, now))
            .collect()
    }

    fn carry_unit(&self, id: UnitId, now: Instant) -> UnitCarry {
        let i = id.index();
        let u = &self.units[i];
        let r = &self.records[i];
        let rare = r.rare();
        let node = self.graph.node(id);
        UnitCarry {
            name: node.spec.name.clone(),
            phase: phase_out(u.phase),
            state: u.state,
            since: r.since.0,
            main_pid: r.main_pid,
            helper: r.helper.map(|(role, pid)| (role_out(role), pid)),
            timer: r.timer.map(|(t, kind)| TimerCarry {
                remaining_ns: u64::try_from(t.since(now).as_nanos()).unwrap_or(u64::MAX),
                kind: timer_out(kind),
            }),
            restart_due: r.restart_due,
            restart_ready: u.restart_ready,
            restart_requested: u.restart_requested,
            spec_changed: u.spec_changed,
            attempt: r.attempt,
            restarts: r.restarts,
            status: self.status_text(id),
            notify_status: r.rare().notify_status.clone(),
            start_at: r.start_at.map(|t| t.0),
            active_at: r.active_at.map(|t| t.0),
            end_at: r.end_at.map(|t| t.0),
            exit_ok: r.exit_ok,
            self_stop: r.self_stop,
            dead_leader: r.dead_leader,
            failure: rare.failure.as_ref().map(|f| f.why.clone()),
            failure_kind: rare.failure.as_ref().map(|f| f.kind),
            failure_exit: rare.failure.as_ref().and_then(|f| f.exit),
            blocked_by: rare.blocked_by.clone(),
            script_group: rare.script_group,
            pidfile_tries: rare.pidfile_tries,
            pidfile_deadline: rare.pidfile_deadline.map(|t| t.0),
            running_spec: r
                .running_spec
                .as_ref()
                .filter(|s| !Arc::ptr_eq(s, &node.spec) && ***s != *node.spec)
                .map(|s| (**s).clone()),
            triggered_by: self.triggered_by(id).map(str::to_string),
            skipped: rare.skipped,
        }
    }

    /// The wants besides the target's.
    pub fn carry_wants(&self) -> Vec<WantCarry> {
        self.wants
            .iter()
            .map(|(unit, life)| WantCarry {
                unit: unit.clone(),
                kept: *life == WantLife::Kept,
            })
            .collect()
    }

    /// A planner for `graph` with the records of `units` (by name), the
    /// `wants` and the units `held` (stopped by hand) restored, its rules
    /// run. Returns it with the records that
    /// name no unit of `graph` (their processes are the caller's to deal
    /// with: the planner does not track them).
    pub fn resume(
        graph: Graph,
        target: &str,
        now: Instant,
        opts: PlannerOptions,
        units: Vec<UnitCarry>,
        wants: &[WantCarry],
        held: &[String],
    ) -> (Planner, Vec<UnitCarry>) {
        let mut p = Planner::unstarted(graph, target, now, opts, super::TimerEnv::default());
        for w in wants {
            if p.graph.unit(&w.unit).is_some() {
                let life = if w.kept {
                    WantLife::Kept
                } else {
                    WantLife::UntilSwitch
                };
                p.wants.push((w.unit.clone(), life));
            }
        }
        p.held = held
            .iter()
            .filter(|n| p.graph.unit(n).is_some())
            .cloned()
            .collect();
        let mut unplaced = Vec::new();
        for c in units {
            match p.graph.unit(&c.name) {
                Some(id) => {
                    if let Some(by) = &c.triggered_by {
                        p.triggered.push(super::triggered::Triggered {
                            unit: c.name.clone(),
                            by: by.clone(),
                            monitor: None,
                        });
                    }
                    p.restore(id, c);
                }
                None => unplaced.push(c),
            }
        }
        p.starting = p.units.iter().filter(|u| u.phase.starting()).count();
        p.required = p.required_now();
        p.index_graph();
        p.push_all();
        p.run();
        (p, unplaced)
    }

    fn restore(&mut self, id: UnitId, c: UnitCarry) {
        let i = id.index();
        let node_spec = self.graph.node(id).spec.clone();
        let phase = phase_in(c.phase);
        let u = &mut self.units[i];
        u.phase = phase;
        u.state = c.state;
        u.restart_ready = c.restart_ready;
        u.restart_requested = c.restart_requested;
        u.spec_changed = c.spec_changed;
        let r = &mut self.records[i];
        r.since = Instant(c.since);
        r.main_pid = c.main_pid;
        r.helper = c.helper.map(|(role, pid)| (role_in(role), pid));
        r.running_spec = match c.running_spec {
            Some(s) => Some(Arc::new(s)),
            None => (phase != Phase::Idle).then_some(node_spec),
        };
        r.restart_due = c.restart_due;
        r.attempt = c.attempt;
        r.restarts = c.restarts;
        r.status = if c.status.is_empty() {
            Status::Fixed("")
        } else {
            Status::Text(c.status)
        };
        if let Some(s) = c.notify_status {
            r.rare_mut().notify_status = Some(s);
        }
        r.start_at = c.start_at.map(Instant);
        r.active_at = c.active_at.map(Instant);
        r.end_at = c.end_at.map(Instant);
        r.exit_ok = c.exit_ok;
        r.self_stop = c.self_stop;
        r.dead_leader = c.dead_leader;
        if c.failure.is_some()
            || c.blocked_by.is_some()
            || c.script_group.is_some()
            || c.pidfile_tries > 0
            || c.pidfile_deadline.is_some()
            || c.skipped
        {
            let rare = r.rare_mut();
            rare.failure = c.failure.map(|why| Failure {
                kind: c.failure_kind.unwrap_or(FailureKind::Resources),
                exit: c.failure_exit,
                why,
            });
            rare.blocked_by = c.blocked_by;
            rare.script_group = c.script_group;
            rare.pidfile_tries = c.pidfile_tries;
            rare.pidfile_deadline = c.pidfile_deadline.map(Instant);
            rare.skipped = c.skipped;
        }
        if let Some(pid) = r.main_pid {
            self.pids.insert(pid, (id, Role::Main));
        }
        if let Some((role, Some(pid))) = r.helper {
            self.pids.insert(pid, (id, role));
        }
        if let Some(t) = c.timer {
            self.set_timer(id, Duration::from_nanos(t.remaining_ns), timer_in(t.kind));
        }
        self.mark_changed(id);
    }
}

fn phase_out(p: Phase) -> PhaseCarry {
    match p {
        // A check is answered in the turn that asks for it, so a snapshot
        // never sees one; were it to, the start begins again.
        Phase::Idle | Phase::Check => PhaseCarry::Idle,
        Phase::Condition(n) => PhaseCarry::Condition(n),
        Phase::Pre(n) => PhaseCarry::Pre(n),
        Phase::Main => PhaseCarry::Main,
        Phase::Up => PhaseCarry::Up,
        Phase::Reloading => PhaseCarry::Reloading,
        Phase::Stopping => PhaseCarry::Stopping,
        Phase::StopPost(n) => PhaseCarry::StopPost(n),
    }
}

fn phase_in(p: PhaseCarry) -> Phase {
    match p {
        PhaseCarry::Idle => Phase::Idle,
        PhaseCarry::Condition(n) => Phase::Condition(n),
        PhaseCarry::Pre(n) => Phase::Pre(n),
        PhaseCarry::Main => Phase::Main,
        PhaseCarry::Up => Phase::Up,
        PhaseCarry::Reloading => Phase::Reloading,
        PhaseCarry::Stopping => Phase::Stopping,
        PhaseCarry::StopPost(n) => Phase::StopPost(n),
    }
}

fn role_out(r: Role) -> RoleCarry {
    match r {
        Role::Condition(n) => RoleCarry::Condition(n),
        Role::Pre(n) => RoleCarry::Pre(n),
        Role::Main => RoleCarry::Main,
        Role::Then(n) => RoleCarry::Then(n),
        Role::Post(n) => RoleCarry::Post(n),
        Role::Stop => RoleCarry::Stop,
        Role::StopPost(n) => RoleCarry::StopPost(n),
        Role::Reload => RoleCarry::Reload,
        Role::ReloadThen(n) => RoleCarry::ReloadThen(n),
    }
}

fn role_in(r: RoleCarry) -> Role {
    match r {
        RoleCarry::Condition(n) => Role::Condition(n),
        RoleCarry::Pre(n) => Role::Pre(n),
        RoleCarry::Main => Role::Main,
        RoleCarry::Then(n) => Role::Then(n),
        RoleCarry::Post(n) => Role::Post(n),
        RoleCarry::Stop => Role::Stop,
        RoleCarry::StopPost(n) => Role::StopPost(n),
        RoleCarry::Reload => Role::Reload,
        RoleCarry::ReloadThen(n) => Role::ReloadThen(n),
    }
}

fn timer_out(t: Timer) -> TimerKind {
    match t {
        Timer::Start => TimerKind::Start,
        Timer::ReadyWait => TimerKind::ReadyWait,
        Timer::Reload => TimerKind::Reload,
        Timer::Stop => TimerKind::Stop,
        Timer::Abandon => TimerKind::Abandon,
        Timer::Restart => TimerKind::Restart,
        Timer::Pidfile => TimerKind::Pidfile,
        Timer::Watchdog => TimerKind::Watchdog,
        Timer::RuntimeMax => TimerKind::RuntimeMax,
        Timer::Elapse => TimerKind::Elapse,
    }
}

fn timer_in(t: TimerKind) -> Timer {
    match t {
        TimerKind::Start => Timer::Start,
        TimerKind::ReadyWait => Timer::ReadyWait,
        TimerKind::Reload => Timer::Reload,
        TimerKind::Stop => Timer::Stop,
        TimerKind::Abandon => Timer::Abandon,
        TimerKind::Restart => Timer::Restart,
        TimerKind::Pidfile => Timer::Pidfile,
        TimerKind::Watchdog => Timer::Watchdog,
        TimerKind::RuntimeMax => Timer::RuntimeMax,
        TimerKind::Elapse => Timer::Elapse,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::planner::{Action, ExitStatus, Fact};
    use crate::spec::{Command, RestartPolicy, UnitSpec, UnitType};
    use crate::state::UnitState;

    fn svc(name: &str, deps: &[&str]) -> UnitSpec {
        let mut u = UnitSpec::new(name, UnitType::ForegroundSupervised);
        u.exec_start = Some(Command::new(["/bin/x"]));
        u.depends_on = deps.iter().map(|d| d.to_string()).collect();
        u.restart = RestartPolicy::Always;
        u
    }

    fn graph() -> Graph {
        Graph::build(vec![
            (svc("db", &[]), crate::spec::Origin::unplaced("t")),
            (svc("web", &["db"]), crate::spec::Origin::unplaced("t")),
        ])
        .0
    }

    fn spawn_all(p: &mut Planner, now: Instant, pid: &mut i32) {
        for _ in 0..10 {
            let acts = p.take_actions();
            if acts.is_empty() {
                return;
            }
            for a in acts {
                if let Action::Spawn { unit, role, .. } = a {
                    *pid += 1;
                    p.fact(
                        Fact::Spawned {
                            unit,
                            role,
                            pid: *pid,
                        },
                        now,
                    );
                }
            }
        }
    }

    #[test]
    fn a_resumed_planner_has_the_same_units_and_takes_no_action() {
        let t0 = Instant(1_000_000_000);
        let mut p = Planner::new(graph(), "web", t0, PlannerOptions::default());
        let mut pid = 100;
        spawn_all(&mut p, t0, &mut pid);
        // db crashes: restarted after its back-off, web stops first.
        let db_pid = p.carry(t0)[0].main_pid.unwrap();
        p.fact(
            Fact::Exited {
                pid: db_pid,
                status: ExitStatus::Code(1),
            },
            t0,
        );
        spawn_all(&mut p, t0, &mut pid);
        let t1 = t0.after(Duration::from_millis(10));
        let before = p.carry(t1);
        let wants = p.carry_wants();
        let (mut q, unplaced) = Planner::resume(
            graph(),
            "web",
            t1,
            PlannerOptions::default(),
            before.clone(),
            &wants,
            &[],
        );
        assert!(unplaced.is_empty());
        assert!(q.take_actions().is_empty(), "a resume starts nothing");
        assert_eq!(q.carry(t1), before);
        assert_eq!(q.next_deadline(), p.next_deadline());
    }

    #[test]
    fn a_running_unit_keeps_its_pid_and_is_still_supervised() {
        let t0 = Instant(5);
        let mut p = Planner::new(graph(), "web", t0, PlannerOptions::default());
        let mut pid = 200;
        spawn_all(&mut p, t0, &mut pid);
        let before = p.carry(t0);
        assert!(before.iter().all(|u| u.state == UnitState::Running));
        let (mut q, _) = Planner::resume(
            graph(),
            "web",
            t0,
            PlannerOptions::default(),
            before,
            &[],
            &[],
        );
        let web = q.graph().unit("web").unwrap();
        let web_pid = q.carry(t0)[1].main_pid.unwrap();
        q.fact(
            Fact::Exited {
                pid: web_pid,
                status: ExitStatus::Signal(9),
            },
            t0,
        );
        assert_eq!(q.state(web), UnitState::Failed);
        // The back-off passes: it is spawned again.
        q.tick(t0.after(Duration::from_secs(5)));
        assert!(q
            .take_actions()
            .iter()
            .any(|a| matches!(a, Action::Spawn { unit, .. } if *unit == web)));
    }

    #[test]
    fn records_of_units_not_in_the_graph_are_given_back() {
        let mut gone = UnitCarry::idle("gone");
        gone.main_pid = Some(77);
        let (_, unplaced) = Planner::resume(
            graph(),
            "web",
            Instant(0),
            PlannerOptions::default(),
            vec![gone.clone()],
            &[],
            &[],
        );
        assert_eq!(unplaced, [gone]);
    }
}
