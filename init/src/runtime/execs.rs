//! Spawns whose `execve` has not been seen yet: the executor forks a
//! unit's process and goes on (`Sys::spawn_started`), and the planner
//! hears [`Fact::Spawned`] or [`Fact::SpawnFailed`] once the child's report
//! pipe says which (`sys/spawn/watch.rs`), as it would have at once from a
//! spawn that waited. So a layer's children exec side by side while the
//! init forks the next one.
//!
//! The report ends when its descriptor is readable, or at the latest when
//! the child is reaped (its write end is closed by then): `reap` asks here
//! first, so that the planner never hears of the end of a process before
//! its start. A reload or a re-exec first waits for every report, so that
//! no spawn straddles a renumbering of the units or a snapshot.

use super::slots::Source;
use super::Runtime;
use crate::sys::{ExecOutcome, ExecWatch, ExitStatus, Interest, Pid, Sys, Token};
use flotilla_units::graph::UnitId;
use flotilla_units::planner::{Fact, Role};

/// A forked child whose report has not ended.
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

impl<S: Sys> Runtime<S> {
    /// Watches the report of a child just forked for `unit`. If its
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
            self.settle_exec(pending, None, true);
        }
    }

    /// A report's descriptor is readable.
    pub(super) fn on_exec(&mut self, t: Token) {
        if let Some(at) = self.execs.iter().position(|p| p.token == t) {
            let pending = self.execs.swap_remove(at);
            self.settle_exec(pending, None, false);
        }
    }

    /// `pid` was reaped: if its report was pending, the planner hears it
    /// now. Whether the process was a child that failed before `execve`
    /// (whose end is no fact of its own).
    pub(super) fn exec_reaped(&mut self, pid: Pid, status: &ExitStatus) -> bool {
        match self.execs.iter().position(|p| p.watch.pid() == pid) {
            Some(at) => {
                let pending = self.execs.swap_remove(at);
                !self.settle_exec(pending, Some(status), false)
            }
            None => false,
        }
    }

    /// Waits for every pending report (before a reload or a re-exec),
    /// including those of spawns their facts lead to.
    pub(super) fn settle_execs(&mut self) {
        while let Some(pending) = self.execs.pop() {
            self.settle_exec(pending, None, true);
        }
    }

    /// Reads `pending`'s report (to its end if `wait`) and, once it has
    /// ended, tells the planner. Whether the child exec'd (a report not
    /// ended yet goes back to the list, and counts as exec'd).
    fn settle_exec(
        &mut self,
        mut pending: PendingExec,
        exited: Option<&ExitStatus>,
        wait: bool,
    ) -> bool {
        let context = self
            .slots
            .get(pending.unit)
            .and_then(|s| s.run.as_deref())
            .and_then(|r| r.child(pending.full));
        let outcome = match wait {
            true => pending.watch.wait(context),
            false => pending.watch.read(exited, context),
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
                if let Some(c) = context.filter(|_| denied != 0) {
                    c.add_denied(denied);
                }
                self.fact(Fact::Spawned { unit, role, pid });
                true
            }
            ExecOutcome::Failed(e) => {
                let error = e.to_string();
                self.unit_note(unit, &format!("{}: {error}", role.key()));
                self.fact(Fact::SpawnFailed { unit, role, error });
                false
            }
        };
        if self.slots.source(pending.token).is_some() {
            let _ = self.sys.unwatch(pending.watch.fd());
            self.slots.free_token(pending.token);
        }
        execed
    }
}
