//! The lifecycle of a unit's processes: one table of what each [`Event`]
//! does in each [`Phase`] ([`Planner::step`]), as s6-supervise keeps its
//! state × event table. The rules ([`super::rules`]) raise `Start` and
//! `Stop`; the init's facts and the timers raise the rest. A pair that is
//! not in the table is ignored: a report that comes too late to matter.
//!
//! The cells' handlers are in [`start`] (from `Idle` to `Up`, and
//! reloading), [`check`] (conditions, before a start) and [`stop`] (from any phase back to `Idle`, failures and
//! restarts); each cell has a test in `tests.rs`.

use super::facts::{spawn_argv, Action, Role, Whom};
use super::record::{Phase, Record, Timer};
use super::Planner;
use crate::exits::ExitStatus;
use crate::graph::{Graph, UnitId};
use crate::spec::{ExitType, Ready, RestartPolicy, Signal, UnitSpec};
use crate::state::FailureKind;
use std::cmp::Reverse;
use std::sync::Arc;
use std::time::Duration;

mod check;
#[cfg(test)]
mod check_tests;
#[cfg(test)]
mod condition_tests;
#[cfg(test)]
mod exit_tests;
#[cfg(test)]
mod exit_type_tests;
#[cfg(test)]
mod on_failure_tests;
#[cfg(test)]
mod oom_tests;
mod runtime;
#[cfg(test)]
mod runtime_tests;
#[cfg(test)]
mod socket_tests;
mod start;
mod stop;
#[cfg(test)]
mod tests;

/// Something that happens to a unit, as the lifecycle table reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Event {
    /// The start rule holds.
    Start,
    /// The stop rule holds, for this reason.
    Stop(&'static str),
    /// `initctl reload-unit`: run `exec-reload`.
    Reload,
    /// A process of this role was spawned, with this PID.
    Spawned(Role, i32),
    /// A process of this role could not be spawned, for this reason.
    SpawnFailed(Role, String),
    /// The main process of a `started-at-fork` unit, told failed
    /// ([`Event::SpawnFailed`]) after which the unit was up, failed
    /// before its program ran: its end, with systemd's exit status for
    /// that failure and why.
    ExecFailed(i32, String),
    /// The unit's current process of this role ended.
    Exited(Role, i32, ExitStatus),
    /// sd_notify `READY=1`.
    Ready,
    /// sd_notify `RELOADING=1`.
    Reloading,
    /// sd_notify `STOPPING=1`.
    Stopping,
    /// A line of output matched `ready-grep`.
    ReadyLine,
    /// The unit's `ready-bus-name` is owned on the system bus.
    BusName,
    /// The unit's `ready-bus-name`, owned before, is not any more.
    BusNameLost,
    /// The pidfile was read: the PID, or why there is none.
    Pidfile(Result<i32, String>),
    /// A forking daemon without a pidfile left no process in its cgroup.
    NoMainProcess,
    /// The unit's timer fired.
    Timer(Timer),
    /// The init checked the unit's conditions.
    Checked(super::CheckOutcome),
    /// The init bound a trigger's sockets or watched its paths (or why
    /// not).
    Armed(Result<(), String>),
    /// A trigger's socket or path event came (a path unit's: the path
    /// that fired it).
    Fired(Option<std::path::PathBuf>),
    /// An `accept: yes` socket accepted a connection; the instance made
    /// for it.
    Accepted(String),
    /// The kernel's OOM killer killed a process of the unit's cgroup.
    OomKilled,
    /// The unit's cgroup is empty (asked for after the main process of
    /// an `exit-type: cgroup` service exited).
    CgroupEmpty,
}

impl Planner {
    /// The lifecycle table: what `event` does to unit `u` in its phase.
    pub(super) fn step(&mut self, u: UnitId, event: Event) {
        use Event as E;
        use Phase as P;
        let Some(unit) = self.units.get(u.index()) else {
            return;
        };
        let rec = &self.records[u.index()];
        match (unit.phase, event) {
            // Idle: a start, the stop of an exited unit, a restart's turn.
            (P::Idle, E::Start) => self.begin_start(u),
            (P::Idle, E::Stop(why)) if rec.rare().skipped => self.stop_skipped(u, why),
            (P::Idle, E::Stop(why)) => self.stop_exited(u, why),

            // Checking conditions.
            (P::Check, E::Checked(outcome)) => self.checked(u, outcome),
            (P::Check, E::Stop(why)) => self.stop_check(u, why),
            (P::Idle, E::Timer(Timer::Restart)) => self.restart_due(u),

            // Starting: the exec-condition commands, the pre commands, then
            // the main process until ready.
            (P::Condition(n), E::Exited(Role::Condition(m), _, status)) if n == m => {
                self.condition_exited(u, n, status)
            }
            (P::Pre(n), E::Exited(Role::Pre(m), _, status)) if n == m => {
                self.pre_exited(u, n, status)
            }
            // systemd's `Type=simple`: its start was done at the fork.
            (P::Main, E::SpawnFailed(Role::Main, _)) if self.spec_of(u).started_at_fork() => {
                self.main_failed_at_fork(u)
            }
            (P::Condition(_), E::SpawnFailed(role @ Role::Condition(_), error))
            | (P::Pre(_), E::SpawnFailed(role @ Role::Pre(_), error))
            | (P::Main, E::SpawnFailed(role @ Role::Main, error)) => self.fail(
                u,
                FailureKind::Resources,
                format!("{}: {error}", role.key()),
            ),
            (P::Condition(_) | P::Pre(_) | P::Main, E::Timer(Timer::Start)) => {
                self.fail(u, FailureKind::Timeout, "start timed out".to_string())
            }
            (P::Main, E::Spawned(Role::Main, pid)) if rec.main_pid.is_none() => {
                self.main_spawned(u, pid)
            }
            (P::Main, E::Ready) if self.spec_of(u).kind.row().ready == Ready::Notified => {
                self.become_up(u, "ready")
            }
            (P::Main, E::ReadyLine) => self.become_up(u, "ready (output matched)"),
            (P::Main, E::BusName) => self.become_up(u, "ready (its D-Bus name is taken)"),
            (P::Main, E::Timer(Timer::ReadyWait)) => {
                self.become_up(u, "running (ready-wait elapsed)")
            }
            (P::Main, E::Exited(Role::Main, pid, status)) => {
                self.start_command_exited(u, pid, status)
            }
            (P::Main, E::Exited(Role::Then(n), _, status)) => self.then_exited(u, n, status),
            (P::Main, E::Exited(Role::Post(n), _, status)) => self.post_exited(u, n, status),
            (P::Main, E::SpawnFailed(role @ (Role::Then(_) | Role::Post(_)), error)) => self.fail(
                u,
                FailureKind::Resources,
                format!("{}: {error}", role.key()),
            ),
            (P::Main, E::Pidfile(result)) => self.pidfile_read(u, result),
            (P::Main, E::NoMainProcess) => self.no_main_process(u),
            (P::Main, E::Timer(Timer::Pidfile)) => self.read_pidfile(u),

            // Up, and reloading.
            (P::Up, E::Reload) => self.begin_reload(u),
            (P::Idle, E::Reload)
                if self.units[u.index()].state == crate::state::UnitState::Exited =>
            {
                self.begin_reload(u)
            }
            // systemd logs it and goes on; the next ping arms it again (the
            // runtime limit, if any, is the timer until then).
            (P::Up, E::Timer(Timer::Watchdog)) if !self.service_watchdogs => {
                self.arm_up_timer(u, None)
            }
            (P::Up, E::Timer(Timer::Watchdog)) => {
                self.fail(u, FailureKind::Watchdog, "watchdog timeout".to_string())
            }
            (P::Up, E::Timer(Timer::RuntimeMax)) => self.runtime_passed(u),
            (P::Up, E::Reloading) => self.reloading_by_itself(u),
            (P::Up | P::Reloading, E::Exited(Role::Main, pid, status))
                if self.spec_of(u).extras.exit_type == ExitType::Cgroup =>
            {
                self.main_left(u, pid, status)
            }
            (P::Up | P::Reloading, E::Exited(Role::Main, _, status)) => self.main_exited(u, status),
            (P::Main | P::Up, E::ExecFailed(status, why)) if rec.rare().failed_at_fork => {
                self.exec_failed(u, status, why)
            }
            (P::Up | P::Reloading, E::CgroupEmpty) if rec.rare().main_exit.is_some() => {
                self.cgroup_emptied(u)
            }
            (P::Stopping, E::CgroupEmpty) if rec.rare().main_exit.is_some() => {
                self.cgroup_emptied_while_stopping(u)
            }
            // In any other phase, or before the main process exited: stale
            // (the answer to a wait of an earlier run).
            (_, E::CgroupEmpty) => {}
            (P::Up | P::Reloading, E::Pidfile(result)) if rec.rare().following.is_some() => {
                self.pidfile_followed(u, result)
            }
            (P::Up | P::Reloading, E::Stopping) => self.stopping_by_itself(u),
            (P::Up, E::BusNameLost) => self.bus_name_lost(u),
            (P::Reloading, E::Ready) if rec.helper.is_none() => self.reloaded(u, "reloaded".into()),
            (P::Reloading, E::Exited(role @ (Role::Reload | Role::ReloadThen(_)), _, status)) => {
                self.reload_exited(u, role, status)
            }
            (P::Reloading, E::SpawnFailed(Role::Reload | Role::ReloadThen(_), error)) => {
                self.reload_spawn_failed(u, error)
            }
            (P::Reloading, E::Timer(Timer::Reload)) => self.reload_timed_out(u),

            // A trigger: a timer's elapse, a socket's or path's event; it
            // stops at once.
            (P::Up, E::Timer(Timer::Elapse)) => self.timer_elapsed(u),
            (P::Main, E::Armed(Ok(()))) => self.trigger_armed(u),
            (P::Main, E::Armed(Err(why))) => self.fail(u, FailureKind::Resources, why),
            (P::Up, E::Fired(path)) => self.event_fired(u, path),
            (P::Up, E::Accepted(instance)) => self.connection_accepted(u, instance),

            // The OOM killer took one of its processes: `OOMPolicy=`.
            (P::Condition(_) | P::Pre(_) | P::Main | P::Up | P::Reloading, E::OomKilled) => {
                self.oom_killed(u)
            }
            (P::Up | P::Main, E::Stop(why)) if self.spec_of(u).kind.is_trigger() => {
                self.stop_trigger(u, why)
            }

            // Stopping: exec-stop and the kill signal, then stop-post.
            (P::Condition(_) | P::Pre(_) | P::Main | P::Up | P::Reloading, E::Stop(why)) => {
                self.begin_stop(u, why)
            }
            (P::Stopping, E::Exited(Role::Main, _, status)) => {
                self.main_exited_while_stopping(u, status)
            }
            (P::Stopping, E::Exited(Role::Condition(_) | Role::Pre(_), ..)) => {
                self.check_stopped(u)
            }
            (P::Stopping, E::Exited(Role::Stop, _, status)) => self.stop_command_exited(u, status),
            (P::Stopping, E::SpawnFailed(Role::Stop, error)) => self.stop_spawn_failed(u, error),
            (P::Stopping, E::Timer(Timer::Stop)) => self.stop_timed_out(u),
            (P::Stopping, E::Timer(Timer::Abandon)) => self.abandon(u),
            (
                P::StopPost(n),
                E::Exited(Role::StopPost(m), ..) | E::SpawnFailed(Role::StopPost(m), _),
            ) if n == m => self.stop_post(u, n + 1),

            // In any phase: processes the unit no longer wants.
            (_, E::Spawned(Role::Main, pid)) => self.kill_group(u, pid, Signal::KILL),
            (_, E::Spawned(role, pid)) => self.helper_spawned(u, role, pid),
            (_, E::Pidfile(Ok(pid))) => self.kill_stray_daemon(u, pid),

            // The cells where an event changes nothing, phase by phase, so
            // that a new phase or event does not compile until its cells
            // are decided. A report that reaches a phase which does not
            // wait for it is stale (the unit moved on: a timer set by an
            // earlier phase, the end of a process already forgotten, a
            // trigger's event after it stopped); a request the phase
            // already answers (a start while starting, a stop while
            // stopping) is what it is doing.
            (
                P::Idle,
                E::Reload
                | E::SpawnFailed(..)
                | E::ExecFailed(..)
                | E::Exited(..)
                | E::Ready
                | E::Reloading
                | E::Stopping
                | E::ReadyLine
                | E::BusName
                | E::BusNameLost
                | E::Pidfile(Err(_))
                | E::NoMainProcess
                | E::Timer(_)
                | E::Checked(_)
                | E::Armed(_)
                | E::Fired(_)
                | E::Accepted(_)
                | E::OomKilled,
            ) => {}
            (
                P::Check,
                E::Start
                | E::Reload
                | E::SpawnFailed(..)
                | E::ExecFailed(..)
                | E::Exited(..)
                | E::Ready
                | E::Reloading
                | E::Stopping
                | E::ReadyLine
                | E::BusName
                | E::BusNameLost
                | E::Pidfile(Err(_))
                | E::NoMainProcess
                | E::Timer(_)
                | E::Armed(_)
                | E::Fired(_)
                | E::Accepted(_)
                | E::OomKilled,
            ) => {}
            (
                P::Condition(_) | P::Pre(_),
                E::Start
                | E::Reload
                | E::SpawnFailed(..)
                | E::ExecFailed(..)
                | E::Exited(..)
                | E::Ready
                | E::Reloading
                | E::Stopping
                | E::ReadyLine
                | E::BusName
                | E::BusNameLost
                | E::Pidfile(Err(_))
                | E::NoMainProcess
                | E::Timer(_)
                | E::Checked(_)
                | E::Armed(_)
                | E::Fired(_)
                | E::Accepted(_),
            ) => {}
            // `READY=1` of a unit that is not `foreground-notified`, too.
            (
                P::Main,
                E::Start
                | E::Reload
                | E::SpawnFailed(..)
                | E::ExecFailed(..)
                | E::Exited(..)
                | E::Ready
                | E::Reloading
                | E::Stopping
                | E::BusNameLost
                | E::Timer(_)
                | E::Checked(_)
                | E::Fired(_)
                | E::Accepted(_),
            ) => {}
            (
                P::Up,
                E::Start
                | E::SpawnFailed(..)
                | E::ExecFailed(..)
                | E::Exited(..)
                | E::Ready
                | E::ReadyLine
                | E::BusName
                | E::Pidfile(Err(_))
                | E::NoMainProcess
                | E::Timer(_)
                | E::Checked(_)
                | E::Armed(_),
            ) => {}
            // `READY=1` while `exec-reload` still runs, too: its exit ends
            // the reload.
            (
                P::Reloading,
                E::Start
                | E::Reload
                | E::SpawnFailed(..)
                | E::ExecFailed(..)
                | E::Exited(..)
                | E::Ready
                | E::Reloading
                | E::ReadyLine
                | E::BusName
                | E::BusNameLost
                | E::Pidfile(Err(_))
                | E::NoMainProcess
                | E::Timer(_)
                | E::Checked(_)
                | E::Armed(_)
                | E::Fired(_)
                | E::Accepted(_),
            ) => {}
            (
                P::Stopping,
                E::Start
                | E::Stop(_)
                | E::Reload
                | E::SpawnFailed(..)
                | E::ExecFailed(..)
                | E::Exited(..)
                | E::Ready
                | E::Reloading
                | E::Stopping
                | E::ReadyLine
                | E::BusName
                | E::BusNameLost
                | E::Pidfile(Err(_))
                | E::NoMainProcess
                | E::Timer(_)
                | E::Checked(_)
                | E::Armed(_)
                | E::Fired(_)
                | E::Accepted(_)
                | E::OomKilled,
            ) => {}
            (
                P::StopPost(_),
                E::Start
                | E::Stop(_)
                | E::Reload
                | E::SpawnFailed(..)
                | E::ExecFailed(..)
                | E::Exited(..)
                | E::Ready
                | E::Reloading
                | E::Stopping
                | E::ReadyLine
                | E::BusName
                | E::BusNameLost
                | E::Pidfile(Err(_))
                | E::NoMainProcess
                | E::Timer(_)
                | E::Checked(_)
                | E::Armed(_)
                | E::Fired(_)
                | E::Accepted(_)
                | E::OomKilled,
            ) => {}
        }
    }

    /// Bookkeeping of a spawn that failed, before the table: whether the
    /// unit awaits it (else the report is stale: the unit moved on, as for
    /// a late [`Event::Spawned`]).
    pub(super) fn forget_spawn(&mut self, u: UnitId, role: Role) -> bool {
        let (Some(unit), Some(rec)) = (self.units.get(u.index()), self.records.get_mut(u.index()))
        else {
            return false;
        };
        if role == Role::Main {
            return unit.phase == Phase::Main && rec.main_pid.is_none();
        }
        if rec.helper != Some((role, None)) {
            return false;
        }
        rec.helper = None;
        true
    }

    /// Bookkeeping of a process that ended, before the table: whether it
    /// is the unit's current process of its role (else the report is
    /// stale). The main process's group is remembered, to be killed once
    /// the unit is down, unless a start command hands over to what it
    /// started by exiting 0.
    pub(super) fn forget_process(
        &mut self,
        u: UnitId,
        role: Role,
        pid: i32,
        status: ExitStatus,
    ) -> bool {
        let i = u.index();
        if role != Role::Main {
            if self.records[i].helper_role() != Some(role) {
                return false;
            }
            self.records[i].helper = None;
            return true;
        }
        if self.records[i].main_pid != Some(pid) {
            return false;
        }
        let kind = self.spec_of(u).kind;
        let rec = &mut self.records[i];
        rec.main_pid = None;
        let hands_over = self.units[i].phase == Phase::Main
            && status.success()
            && kind.row().ready.start_command_hands_over();
        if !hands_over {
            rec.dead_leader = Some(pid);
        }
        true
    }

    /// The definition unit `u`'s processes run with: the one it started
    /// with, or (idle) the graph's.
    pub(super) fn spec_of(&self, u: UnitId) -> &UnitSpec {
        running_spec(&self.records[u.index()], &self.graph, u)
    }

    /// Asks for the process of `role` of unit `u`, its command taken from
    /// [`Planner::spec_of`] (the caller has checked that it exists).
    fn spawn(&mut self, u: UnitId, role: Role) {
        let i = u.index();
        let Planner {
            records,
            graph,
            actions,
            ..
        } = self;
        let spec = running_spec(&records[i], graph, u);
        let mainpid = records[i].main_pid;
        let Some(argv) = spawn_argv(spec, role, mainpid) else {
            debug_assert!(false, "{role:?} of {u:?} has no command");
            return;
        };
        actions.push(Action::Spawn {
            unit: u,
            role,
            argv,
            spec: spec.clone(),
            mainpid,
        });
        if role != Role::Main {
            records[i].helper = Some((role, None));
        }
    }

    /// Asks for `signal` to the process group `pid` leads (every spawn
    /// leads one). The process itself gets it too while the planner still
    /// tracks it as `u`'s (a daemon may have left its group); an untracked
    /// PID may be free again, so only its group is signalled, and a number
    /// that now belongs to another unit's process is not signalled at all.
    fn kill_group(&mut self, u: UnitId, pid: i32, signal: Signal) {
        let whom = match self.pids.get(&pid) {
            Some(&(owner, _)) if owner == u => Whom::GroupAndLeader(pid),
            Some(_) => return,
            None => Whom::Group(pid),
        };
        self.actions.push(Action::Kill {
            unit: u,
            whom,
            signal,
        });
    }

    /// Sets unit `u`'s one timer (replacing any).
    pub(super) fn set_timer(&mut self, u: UnitId, after: Duration, kind: Timer) {
        self.set_timer_at(u, self.now.after(after), kind);
    }

    /// Sets unit `u`'s one timer to fire at `t` (replacing any).
    pub(super) fn set_timer_at(&mut self, u: UnitId, t: crate::time::Instant, kind: Timer) {
        let r = &mut self.records[u.index()];
        r.timer_gen += 1;
        r.timer = Some((t, kind));
        self.timers.push(Reverse((t, u.0, r.timer_gen)));
    }

    pub(super) fn clear_timer(&mut self, u: UnitId) {
        let r = &mut self.records[u.index()];
        if r.timer.is_some() {
            r.timer = None;
            r.timer_gen += 1;
        }
    }

    /// The restart policy the unit runs with.
    fn restart_policy(&self, u: UnitId) -> RestartPolicy {
        let own = self.records[u.index()]
            .running_spec
            .as_ref()
            // A trigger is not run yet: its failure says so, once.
            .filter(|s| !s.kind.is_trigger())
            .map_or(RestartPolicy::No, |s| s.restart);
        if own != RestartPolicy::Always && self.upheld(u) {
            return RestartPolicy::Always;
        }
        own
    }

    /// Whether an active unit upholds `u` (`upholds`, systemd's
    /// `Upholds=`): then `u` restarts whenever it ends, as with `restart:
    /// always`. Read at an exit or a failure, over `u`'s dependents only;
    /// an upheld unit that is not running is `uphold.rs`'s.
    pub(super) fn upheld(&self, u: UnitId) -> bool {
        if self.spec_of(u).kind.is_trigger() {
            return false;
        }
        self.graph.dependents(u).iter().any(|d| {
            d.kind == crate::state::DepKind::Wants
                && self.units[d.unit.index()].state.is_active()
                && self
                    .graph
                    .node(d.unit)
                    .spec
                    .extras
                    .upholds
                    .iter()
                    .any(|t| t == self.graph.dep_target(d.unit, d.index))
        })
    }
}

/// [`Planner::spec_of`], for a caller that holds other fields of the
/// planner borrowed.
impl Planner {
    /// The definition the unit's current processes were spawned with
    /// (what [`Planner::spawn`] runs).
    pub(super) fn spawned_spec(&self, u: UnitId) -> &Arc<UnitSpec> {
        running_spec(&self.records[u.index()], &self.graph, u)
    }
}

fn running_spec<'a>(rec: &'a Record, graph: &'a Graph, u: UnitId) -> &'a Arc<UnitSpec> {
    rec.running_spec
        .as_ref()
        .unwrap_or_else(|| &graph.node(u).spec)
}
