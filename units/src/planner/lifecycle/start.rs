//! The lifecycle table's cells on the way up: from `Idle` through the pre
//! commands and the main process to `Up`, and reloading.

use super::super::facts::{Action, Role, Whom};
use super::super::record::{count_in_window, Failure, Phase, Status, Timer};
use super::super::Planner;
use crate::exits::ExitStatus;
use crate::graph::UnitId;
use crate::spec::{defaults, Ready, Runs, Signal};
use crate::state::{FailureKind, UnitState};
use std::time::Duration;

impl Planner {
    /// `Idle` + start rule: a fresh start with the graph's definition.
    pub(super) fn begin_start(&mut self, u: UnitId) {
        let i = u.index();
        let spec = self.graph.node(u).spec.clone();
        if let Some((interval, burst)) = spec.start_limit() {
            let now = self.now;
            let starts = &mut self.records[i].rare_mut().starts;
            if count_in_window(starts, now, interval) > burst {
                self.refuse_start(u, interval, burst);
                return;
            }
        }
        let has_conditions = !spec.extras.conditions.is_empty();
        let unit = &mut self.units[i];
        let rec = &mut self.records[i];
        if unit.restarting() {
            rec.restarts += 1;
        }
        unit.restart_ready = false;
        unit.restart_requested = false;
        unit.spec_changed = false;
        rec.running_spec = Some(spec);
        rec.rare_reset(|r| {
            r.failure = None;
            r.script_group = None;
            r.pidfile_tries = 0;
            r.pidfile_deadline = None;
            r.skipped = false;
            r.no_main = false;
            r.main_exit = None;
            r.notify_status = None;
        });
        rec.exit_ok = false;
        rec.self_stop = false;
        rec.dead_leader = None;
        rec.start_at = Some(self.now);
        rec.main_pid = None;
        self.clear_timer(u);
        self.units[i].kept_failed = false;
        if has_conditions {
            self.begin_check(u);
            return;
        }
        self.run_start(u);
    }

    /// `Idle` + start rule past the unit's start limit
    /// (`start-limit-burst` starts in `start-limit-interval-sec`): nothing
    /// runs and the unit is `failed` for good, as systemd's
    /// `start-limit-hit`; `on-failure` units start. A start once the
    /// window has passed (`initctl restart`, a target, a reload that
    /// changes the unit) is counted afresh.
    fn refuse_start(&mut self, u: UnitId, interval: Duration, burst: u32) {
        let i = u.index();
        let unit = &mut self.units[i];
        unit.restart_ready = false;
        unit.restart_requested = false;
        unit.spec_changed = false;
        let rec = &mut self.records[i];
        rec.restart_due = false;
        let why = format!(
            "start limit hit: more than {burst} starts in {}",
            crate::duration::format_duration(interval)
        );
        rec.rare_mut().failure = Some(Failure::new(FailureKind::StartLimitHit, why.clone()));
        self.set_state(u, UnitState::Failed, why);
        self.start_on_failure(u);
        self.tell_dependents(u);
        self.push_neighbours(u, false);
        // Failed already (a restart refused): looked at again all the
        // same, as an upheld unit is started again (`uphold.rs`).
        self.push(u);
    }

    /// The start, once the conditions hold (or there are none): a timer
    /// is armed, a `virtual` unit is up at once; any other runs its pre
    /// commands or its main process, bounded by `start-timeout`.
    pub(super) fn run_start(&mut self, u: UnitId) {
        let i = u.index();
        let spec = self.spec_of(u);
        let (kind, start_timeout, has_condition) = (
            spec.kind,
            spec.start_timeout,
            !spec.extras.exec_condition.is_empty(),
        );
        if kind.row().ready == Ready::Clock {
            self.start_timer(u);
            return;
        }
        if kind.row().runs == Runs::Nothing {
            self.units[i].phase = Phase::Up;
            self.set_state(u, UnitState::Running, "active");
            return;
        }
        self.starting += 1;
        self.set_timer(u, start_timeout, Timer::Start);
        if has_condition {
            self.units[i].phase = Phase::Condition(0);
            self.set_state(u, UnitState::Starting, "running exec-condition");
            self.spawn(u, Role::Condition(0));
        } else {
            self.start_pre(u);
        }
    }

    /// The exec-condition commands held (or there are none): the pre
    /// commands, or the main process.
    fn start_pre(&mut self, u: UnitId) {
        if self.spec_of(u).exec_start_pre.is_empty() {
            self.start_main(u);
            return;
        }
        self.units[u.index()].phase = Phase::Pre(0);
        self.set_state(u, UnitState::Starting, "running exec-start-pre");
        self.spawn(u, Role::Pre(0));
    }

    /// `Condition(n)` + exec-condition command `n` exited: with success
    /// (or its failure ignored) the next one, or the pre commands; with
    /// 1 to 254 the start is skipped as systemd's (`exec-condition`: not
    /// failed, no restart, nothing else runs); 255 or a signal fails it.
    pub(super) fn condition_exited(&mut self, u: UnitId, n: u16, status: ExitStatus) {
        let (ignore, count) = {
            let c = &self.spec_of(u).extras.exec_condition;
            (c.get(n as usize).is_some_and(|c| c.ignore_failure), c.len())
        };
        match status {
            _ if status.success() || ignore => {}
            ExitStatus::Code(1..=254) => {
                self.skip_by_condition(u, n, status);
                return;
            }
            _ => {
                self.fail_status(u, status, format!("exec-condition: {}", status.describe()));
                return;
            }
        }
        let next = n + 1;
        if (next as usize) < count {
            self.units[u.index()].phase = Phase::Condition(next);
            self.spawn(u, Role::Condition(next));
        } else {
            self.start_pre(u);
        }
    }

    /// An exec-condition command said no: as a failed condition, the unit
    /// is skipped (`exited`, settled and not failed), its result
    /// `exec-condition`.
    fn skip_by_condition(&mut self, u: UnitId, n: u16, status: ExitStatus) {
        let i = u.index();
        self.leave_starting(u);
        self.clear_timer(u);
        self.units[i].phase = Phase::Idle;
        let rec = &mut self.records[i];
        rec.helper = None;
        rec.running_spec = None;
        rec.restart_due = false;
        rec.attempt = 0;
        let why = format!(
            "skipped: exec-condition {n} exited with {}",
            status.describe()
        );
        rec.rare_mut().skipped = true;
        rec.rare_mut().failure = Some(Failure::new(FailureKind::ExecCondition, why.clone()));
        self.set_state(u, UnitState::Exited, why);
    }

    /// The pre commands are done: the main process.
    fn start_main(&mut self, u: UnitId) {
        let (kind, has_main) = (self.spec_of(u).kind, self.spec_of(u).exec_start.is_some());
        self.units[u.index()].phase = Phase::Main;
        self.records[u.index()].helper = None;
        self.set_state(u, UnitState::Starting, "starting");
        if has_main {
            self.spawn(u, Role::Main);
        } else if kind.row().ready == Ready::Adopted {
            let spec = self.records[u.index()]
                .running_spec
                .clone()
                .unwrap_or_else(|| self.graph.node(u).spec.clone());
            self.actions.push(Action::Adopt { unit: u, spec });
        } else if let Ready::Armed(arm) = kind.row().ready {
            // A socket or path unit: the init binds or watches; up at its
            // answer.
            let spec = self.records[u.index()]
                .running_spec
                .clone()
                .unwrap_or_else(|| self.graph.node(u).spec.clone());
            self.set_state(u, UnitState::Starting, arm.arming_status());
            self.actions.push(Action::Arm { unit: u, spec });
        } else {
            self.fail(u, FailureKind::Resources, "no exec-start".to_string());
        }
    }

    /// Gives back the start slot, if the unit holds one.
    pub(in crate::planner) fn leave_starting(&mut self, u: UnitId) {
        if self.units[u.index()].phase.starting() {
            self.starting = self.starting.saturating_sub(1);
        }
    }

    /// `Main` + ready (`READY=1`, `ready-grep`, `ready-wait`, pidfile):
    /// the `exec-start-post` commands, if any (still starting, the start
    /// timeout running), else `Up`, running. Ready again while they run:
    /// nothing more.
    pub(in crate::planner) fn become_up(&mut self, u: UnitId, status: &'static str) {
        if self.units[u.index()].phase == Phase::Main {
            if matches!(self.records[u.index()].helper_role(), Some(Role::Post(_))) {
                return;
            }
            if !self.spec_of(u).extras.exec_start_post.is_empty() {
                self.set_state(u, UnitState::Starting, "running exec-start-post");
                self.spawn(u, Role::Post(0));
                return;
            }
        }
        if self.records[u.index()].rare().no_main {
            self.oneshot_exited(u);
        } else {
            self.up_now(u, status);
        }
    }

    /// `Up`, running, at once.
    fn up_now(&mut self, u: UnitId, status: &'static str) {
        self.leave_starting(u);
        self.clear_timer(u);
        self.units[u.index()].phase = Phase::Up;
        self.records[u.index()].helper = None;
        self.records[u.index()].rare_reset(|r| r.runtime_extended = None);
        self.set_state(u, UnitState::Running, status);
        self.arm_running(u);
        // Up with no main process to follow (`GuessMainPID=no`): it lasts
        // while its cgroup holds a process.
        if self.records[u.index()].rare().main_exit.is_some() {
            self.actions.push(Action::AwaitEmpty { unit: u });
        }
    }

    /// `Up` with `watchdog-sec`, a `WATCHDOG=1`: the next one is due
    /// within it (the unit's one timer is the watchdog's while it is up,
    /// unless the runtime limit comes first: `runtime.rs`).
    pub(in crate::planner) fn arm_watchdog(&mut self, u: UnitId) {
        if self.spec_of(u).watchdog().is_some() {
            self.arm_running(u);
        }
    }

    /// `Pre(n)` + pre command `n` exited: the next one, or the main
    /// process; a failure that is not ignored fails the start.
    pub(super) fn pre_exited(&mut self, u: UnitId, n: u16, status: ExitStatus) {
        let (ignore, pres) = {
            let pre = &self.spec_of(u).exec_start_pre;
            (
                pre.get(n as usize).is_some_and(|c| c.ignore_failure),
                pre.len(),
            )
        };
        if !status.success() && !ignore {
            self.fail_status(u, status, format!("exec-start-pre: {}", status.describe()));
            return;
        }
        let next = n + 1;
        if (next as usize) < pres {
            self.units[u.index()].phase = Phase::Pre(next);
            self.spawn(u, Role::Pre(next));
        } else {
            self.start_main(u);
        }
    }

    /// `Main` + spawned: a `foreground-supervised` unit with no `ready-*`
    /// is up at once; with `ready-wait`, once it has passed.
    pub(super) fn main_spawned(&mut self, u: UnitId, pid: i32) {
        self.records[u.index()].main_pid = Some(pid);
        let spec = self.spec_of(u);
        let (kind, ready_wait, ready_grep, ready_bus) = (
            spec.kind,
            spec.extras.ready_wait,
            spec.extras.ready_grep.is_some(),
            spec.extras.ready_bus_name.is_some(),
        );
        if kind.row().ready == Ready::Adopted {
            self.become_up(u, "running");
        } else if kind.row().ready == Ready::Spawned {
            if let Some(w) = ready_wait {
                // One timer per unit: a ready-wait that would end after the
                // start timeout leaves the start timeout in place (the start
                // then times out, as it should).
                let start_left = match self.records[u.index()].timer {
                    Some((t, Timer::Start)) => Some(t.since(self.now)),
                    _ => None,
                };
                if start_left.is_none_or(|left| w < left) {
                    self.set_timer(u, w, Timer::ReadyWait);
                }
            } else if ready_bus {
                // Already owned (a name another process held, or taken
                // before the spawn was reported): up at once.
                if self.bus_name_owned(u) {
                    self.step(u, super::Event::BusName);
                }
            } else if !ready_grep {
                self.become_up(u, "running");
            }
        }
        self.mark_changed(u);
    }

    /// A helper spawned: the one the unit waits for, or one it no longer
    /// wants (killed).
    pub(super) fn helper_spawned(&mut self, u: UnitId, role: Role, pid: i32) {
        let rec = &mut self.records[u.index()];
        match rec.helper {
            Some((r, None)) if r == role => rec.helper = Some((role, Some(pid))),
            _ => self.kill_group(u, pid, Signal::KILL),
        }
    }

    /// `Main` + the main process exited before it was ready. A start
    /// command that exits 0 hands over: a oneshot is done, a start script
    /// left its service running, a forking daemon wrote its pidfile.
    pub(super) fn start_command_exited(&mut self, u: UnitId, pid: i32, status: ExitStatus) {
        let i = u.index();
        let ok = self.main_ok(u, status);
        match self.spec_of(u).kind.row().ready {
            Ready::Exited if ok && self.spawn_then(u, 0) => {}
            Ready::Exited if ok => self.oneshot_done(u),
            Ready::ScriptExited if ok => {
                self.records[i].rare_mut().script_group = Some(pid);
                self.become_up(u, "started");
            }
            Ready::Pidfile if ok => self.read_pidfile(u),
            Ready::Exited => self.fail_exit(u, status, status.describe()),
            // Exited before it was ready, or a start command that failed.
            Ready::ScriptExited
            | Ready::Pidfile
            | Ready::Spawned
            | Ready::Notified
            | Ready::Adopted
            | Ready::AtOnce
            | Ready::Clock
            | Ready::Armed(_) => {
                let what = format!("{} before it was ready", status.describe());
                self.fail_exit(u, status, what);
            }
        }
    }

    /// `Main` + the main process of a `started-at-fork` unit failed before
    /// its program ran (its user not found, `execve` refused): as
    /// systemd's `Type=simple`, whose start job is done once the process
    /// is forked, the unit is up (and its start done); the init then
    /// tells the failure as that process's end ([`Self::exec_failed`]),
    /// in a turn of its own, so that `running` is seen first.
    pub(super) fn main_failed_at_fork(&mut self, u: UnitId) {
        self.records[u.index()].rare_mut().failed_at_fork = true;
        self.become_up(u, "running");
        self.mark_changed(u);
    }

    /// The failure of a `started-at-fork` unit's main process before its
    /// program ran, with systemd's exit status for it (217 for a user not
    /// found, 203 for `execve` …): the unit fails as by that exit.
    pub(super) fn exec_failed(&mut self, u: UnitId, status: i32, why: String) {
        self.records[u.index()].rare_mut().failed_at_fork = false;
        self.fail_exit(u, ExitStatus::Code(status), why);
    }

    /// Whether an exit of the main command counts as success: status 0,
    /// one of `success-exit-status`, or any with a leading `-`.
    pub(super) fn main_ok(&self, u: UnitId, status: ExitStatus) -> bool {
        let spec = self.spec_of(u);
        spec.success(status) || spec.exec_start.as_ref().is_some_and(|c| c.ignore_failure)
    }

    /// Whether the end of a main process that was up is clean: as
    /// [`Self::main_ok`], or a signal a daemon without a handler for it
    /// dies of (`daemon-clean-signals`).
    pub(super) fn main_ended_cleanly(&self, u: UnitId, status: ExitStatus) -> bool {
        // SIGHUP, SIGINT, SIGPIPE, SIGTERM.
        const CLEAN: [i32; 4] = [1, 2, 13, 15];
        let daemon = self.spec_of(u).extras.daemon_clean_signals == Some(true);
        self.main_ok(u, status)
            || (daemon && matches!(status, ExitStatus::Signal(s) if CLEAN.contains(&s)))
    }

    /// A oneshot's further command `n` (systemd's later `ExecStart=`
    /// lines), if it has one: spawned, and awaited in the `Main` phase.
    fn spawn_then(&mut self, u: UnitId, n: u16) -> bool {
        if self.spec_of(u).extras.exec_start_then.len() <= n as usize {
            return false;
        }
        self.spawn(u, Role::Then(n));
        true
    }

    /// `Main` + a oneshot's further command `n` exited: the next one, or
    /// the unit is done; a failure (unless it may fail) fails it.
    pub(super) fn then_exited(&mut self, u: UnitId, n: u16, status: ExitStatus) {
        let spec = self.spec_of(u);
        let ignore = spec
            .extras
            .exec_start_then
            .get(n as usize)
            .is_some_and(|c| c.ignore_failure);
        if !spec.success(status) && !ignore {
            self.fail_exit(u, status, format!("exec-start: {}", status.describe()));
            return;
        }
        if !self.spawn_then(u, n + 1) {
            self.oneshot_done(u);
        }
    }

    /// A oneshot's commands are done: its `exec-start-post` commands, if
    /// any, else `exited`.
    fn oneshot_done(&mut self, u: UnitId) {
        if !self.spec_of(u).extras.exec_start_post.is_empty() {
            self.set_state(u, UnitState::Starting, "running exec-start-post");
            self.spawn(u, Role::Post(0));
            return;
        }
        self.oneshot_exited(u);
    }

    /// A oneshot is `exited`, its work done.
    pub(super) fn oneshot_exited(&mut self, u: UnitId) {
        let i = u.index();
        self.leave_starting(u);
        self.clear_timer(u);
        self.units[i].phase = Phase::Idle;
        self.records[i].attempt = 0;
        self.set_state(u, UnitState::Exited, "exit status 0");
        // Done and not remaining: inactive, as systemd sees it.
        if !self.spec_of(u).remain_after_exit() {
            self.start_on_success(u);
        }
    }

    /// `Main` + `exec-start-post` number `n` exited: the next one, or the
    /// unit is up (a oneshot `exited`); a failure that is not ignored
    /// fails the start, as systemd's.
    pub(super) fn post_exited(&mut self, u: UnitId, n: u16, status: ExitStatus) {
        let (ignore, posts) = {
            let post = &self.spec_of(u).extras.exec_start_post;
            (
                post.get(n as usize).is_some_and(|c| c.ignore_failure),
                post.len(),
            )
        };
        if !status.success() && !ignore {
            self.fail_status(u, status, format!("exec-start-post: {}", status.describe()));
            return;
        }
        let next = n + 1;
        if (next as usize) < posts {
            self.spawn(u, Role::Post(next));
        } else if self.spec_of(u).kind.row().ready == Ready::Exited
            || self.records[u.index()].rare().no_main
        {
            self.oneshot_exited(u);
        } else {
            self.up_now(u, "running");
        }
    }

    /// Asks for the pidfile to be read, or, for a systemd `Type=forking`
    /// unit without one, for the main PID to be guessed; with
    /// `GuessMainPID=no`, none is: as systemd's `service_enter_running`
    /// with no main PID known, the service runs while its cgroup holds a
    /// process, and its end is a clean one (as an `exit-type: cgroup`
    /// service's whose main process exited 0).
    pub(super) fn read_pidfile(&mut self, u: UnitId) {
        if self.guesses_no_main_pid(u) {
            self.records[u.index()].rare_mut().main_exit = Some(ExitStatus::Code(0));
            self.become_up(u, "running");
            return;
        }
        match self.spec_of(u).extras.pidfile.clone() {
            Some(path) => self.actions.push(Action::ReadPidfile { unit: u, path }),
            None => self.actions.push(Action::GuessMainPid { unit: u }),
        }
    }

    /// Whether the unit is a forking daemon with neither a pidfile nor a
    /// main PID to guess (`GuessMainPID=no`): it lives on its cgroup.
    pub(super) fn guesses_no_main_pid(&self, u: UnitId) -> bool {
        let spec = self.spec_of(u);
        spec.kind.row().ready == Ready::Pidfile
            && spec.extras.pidfile.is_none()
            && spec.extras.guess_main_pid == Some(false)
    }

    /// `Main` + a forking daemon without a pidfile left no process in its
    /// cgroup (`sm-notify`, Debian's `rpc-statd-notify.service`): as
    /// systemd's `service_enter_running`, with neither a main process nor
    /// a populated cgroup the service is done: after its
    /// `exec-start-post`, `exited` (active) with `RemainAfterExit=yes`,
    /// else inactive, a success either way.
    pub(super) fn no_main_process(&mut self, u: UnitId) {
        self.records[u.index()].rare_mut().no_main = true;
        self.become_up(u, "exited");
    }

    /// `Main` + the pidfile read: the daemon is the main process, or the
    /// file is read again until the start times out.
    pub(super) fn pidfile_read(&mut self, u: UnitId, result: Result<i32, String>) {
        let i = u.index();
        let e = match result {
            Ok(pid) => {
                self.records[i].main_pid = Some(pid);
                self.pids.insert(pid, (u, Role::Main));
                self.become_up(u, "running");
                return;
            }
            Err(e) => e,
        };
        // A forking daemon often writes its pidfile only after the command
        // that started it has exited (redis does): read it again, 10 ms,
        // 20 ms, ... at most 250 ms apart, until the start-timeout.
        let rec = &self.records[i];
        let deadline = match (rec.rare().pidfile_deadline, rec.timer) {
            (Some(d), _) => d,
            (None, Some((t, Timer::Start))) => t,
            (None, _) => self.now,
        };
        // The start's own timeout, as systemd's (its `Result=timeout`):
        // the file never named a process the unit may take.
        if self.now >= deadline {
            self.fail(
                u,
                FailureKind::Timeout,
                format!("pidfile: {e} (start timed out)"),
            );
            return;
        }
        let rare = self.records[i].rare_mut();
        let tries = rare.pidfile_tries;
        rare.pidfile_tries = tries.saturating_add(1);
        rare.pidfile_deadline = Some(deadline);
        self.records[i].status = Status::Text(format!("waiting for the pidfile ({e})"));
        self.mark_changed(u);
        let step = Duration::from_millis(10u64 << tries.min(5)).min(Duration::from_millis(250));
        self.set_timer(u, step.min(deadline.since(self.now)), Timer::Pidfile);
    }

    /// A daemon's PID read after its unit stopped starting: it must not
    /// stay behind. The planner does not track it, so a group signal would
    /// not reach a daemon that is not a group leader: the process gets the
    /// signal too.
    pub(super) fn kill_stray_daemon(&mut self, u: UnitId, pid: i32) {
        let signal = self.records[u.index()]
            .running_spec
            .as_ref()
            .map_or(Signal::TERM, |s| s.kill_signal);
        self.kill_group(u, pid, signal);
        self.actions.push(Action::Kill {
            unit: u,
            whom: Whom::Process(pid),
            signal,
        });
    }

    /// `Up` (or a oneshot `exited`) + reload asked for: `exec-reload`,
    /// bounded by `start-timeout`.
    pub(super) fn begin_reload(&mut self, u: UnitId) {
        let start_timeout = self.spec_of(u).start_timeout;
        self.records[u.index()].rare_reset(|r| r.reload_failure = None);
        self.units[u.index()].phase = Phase::Reloading;
        self.set_timer(u, start_timeout, Timer::Reload);
        self.set_state(u, UnitState::Reloading, "reloading");
        self.spawn(u, Role::Reload);
    }

    /// `Up` + `RELOADING=1`: reloading until `READY=1`.
    pub(super) fn reloading_by_itself(&mut self, u: UnitId) {
        let t = self.records[u.index()]
            .running_spec
            .as_ref()
            .map_or(defaults::START_TIMEOUT, |s| s.start_timeout);
        self.records[u.index()].rare_reset(|r| r.reload_failure = None);
        self.units[u.index()].phase = Phase::Reloading;
        self.set_timer(u, t, Timer::Reload);
        self.set_state(u, UnitState::Reloading, "reloading");
    }

    /// `Reloading` + done: `Up` again.
    pub(super) fn reloaded(&mut self, u: UnitId, status: Status) {
        self.clear_timer(u);
        self.end_reload(u, status);
    }

    /// Back to where the reload began: running (its watchdog and runtime
    /// limit armed again), or a oneshot (which has no main process)
    /// `exited`, as systemd's `RemainAfterExit=` oneshot stays active
    /// through a reload.
    fn end_reload(&mut self, u: UnitId, status: impl Into<Status>) {
        if self.spec_of(u).kind.row().ready == Ready::Exited {
            self.units[u.index()].phase = Phase::Idle;
            self.set_state(u, UnitState::Exited, status);
        } else {
            self.units[u.index()].phase = Phase::Up;
            self.set_state(u, UnitState::Running, status);
            self.arm_running(u);
        }
    }

    /// `Reloading` + a reload command (`role`) exited: the next one, or
    /// the reload is done. A failure (unless the command may fail, `-`)
    /// ends the reload there, failed: the unit stays up, as systemd's
    /// service stays active and only the reload job fails.
    pub(super) fn reload_exited(&mut self, u: UnitId, role: Role, status: ExitStatus) {
        let next = match role {
            Role::ReloadThen(n) => n + 1,
            _ => 0,
        };
        let spec = self.spawned_spec(u);
        let ignore = role.command(spec).is_some_and(|c| c.ignore_failure);
        let more = (next as usize) < spec.extras.exec_reload_then.len();
        if !status.success() && !ignore {
            let kind = match status {
                ExitStatus::Signal(_) => FailureKind::Signal,
                ExitStatus::Code(_) => FailureKind::ExitCode,
            };
            self.records[u.index()].rare_mut().reload_failure = Some(kind);
            self.reloaded(
                u,
                Status::Text(format!("exec-reload: {}", status.describe())),
            );
            return;
        }
        if more {
            self.spawn(u, Role::ReloadThen(next));
            return;
        }
        self.reloaded(u, Status::Fixed("reloaded"));
    }

    /// `Reloading` + `start-timeout`: the reload command is killed, the
    /// reload failed.
    pub(super) fn reload_timed_out(&mut self, u: UnitId) {
        if let Some((Role::Reload | Role::ReloadThen(_), Some(pid))) =
            self.records[u.index()].helper
        {
            self.kill_group(u, pid, Signal::KILL);
        }
        self.records[u.index()].helper = None;
        self.records[u.index()].rare_mut().reload_failure = Some(FailureKind::Timeout);
        self.end_reload(u, "reload timed out");
    }

    /// `Reloading` + `exec-reload` could not be spawned: still running,
    /// saying why; the reload failed.
    pub(super) fn reload_spawn_failed(&mut self, u: UnitId, error: String) {
        let msg = format!("{}: {error}", Role::Reload.key());
        self.records[u.index()].rare_mut().reload_failure = Some(FailureKind::Resources);
        self.end_reload(u, msg);
    }

    /// `Idle` + the restart timer: a failed unit may start again; an
    /// upheld unit held back by its bound (`uphold.rs`) is looked at again.
    pub(super) fn restart_due(&mut self, u: UnitId) {
        if self.units[u.index()].state == UnitState::Failed {
            self.units[u.index()].restart_ready = true;
        }
        self.push(u);
    }
}
