//! The lifecycle table's cells on the way down: a stop (`exec-stop` or the
//! kill signal, SIGKILL after `stop-timeout`), `exec-stop-post`, and back
//! to `Idle` as `failed` (with the restart back-off), `exited`, `waiting` or
//! `disabled`.

use super::super::facts::Role;
use super::super::facts::{Action, Whom};
use super::super::record::{Failure, Phase, Status, Timer};
use super::super::{Planner, MIN_RESTART_DELAY};
use crate::context::process::{KillMode, OomPolicy};
use crate::exits::ExitStatus;
use crate::graph::UnitId;
use crate::spec::{defaults, Ready, Runs, Signal};
use crate::state::{FailureKind, UnitState};
use std::time::Duration;

impl Planner {
    /// A failure: record why, stop what is left, and (after stop-post) be
    /// `failed`, restarting if the policy allows for a failure of this kind
    /// ([`crate::spec::RestartPolicy::restarts_after`]: every failure counts for
    /// `on-failure`). `always` also restarts after a clean exit, which
    /// reaches here from [`Planner::main_exited`].
    pub(in crate::planner) fn fail(&mut self, u: UnitId, kind: FailureKind, why: String) {
        let restart = self.restart_policy(u).restarts_after(Some(kind));
        self.fail_restarting(u, Failure::new(kind, why), restart);
    }

    /// The kernel's OOM killer killed one of the unit's processes (the
    /// init tells it before that process's exit, as systemd checks before
    /// it handles the exit): with `OOMPolicy=stop` or `kill` the unit
    /// fails with systemd's `oom-kill` and what is left of it is stopped;
    /// with `continue` it goes on, and a main process's end is judged as
    /// any other.
    pub(super) fn oom_killed(&mut self, u: UnitId) {
        let policy = self.spec_of(u).extras.context.oom_policy;
        if policy != OomPolicy::Continue {
            let why = format!(
                "a process was killed by the OOM killer (OOMPolicy={})",
                policy.as_str()
            );
            self.fail(u, FailureKind::OomKill, why);
        }
    }

    /// A failure by a helper's exit (`exec-start-pre`, `exec-start-post`):
    /// as [`Self::fail`], of that exit's kind.
    pub(super) fn fail_status(&mut self, u: UnitId, status: ExitStatus, why: String) {
        let failure = Failure::of_exit(status, why);
        let restart = self.restart_policy(u).restarts_after(Some(failure.kind));
        self.fail_restarting(u, failure, restart);
    }

    /// A failure by an exit status of the main process: as [`Self::fail`],
    /// but `restart-prevent-exit-status` keeps the unit from restarting
    /// and `restart-force-exit-status` restarts it whatever its `restart`.
    pub(super) fn fail_exit(&mut self, u: UnitId, status: ExitStatus, why: String) {
        let failure = Failure::of_exit(status, why);
        let extras = &self.spec_of(u).extras;
        let restart = if extras.restart_prevent_exit_status.contains(status) {
            false
        } else {
            extras.restart_force_exit_status.contains(status)
                || self.restart_policy(u).restarts_after(Some(failure.kind))
        };
        self.fail_restarting(u, failure, restart);
    }

    /// A clean exit that the policy restarts after (`always`,
    /// `on-success`): through `failed` and the back-off, as a failure
    /// would, so that a daemon that keeps exiting does not spin.
    fn restart_after_clean_exit(&mut self, u: UnitId, status: ExitStatus) {
        self.fail_restarting(u, Failure::of_exit(status, status.describe()), true);
    }

    fn fail_restarting(&mut self, u: UnitId, failure: Failure, restart: bool) {
        let i = u.index();
        self.records[i].restart_due = restart;
        let why = failure.why.clone();
        self.records[i].rare_mut().failure = Some(failure);
        if self.units[i].up() {
            let rec = &self.records[i];
            if rec.main_pid.is_some() || rec.helper.is_some() {
                self.begin_stop(u, Status::Text(why));
            } else {
                self.finish_main(u, false);
            }
        }
    }

    /// Up + stop rule (or a failure): `exec-stop`, or the kill signal (a
    /// failure goes straight to the kill signal, as systemd's start
    /// timeout and watchdog do).
    pub(super) fn begin_stop(&mut self, u: UnitId, why: impl Into<Status>) {
        let exec_stop = self.records[u.index()].rare().failure.is_none();
        self.stop_running(u, why, exec_stop);
    }

    /// [`Self::begin_stop`], running `exec-stop` (if the unit has one and
    /// is up) when `exec_stop` allows it.
    pub(super) fn stop_running(&mut self, u: UnitId, why: impl Into<Status>, exec_stop: bool) {
        let i = u.index();
        self.leave_starting(u);
        let spec = self.spec_of(u);
        let (kind, stop_timeout, has_stop) =
            (spec.kind, spec.stop_timeout, spec.exec_stop.is_some());
        let was = self.units[i].phase;
        if kind.row().runs == Runs::Nothing {
            self.units[i].phase = Phase::Idle;
            self.after_stop(u);
            return;
        }
        self.units[i].phase = Phase::Stopping;
        self.clear_timer(u);
        self.set_timer(u, stop_timeout, Timer::Stop);
        self.set_state(u, UnitState::Stopping, why);
        // A helper still running (pre, reload) is killed outright.
        if let Some((role, Some(pid))) = self.records[i].helper {
            if role != Role::Stop {
                self.kill_group(u, pid, Signal::KILL);
            }
        }
        let can_exec_stop = matches!(was, Phase::Up | Phase::Reloading) && exec_stop;
        if has_stop && can_exec_stop {
            self.spawn(u, Role::Stop);
        } else {
            self.signal_main(u);
            self.check_stopped(u);
        }
    }

    /// `Idle` (exited) + stop rule, for a unit with stop commands:
    /// `exec-stop`, then `exec-stop-post`.
    pub(super) fn stop_exited(&mut self, u: UnitId, why: &'static str) {
        let i = u.index();
        if self.records[i].running_spec.is_none() {
            self.records[i].running_spec = Some(self.graph.node(u).spec.clone());
        }
        let spec = self.spec_of(u);
        let (stop_timeout, has_stop) = (spec.stop_timeout, spec.exec_stop.is_some());
        self.records[i].exit_ok = false;
        self.records[i].rare_reset(|r| r.failure = None);
        self.units[i].phase = Phase::Stopping;
        self.set_timer(u, stop_timeout, Timer::Stop);
        self.set_state(u, UnitState::Stopping, why);
        if has_stop {
            self.spawn(u, Role::Stop);
        } else {
            self.check_stopped(u);
        }
    }

    /// `Up`/`Reloading` + the main process exited by itself: a clean exit
    /// (unless `restart: always`) is `exited` after stop-post; anything
    /// else is a failure.
    ///
    /// A forking daemon with a pidfile may have moved to a new main
    /// process (nginx's binary upgrade: the new master writes the pidfile,
    /// then the old one exits): as systemd does, the pidfile is read first,
    /// and only a file that names no other running process makes this
    /// exit the end of the main process ([`Planner::pidfile_followed`]).
    pub(super) fn main_exited(&mut self, u: UnitId, status: ExitStatus) {
        let spec = self.spec_of(u);
        if let Some(path) = spec
            .extras
            .pidfile
            .clone()
            .filter(|_| spec.kind.row().ready == Ready::Pidfile)
        {
            self.records[u.index()].rare_mut().following = Some(status);
            self.actions.push(Action::ReadPidfile { unit: u, path });
            return;
        }
        self.main_ended(u, status);
    }

    /// `Up`/`Reloading` + the main process of an `exit-type: cgroup`
    /// service exited: it stays up, its exit kept, until its cgroup is
    /// empty (the init asked). A stop meanwhile signals what is left in
    /// the cgroup ([`Self::signal_main`]).
    pub(super) fn main_left(&mut self, u: UnitId, pid: i32, status: ExitStatus) {
        let rec = &mut self.records[u.index()];
        rec.rare_mut().main_exit = Some(status);
        // Its group's number is not signalled later: once its members are
        // gone it may be another's.
        if rec.dead_leader == Some(pid) {
            rec.dead_leader = None;
        }
        rec.status = Status::Text(format!(
            "running (main process {}; until its cgroup is empty)",
            status.describe()
        ));
        self.actions.push(Action::AwaitEmpty { unit: u });
        self.mark_changed(u);
    }

    /// `Stopping` + the cgroup of an `exit-type: cgroup` service whose
    /// main process had exited is empty: the stop goes on.
    pub(super) fn cgroup_emptied_while_stopping(&mut self, u: UnitId) {
        self.records[u.index()].rare_reset(|r| r.main_exit = None);
        self.check_stopped(u);
    }

    /// `Up`/`Reloading` + the cgroup of an `exit-type: cgroup` service
    /// whose main process exited is empty: the service ends, judged by
    /// that exit as with `exit-type: main`. One with no main process
    /// (`GuessMainPID=no`) and `RemainAfterExit=yes` is `exited` at once,
    /// as systemd's `service_enter_running` makes it: its
    /// `exec-stop-post` runs at its stop, not now.
    pub(super) fn cgroup_emptied(&mut self, u: UnitId) {
        let rec = &mut self.records[u.index()];
        let Some(status) = rec.rare().main_exit else {
            return;
        };
        rec.rare_reset(|r| r.main_exit = None);
        if self.guesses_no_main_pid(u) && self.spec_of(u).remain_after_exit() {
            self.oneshot_exited(u);
        } else {
            self.main_exited(u, status);
        }
    }

    /// `Up`/`Reloading` + the pidfile read again after the main process
    /// exited: a running process other than the one that exited is the
    /// main process now; else the exit stands.
    pub(super) fn pidfile_followed(&mut self, u: UnitId, result: Result<i32, String>) {
        let rec = &mut self.records[u.index()];
        let Some(status) = rec.rare().following else {
            return;
        };
        rec.rare_reset(|r| r.following = None);
        match result {
            Ok(pid) if rec.main_pid != Some(pid) => {
                rec.main_pid = Some(pid);
                rec.status = Status::Text(format!(
                    "running (main process now {pid}, from the pidfile)"
                ));
                self.pids.insert(pid, (u, Role::Main));
                self.mark_changed(u);
            }
            _ => self.main_ended(u, status),
        }
    }

    /// The main process's end while up: a clean exit is `exited`, unless
    /// the policy restarts after one; anything else a failure.
    fn main_ended(&mut self, u: UnitId, status: ExitStatus) {
        let i = u.index();
        if !self.main_ended_cleanly(u, status) {
            self.fail_exit(u, status, status.describe());
        } else if self.restart_policy(u).restarts_after(None) {
            self.restart_after_clean_exit(u, status);
        } else {
            let rec = &mut self.records[i];
            rec.rare_reset(|r| r.failure = None);
            rec.exit_ok = true;
            rec.status = clean_end(status);
            self.finish_main(u, true);
        }
    }

    /// `Up`/`Reloading` + `STOPPING=1`: the unit stops by itself; its exit
    /// is then judged as in `Up` ([`Planner::main_exited_while_stopping`]).
    pub(super) fn stopping_by_itself(&mut self, u: UnitId) {
        let i = u.index();
        self.units[i].phase = Phase::Stopping;
        let rec = &mut self.records[i];
        rec.rare_reset(|r| r.failure = None);
        rec.self_stop = true;
        let t = rec
            .running_spec
            .as_ref()
            .map_or(defaults::STOP_TIMEOUT, |s| s.stop_timeout);
        self.set_timer(u, t, Timer::Stop);
        self.set_state(u, UnitState::Stopping, "stopping (STOPPING=1)");
    }

    /// `Up` + its `ready-bus-name` released (the daemon left the bus, or
    /// the bus came back without it: `systemctl restart dbus`): stopped,
    /// as systemd stops a `Type=dbus` service whose name is gone, and its
    /// end judged as one it asked for itself, so that `restart: always`
    /// (logind's) brings it back onto the bus.
    pub(super) fn bus_name_lost(&mut self, u: UnitId) {
        self.begin_stop(u, "stopping (its D-Bus name was released)");
        let rec = &mut self.records[u.index()];
        rec.rare_reset(|r| r.failure = None);
        rec.self_stop = true;
    }

    /// `Stopping` + the main process exited. After `STOPPING=1` the unit
    /// ends by itself: the exit is judged as in `Up` (a clean exit is
    /// `exited`, anything else a failure); as a stop the init asked for,
    /// it would go back to `waiting` and start again at once.
    pub(super) fn main_exited_while_stopping(&mut self, u: UnitId, status: ExitStatus) {
        let restart = self.restart_policy(u);
        let ok = self.main_ended_cleanly(u, status);
        let rec = &mut self.records[u.index()];
        if std::mem::take(&mut rec.self_stop) {
            if ok && !restart.restarts_after(None) {
                rec.rare_reset(|r| r.failure = None);
                rec.exit_ok = true;
                rec.status = clean_end(status);
            } else {
                let failure = Failure::of_exit(status, status.describe());
                rec.restart_due = restart.restarts_after(Some(failure.kind).filter(|_| !ok));
                rec.rare_mut().failure = Some(failure);
            }
        }
        self.check_stopped(u);
    }

    /// `Stopping` + `exec-stop` exited: what it left running gets the kill
    /// signal.
    pub(super) fn stop_command_exited(&mut self, u: UnitId, status: ExitStatus) {
        if !status.success() {
            self.records[u.index()].status =
                Status::Text(format!("exec-stop: {}", status.describe()));
        }
        self.signal_main(u);
        self.check_stopped(u);
    }

    /// `Stopping` + `exec-stop` could not be spawned: the kill signal
    /// instead.
    pub(super) fn stop_spawn_failed(&mut self, u: UnitId, error: String) {
        let rec = &mut self.records[u.index()];
        rec.status = Status::Text(format!("{}: {error}", Role::Stop.key()));
        self.signal_main(u);
        self.check_stopped(u);
    }

    /// `Stopping` + `stop-timeout`: SIGKILL to everything, and another
    /// `stop-timeout` before the processes are abandoned. With
    /// `SendSIGKILL=no`, as systemd ("timed out. Skipping SIGKILL."): no
    /// signal, the processes are abandoned at once and the unit fails with
    /// `timeout` (unless it had failed already: the first failure is its
    /// result).
    pub(super) fn stop_timed_out(&mut self, u: UnitId) {
        if !self.sends_sigkill(u) {
            let rec = &mut self.records[u.index()];
            if rec.rare().failure.is_none() {
                rec.rare_mut().failure = Some(Failure::new(
                    FailureKind::Timeout,
                    "stop timed out; SIGKILL skipped (SendSIGKILL=no)".to_string(),
                ));
            }
            self.abandon(u);
            return;
        }
        let rec = &self.records[u.index()];
        let (main, helper) = (rec.main_pid, rec.helper.and_then(|h| h.1));
        for pid in main.into_iter().chain(helper) {
            self.kill_group(u, pid, Signal::KILL);
        }
        if self.records[u.index()].rare().main_exit.is_some() {
            self.kill_rest(u, Signal::KILL);
        }
        let t = self.records[u.index()]
            .running_spec
            .as_ref()
            .map_or(defaults::STOP_TIMEOUT, |s| s.stop_timeout);
        self.set_timer(u, t, Timer::Abandon);
        self.records[u.index()].status = Status::Fixed("stop timed out; sent SIGKILL");
        self.mark_changed(u);
    }

    /// `Stopping` + another `stop-timeout` after SIGKILL: the processes did
    /// not die even of SIGKILL (uninterruptible sleep): stop waiting.
    pub(super) fn abandon(&mut self, u: UnitId) {
        let rec = &mut self.records[u.index()];
        let (main, helper) = (rec.main_pid.take(), rec.helper.take());
        rec.rare_reset(|r| r.main_exit = None);
        rec.status = Status::Fixed("processes did not die; abandoned");
        if let Some(pid) = main {
            self.pids.remove(&pid);
        }
        if let Some((_, Some(pid))) = helper {
            self.pids.remove(&pid);
        }
        self.check_stopped(u);
    }

    /// Whether the unit's stop may end with `SIGKILL` (`SendSIGKILL=`, of
    /// the definition it runs with).
    fn sends_sigkill(&self, u: UnitId) -> bool {
        let rec = &self.records[u.index()];
        !super::running_spec(rec, &self.graph, u)
            .extras
            .context
            .no_sigkill
    }

    /// Sends the unit's kill signal to its main process group, and then
    /// `SIGHUP` if `SendSIGHUP=` asks for it (systemd sends none after a
    /// `SIGKILL` or a `SIGHUP`).
    fn signal_main(&mut self, u: UnitId) {
        let rec = &self.records[u.index()];
        // `RestartKillSignal=`: a stop that is the first half of a restart
        // asked for by hand.
        let restart = self.units[u.index()].restart_requested;
        let (signal, hup) = rec
            .running_spec
            .as_ref()
            .map_or((Signal::TERM, false), |s| {
                let signal = match s.extras.restart_kill_signal {
                    Some(r) if restart => r,
                    _ => s.kill_signal,
                };
                (signal, s.extras.context.send_sighup)
            });
        // A `background-scripted` unit has no main process once its start
        // script exited: the process group that script left behind gets it.
        if let Some(pid) = rec.main_pid.or(rec.rare().script_group) {
            self.kill_group(u, pid, signal);
            if hup && signal != Signal::KILL && signal != Signal::HUP {
                self.kill_group(u, pid, Signal::HUP);
            }
        } else if rec.rare().main_exit.is_some() {
            self.signal_rest(u, signal, hup);
        }
    }

    /// The stop signal of a service with no main process that lives on
    /// its cgroup (`GuessMainPID=no`, or `exit-type: cgroup` once its main
    /// process exited), by `KillMode=`, as systemd's `unit_kill_context`
    /// with no main PID known: `control-group` signals the cgroup and the
    /// stop waits for it to be empty; `mixed` signals the main process
    /// alone but for `SIGKILL`, and there is none, so (as systemd's
    /// `service_enter_signal`, which goes on to its `SIGKILL` step when no
    /// process got the first signal) the cgroup gets `SIGKILL` at once,
    /// unless `SendSIGKILL=no`; `process` and `none` signal nobody: the
    /// stop goes on at once and what the cgroup holds keeps running (a
    /// SysV script's daemons, which its `stop` command ended or not).
    fn signal_rest(&mut self, u: UnitId, signal: Signal, hup: bool) {
        let rec = &self.records[u.index()];
        let mode = super::running_spec(rec, &self.graph, u)
            .extras
            .context
            .kill_mode;
        let signal = match mode {
            KillMode::ControlGroup => signal,
            KillMode::Mixed if self.sends_sigkill(u) => Signal::KILL,
            KillMode::Mixed | KillMode::Process | KillMode::None => {
                self.records[u.index()].rare_reset(|r| r.main_exit = None);
                return;
            }
        };
        self.kill_rest(u, signal);
        if hup && signal != Signal::KILL && signal != Signal::HUP {
            self.kill_rest(u, Signal::HUP);
        }
    }

    /// `signal` to what is in the unit's cgroup.
    fn kill_rest(&mut self, u: UnitId, signal: Signal) {
        self.actions.push(Action::Kill {
            unit: u,
            whom: Whom::Rest,
            signal,
        });
    }

    /// In `Stopping`: once the main process and any helper are gone (and,
    /// for an `exit-type: cgroup` service whose main process had exited,
    /// its cgroup is empty), on to stop-post.
    pub(super) fn check_stopped(&mut self, u: UnitId) {
        let rec = &self.records[u.index()];
        if self.units[u.index()].phase == Phase::Stopping
            && rec.main_pid.is_none()
            && rec.helper.is_none()
            && rec.rare().main_exit.is_none()
        {
            self.finish_main(u, false);
        }
    }

    /// The main process is gone: clean its process group, run stop-post.
    fn finish_main(&mut self, u: UnitId, clean_exit: bool) {
        let i = u.index();
        self.leave_starting(u);
        self.clear_timer(u);
        // Leftovers in the dead main process's group (an nginx master
        // killed by SIGKILL leaves its workers) get SIGKILL. The group
        // outlives its leader while it has members, so its number cannot
        // have been reused.
        if let Some(pgid) = self.records[i].dead_leader.take() {
            if self.sends_sigkill(u) {
                self.kill_group(u, pgid, Signal::KILL);
            }
        }
        if clean_exit {
            self.records[i].rare_reset(|r| r.failure = None);
        }
        self.stop_post(u, 0);
    }

    /// `exec-stop-post` number `n`, or (none left) `Idle`.
    pub(in crate::planner) fn stop_post(&mut self, u: UnitId, n: u16) {
        let i = u.index();
        let spec = self.spec_of(u);
        let (has_cmd, stop_timeout) = (
            (n as usize) < spec.extras.exec_stop_post.len(),
            spec.stop_timeout,
        );
        if !has_cmd {
            self.units[i].phase = Phase::Idle;
            self.after_stop(u);
            return;
        }
        if !matches!(self.units[i].phase, Phase::StopPost(_)) {
            self.set_state(u, UnitState::Stopping, "running exec-stop-post");
            self.set_timer(u, stop_timeout, Timer::Stop);
        }
        self.units[i].phase = Phase::StopPost(n);
        self.spawn(u, Role::StopPost(n));
    }

    /// The unit is idle again: failed (maybe restarting), exited, waiting
    /// or disabled.
    fn after_stop(&mut self, u: UnitId) {
        let i = u.index();
        self.clear_timer(u);
        let now = self.now;
        let unit = &mut self.units[i];
        let rec = &mut self.records[i];
        rec.main_pid = None;
        rec.helper = None;
        unit.to_stop = false;
        rec.rare_reset(|r| r.notify_status = None);
        rec.self_stop = false;
        rec.dead_leader = None;
        rec.rare_reset(|r| r.script_group = None);
        let was_active_long = rec
            .active_at
            .is_some_and(|t| now.since(t) >= defaults::RESTART_RESET_AFTER)
            && unit.state.is_active();
        let requested = unit.restart_requested || unit.spec_changed;
        unit.restart_requested = false;
        unit.spec_changed = false;
        // The restart delays, from the definition the unit ran with (it is
        // let go of here).
        let spec = super::running_spec(rec, &self.graph, u);
        let (restart_delay, restart_max_delay) = (spec.restart_delay, spec.restart_max_delay);
        rec.running_spec = None;
        let required = self.is_required(u) && !self.shutting_down;
        let rec = &mut self.records[i];
        if let Some(why) = rec.rare().failure.as_ref().map(|f| f.why.clone()) {
            if was_active_long {
                rec.attempt = 0;
            }
            let restart = rec.restart_due && !self.shutting_down && !requested;
            if restart {
                let delay = restart_delay_after(rec.attempt, restart_delay, restart_max_delay);
                rec.attempt = rec.attempt.saturating_add(1);
                self.set_state(u, UnitState::Failed, why);
                self.set_timer(u, delay, Timer::Restart);
            } else {
                self.set_state(u, UnitState::Failed, why);
                self.start_on_failure(u);
                self.propagate_stop(u);
            }
        } else if rec.exit_ok && !requested && required {
            self.set_state(u, UnitState::Exited, "exit status 0");
            if !self.spec_of(u).remain_after_exit() {
                self.start_on_success(u);
                self.propagate_stop(u);
            }
        } else if !required {
            self.set_state(u, UnitState::Disabled, "stopped");
            self.start_on_success(u);
            self.propagate_stop(u);
        } else {
            let why = rec.status.clone();
            self.set_state(u, UnitState::Waiting, why);
            if requested {
                self.records[i].status = Status::Fixed("restarting");
            }
        }
        self.tell_dependents(u);
        self.push(u);
        self.push_neighbours(u, false);
    }
}

/// The status of a unit whose main process ended cleanly: its exit status
/// 0, or the signal a daemon died of (`daemon-clean-signals`).
fn clean_end(status: ExitStatus) -> Status {
    match status {
        ExitStatus::Code(0) => Status::Fixed("exit status 0"),
        other => Status::Text(other.describe()),
    }
}

/// The delay before restart attempt number `attempt + 1`: `delay` first,
/// then doubling from it (from at least [`MIN_RESTART_DELAY`], since a zero
/// delay, systemd's `RestartSec=0`, would never back off) up to `max`.
fn restart_delay_after(attempt: u32, delay: Duration, max: Duration) -> Duration {
    if attempt == 0 {
        return delay;
    }
    let first = delay.max(MIN_RESTART_DELAY);
    let mult = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
    first.saturating_mul(mult).min(max.max(first))
}
