//! Spawns whose `execve` has not been seen yet: the executor starts a
//! unit's main process and goes on (`Sys::spawn_started`), and the planner
//! hears [`Fact::Spawned`] or [`Fact::SpawnFailed`] once the child's report
//! pipe says which (`sys/procs/spawn/watch.rs`), as it would have at once from a
//! spawn that waited. So a layer's children exec side by side while the
//! init starts the next one.
//!
//! The report ends when its descriptor is readable, or at the latest when
//! the child is reaped (its write end is closed by then): `reap` asks here
//! first, so that the planner never hears of the end of a process before
//! its start; so do the unit's output and notify socket, since nothing
//! writes there before the `execve`. The exit, output or notify message
//! of a unit whose start was told in the same turn waits for the next
//! turn, after the start has been reported (console, unit log,
//! watchers). A reload, a re-exec or a shutdown first waits for every
//! report, so that no spawn straddles a renumbering of the units, a
//! snapshot or the stop of everything: that of a handed-off process
//! (`sys/procs/spawn/child.rs`) comes once it has made its directories and
//! opened its files, so such a wait lasts as long as their disk takes.

use super::slots::Source;
use super::Runtime;
use crate::sys::{ExecOutcome, ExecWatch, ExitStatus, Interest, Pid, Sys, SysError, Token};
use flotilla_units::graph::UnitId;
use flotilla_units::planner::{Fact, Role};
use flotilla_units::spec::UnitSpec;

/// Why a process of a unit was not started, with systemd's exit status
/// for the same failure in its child when it is one
/// ([`SysError::exit_status`]).
#[derive(Debug)]
pub(super) struct SpawnError {
    pub(super) text: String,
    pub(super) status: Option<i32>,
}

impl SpawnError {
    /// A failure of a system call, named `text`.
    pub(super) fn of(e: &SysError, text: String) -> SpawnError {
        SpawnError {
            text,
            status: e.exit_status(),
        }
    }
}

/// A failure of the init's own.
impl From<String> for SpawnError {
    fn from(text: String) -> SpawnError {
        SpawnError { text, status: None }
    }
}

/// systemd's `EXIT_FAILURE`: the status a `started-at-fork` unit's main
/// process is told to have ended with when its spawn failed in the init
/// itself (systemd would have failed the start; flotilla's was done).
const EXIT_FAILURE: i32 = 1;

/// A started child (in flight or forked) whose report has not ended.
#[derive(Debug)]
pub(super) struct PendingExec {
    unit: UnitId,
    role: Role,
    /// Whether it runs with the full privileges (`+`): which of the run's
    /// contexts names its steps.
    full: bool,
    watch: ExecWatch,
    token: Token,
}

/// How a report is read.
#[derive(Debug, Clone, Copy)]
enum Settle<'a> {
    /// What is there: its descriptor was readable, or the child was
    /// reaped with this status.
    Read(Option<&'a ExitStatus>),
    /// What is there, knowing that a process of the unit has written
    /// output or a notify message (`ExecWatch::read_after_output`).
    AfterOutput,
    /// To its end.
    Wait,
}

impl<S: Sys> Runtime<S> {
    /// Watches the report of a child just started for `unit`. If its
    /// descriptor cannot be watched, the report is waited for now.
    pub(super) fn pending_exec(&mut self, unit: UnitId, role: Role, full: bool, watch: ExecWatch) {
        let slot = self.slots.ensure(unit);
        let token = self.slots.alloc_token(Source::Exec(slot));
        let pending = PendingExec {
            unit,
            role,
            full,
            watch,
            token,
        };
        if self
            .sys
            .watch(pending.watch.fd(), token, Interest::Read)
            .is_ok()
        {
            self.execs.push(pending);
        } else {
            self.slots.free_token(token);
            self.settle_exec(pending, Settle::Wait);
        }
    }

    /// A report's descriptor is readable.
    pub(super) fn on_exec(&mut self, t: Token) {
        if let Some(at) = self.execs.iter().position(|p| p.token == t) {
            let pending = self.execs.swap_remove(at);
            self.settle_exec(pending, Settle::Read(None));
        }
    }

    /// `pid` was reaped: if its report was pending, the planner hears it
    /// now. Whether the process was a child that failed before `execve`
    /// (whose end is no fact of its own).
    pub(super) fn exec_reaped(&mut self, pid: Pid, status: &ExitStatus) -> bool {
        match self.execs.iter().position(|p| p.watch.pid() == pid) {
            Some(at) => {
                let pending = self.execs.swap_remove(at);
                !self.settle_exec(pending, Settle::Read(Some(status)))
            }
            None => false,
        }
    }

    /// Before `unit`'s output or notify message is read: what wrote it has
    /// exec'd (a child writes neither before), so its report says so even
    /// if end of file is held back (`ExecWatch::read_after_output`), and
    /// the planner hears of the start first (a `ready-grep` line or a
    /// `READY=1` is the started process's, not that of a unit with no
    /// PID yet).
    pub(super) fn settle_unit_execs(&mut self, unit: UnitId) {
        if !self.execs.iter().any(|p| p.unit == unit) {
            return;
        }
        let (mine, rest): (Vec<PendingExec>, Vec<PendingExec>) = std::mem::take(&mut self.execs)
            .into_iter()
            .partition(|p| p.unit == unit);
        self.execs = rest;
        for pending in mine {
            self.settle_exec(pending, Settle::AfterOutput);
        }
    }

    /// Before `unit` spawns a process of `role`: a child of that role whose
    /// report is still pending is one the planner has given up, as it
    /// asks for a new one only once it holds the last gone (a stop of a
    /// unit whose main process had not yet been told went by without it,
    /// and killed its cgroup). Told late, its start would be taken for the
    /// new one's, and its end for the new one's failure: it is killed and
    /// forgotten, and its end, reaped later, is nobody's.
    pub(super) fn drop_stale_exec(&mut self, unit: UnitId, role: Role) {
        while let Some(at) = self
            .execs
            .iter()
            .position(|p| p.unit == unit && p.role == role)
        {
            let stale = self.execs.swap_remove(at);
            let _ = self.sys.kill(stale.watch.pid(), libc::SIGKILL);
            self.forget_exec(&stale);
            self.unit_note(
                unit,
                &format!(
                    "{}: process {} killed: its start was not told before the unit stopped",
                    role.key(),
                    stale.watch.pid()
                ),
            );
        }
    }

    /// Whether `unit`'s start was told to the planner in this turn and is
    /// not reported yet: what it did next (its exit, its output, a notify
    /// message) waits for the next turn, as when the start and that came
    /// in two (else a process that exits at once would never be seen
    /// `running`, and a unit's first lines would come before the note of
    /// its start). A report in the middle of the turn would do too, but
    /// would report the turn's other changes twice.
    pub(super) fn started_untold(&self, unit: UnitId) -> bool {
        self.untold.contains(&unit)
    }

    /// Waits for every pending report (before a reload or a re-exec),
    /// including those of spawns their facts lead to.
    pub(super) fn settle_execs(&mut self) {
        while let Some(pending) = self.execs.pop() {
            self.settle_exec(pending, Settle::Wait);
        }
        // Nothing is held for a next turn across a reload or a re-exec.
        self.tell_failed_forks();
    }

    /// Reads `pending`'s report as `how` says and, once it has ended,
    /// tells the planner. Whether the child exec'd (a report not ended yet
    /// goes back to the list, and counts as exec'd).
    fn settle_exec(&mut self, mut pending: PendingExec, how: Settle<'_>) -> bool {
        // The unit's context, asked for only to name a failed step or to
        // count skipped ones: a plain unit's is made for the asking.
        let (slots, unit, full) = (&self.slots, pending.unit, pending.full);
        let context = || {
            slots
                .get(unit)
                .and_then(|s| s.run.as_deref())
                .and_then(|r| r.child(full))
        };
        let outcome = match how {
            Settle::Read(exited) => pending.watch.read(exited, context),
            Settle::AfterOutput => pending.watch.read_after_output(context),
            Settle::Wait => pending.watch.wait(context),
        };
        let PendingExec {
            unit, role, watch, ..
        } = &pending;
        let (unit, role, pid) = (*unit, *role, watch.pid());
        let execed = match outcome {
            ExecOutcome::Pending => {
                self.execs.push(pending);
                return true;
            }
            ExecOutcome::Execed { denied } => {
                if denied != 0 {
                    if let Some(c) = context() {
                        c.add_denied(denied);
                    }
                }
                self.fact(Fact::Spawned { unit, role, pid });
                self.untold.push(unit);
                true
            }
            ExecOutcome::Failed(e) => {
                let error = SpawnError::of(&e, e.to_string());
                self.spawn_failed(unit, role, error);
                false
            }
        };
        self.forget_exec(&pending);
        execed
    }

    /// A process of `unit` could not be started: the planner is told.
    /// The main process of a `started-at-fork` unit (systemd's
    /// `Type=simple`) failed after its start, as the planner takes this
    /// fact for it: its end, with systemd's status, is told in the next
    /// turn, after its start was reported (`tell_failed_forks`).
    pub(super) fn spawn_failed(&mut self, unit: UnitId, role: Role, error: SpawnError) {
        let SpawnError { text, status } = error;
        self.unit_note(unit, &format!("{}: {text}", role.key()));
        let at_fork = role == Role::Main
            && self
                .planner
                .graph()
                .get(unit)
                .is_some_and(|n| UnitSpec::started_at_fork(&n.spec));
        if at_fork {
            let status = status.unwrap_or(EXIT_FAILURE);
            self.failed_forks.push((unit, status, text.clone()));
        }
        self.fact(Fact::SpawnFailed {
            unit,
            role,
            error: text,
        });
    }

    /// The ends of the main processes of `started-at-fork` units that
    /// failed before their program ran, held back by the last turn.
    pub(super) fn tell_failed_forks(&mut self) {
        for (unit, status, error) in std::mem::take(&mut self.failed_forks) {
            self.fact(Fact::ExecFailed {
                unit,
                status,
                error,
            });
        }
    }

    /// Stops watching `pending`'s report, which is off the list.
    fn forget_exec(&mut self, pending: &PendingExec) {
        if self.slots.source(pending.token).is_some() {
            let _ = self.sys.unwatch(pending.watch.fd());
            self.slots.free_token(pending.token);
        }
        // A launch's layer held a hundred at once: the room goes back with
        // the last (the heap per running unit has a budget).
        if self.execs.is_empty() {
            self.execs = Vec::new();
        }
    }
}
