//! Scopes on the init's side (`docs/dbus.md`): units made of processes
//! someone else started, as logind makes one per login session and
//! `systemd-run --scope` one for its command.
//!
//! A scope comes in as a transient unit with the PIDs it adopts
//! ([`Request::TransientAdd`](flotilla_units::protocol::Request)); they
//! wait here until its start ([`Action::Adopt`]), which moves them into
//! the scope's cgroup and watches them (`sys/cgroups/adopt.rs`). The planner sees
//! the first process as the scope's main process: it is up at once, and
//! its stop signals the scope's processes as any unit's (the cgroup's,
//! never a process group, which may reach beyond the scope). Once none of
//! them is left, the planner is told that the main process exited with
//! status 0, whatever became of it: the scope lasts as long as any of its
//! processes. A scope that ended (or failed) leaves the unit set, as
//! systemd lets it go; its PIDs are used once, so it cannot be started
//! again.
//!
//! [`Action::Adopt`]: flotilla_units::planner::Action::Adopt

use super::held::Adopted;
use super::slots::{SlotId, Source};
use super::Runtime;
use crate::sys::adopt::Adoption;
use crate::sys::{Interest, Sys};
use flotilla_units::graph::UnitId;
use flotilla_units::planner::Fact;
use flotilla_units::spec::UnitSpec;
use flotilla_units::state::UnitState;

/// The scopes the loop knows of.
#[derive(Debug, Default)]
pub(super) struct Scopes {
    /// Each scope not started yet, with the processes its start adopts.
    pending: Vec<(String, Vec<i32>)>,
    /// The scopes started: each leaves the unit set once it has ended.
    started: Vec<String>,
}

impl Scopes {
    /// Checks the processes given with transient unit `spec`: a scope
    /// needs some, another type none.
    pub fn check(spec: &UnitSpec, adopt: &[i32]) -> Result<(), String> {
        match (spec.kind.row().adopts(), adopt.is_empty()) {
            (true, true) => Err(format!(
                "the scope `{}` names no process to adopt (a scope is made of processes \
                 that are already running)",
                spec.name
            )),
            (false, false) => Err(format!(
                "`{}` is a `{}` unit: only a scope adopts processes",
                spec.name,
                spec.kind.as_str()
            )),
            _ => match adopt.iter().find(|&&p| p <= 1) {
                Some(p) => Err(format!("the scope `{}` cannot adopt PID {p}", spec.name)),
                None => Ok(()),
            },
        }
    }

    /// The scopes made and not started yet, for a re-exec's snapshot.
    pub fn carry_pending(&self) -> Vec<(String, Vec<i32>)> {
        self.pending.clone()
    }

    /// After a re-exec: the scopes the image before this one had made and
    /// not started.
    pub fn resume_pending(&mut self, pending: Vec<(String, Vec<i32>)>) {
        self.pending = pending;
    }

    /// Keeps the processes scope `name` adopts at its start.
    pub fn expect(&mut self, name: &str, adopt: Vec<i32>) {
        if !adopt.is_empty() {
            self.pending.retain(|(n, _)| n != name);
            self.pending.push((name.to_string(), adopt));
        }
    }
}

impl<S: Sys> Runtime<S> {
    /// The start of scope `unit`: its processes moved into its cgroup (if
    /// the init has cgroups) and watched. Its first process, the main PID.
    pub(super) fn adopt(&mut self, unit: UnitId, spec: &UnitSpec) -> Result<i32, String> {
        let at = self
            .scopes
            .pending
            .iter()
            .position(|(n, _)| *n == spec.name)
            .ok_or_else(|| {
                format!(
                    "`{}` has no processes to adopt: a scope's are given when it is made \
                     (StartTransientUnit) and adopted once, so it cannot be started again",
                    spec.name
                )
            })?;
        let (name, pids) = self.scopes.pending.swap_remove(at);
        let leader = *pids.first().ok_or("no process to adopt")?;
        // A scope runs nothing: its `User=` is the owner of its cgroup
        // when it is delegated (`Delegate=`).
        let creds = self.credentials(spec)?;
        self.ensure_run(unit, spec, &creds)?;
        let run = self
            .slots
            .get(unit)
            .and_then(|s| s.run.as_deref())
            .ok_or("unit run vanished")?;
        let cgroup = run.has_cgroup();
        let adoption = self.sys.adopt(run, &pids)?;
        if !cgroup {
            self.unit_note(
                unit,
                "no cgroup: the scope lasts while the processes it was given do (what they \
                 start is not followed)",
            );
        }
        self.watch_scope(unit, name, adoption, leader);
        Ok(leader)
    }

    /// After a re-exec (`reexec.rs`): the watch of scope `unit`, which was
    /// up, made again from what the image before this one carried (the
    /// pidfds' descriptors where it has no cgroup).
    pub(super) fn rewatch_scope(&mut self, unit: UnitId, carried: Vec<(i32, i32)>) {
        let carried: Vec<_> = carried
            .into_iter()
            .filter_map(|(pid, fd)| self.sys.adopt_fd(fd).ok().map(|fd| (pid, fd)))
            .collect();
        let name = self.planner.graph().node(unit).spec.name.clone();
        let leader = self.planner.view(unit).and_then(|v| v.pid).unwrap_or(0);
        let made = match self.slots.get(unit).and_then(|s| s.run.as_deref()) {
            Some(run) => self.sys.readopt(run, carried),
            None => Err("no run to watch".to_string()),
        };
        match made {
            Ok(adoption) => self.watch_scope(unit, name, adoption, leader),
            Err(e) => self.unit_note(
                unit,
                &format!("after the re-exec, its processes are not watched: {e}"),
            ),
        }
    }

    /// Scope `unit`'s processes watched (at its start, or again after a
    /// re-exec); a scope whose processes all ended meanwhile ends now.
    fn watch_scope(&mut self, unit: UnitId, name: String, adoption: Adoption, leader: i32) {
        let slot = self.slots.ensure(unit);
        let held = self.watched(adoption, Source::Scope(slot), leader);
        if let Some(old) = self.slots.slot_mut(slot).and_then(|s| s.adopted.take()) {
            self.slots.close_adopted(*old, &self.sys);
        }
        let ended = match self.slots.slot_mut(slot) {
            Some(s) => {
                let a = s.adopted.insert(Box::new(held));
                // They may have ended before the watch began.
                !self.sys.adopted_left(&mut a.adoption, None)
            }
            None => false,
        };
        self.scopes.started.push(name);
        if ended {
            self.scope_ended(slot);
        }
    }

    /// `adoption`'s descriptors watched, each with a token of `source`:
    /// what a scope holds, and an `exit-type: cgroup` service while its
    /// cgroup empties (`emptied.rs`).
    pub(super) fn watched(&mut self, adoption: Adoption, source: Source, leader: i32) -> Adopted {
        let mut fds = Vec::new();
        for fd in adoption.fds() {
            let token = self.slots.alloc_token(source);
            let _ = self.sys.watch(fd, token, Interest::Read);
            fds.push((fd, token));
        }
        Adopted {
            adoption,
            fds,
            leader,
        }
    }

    /// A descriptor watching the slot's scope is readable: if none of its
    /// processes is left, the scope's main process "exits".
    pub(super) fn on_scope(&mut self, slot: SlotId, t: crate::sys::Token) {
        let Some(a) = self
            .slots
            .slot_mut(slot)
            .and_then(|s| s.adopted.as_deref_mut())
        else {
            return;
        };
        let Some(&(fd, _)) = a.fds.iter().find(|(_, tok)| *tok == t) else {
            return;
        };
        if !self.sys.adopted_left(&mut a.adoption, Some(fd)) {
            self.scope_ended(slot);
            return;
        }
        // A pidfd that fired is done with.
        if a.adoption.holds(fd) {
            return;
        }
        a.fds.retain(|(f, _)| *f != fd);
        let _ = self.sys.unwatch(fd);
        self.slots.free_token(t);
    }

    /// None of the slot's scope's processes is left: the watch goes, and
    /// the planner learns that the main process exited.
    fn scope_ended(&mut self, slot: SlotId) {
        let Some(s) = self.slots.slot_mut(slot) else {
            return;
        };
        let unit = s.unit;
        let Some(a) = s.adopted.take() else {
            return;
        };
        self.slots.close_adopted(*a, &self.sys);
        self.fact(Fact::ScopeEnded { unit });
    }

    /// Takes the scopes that ended or were stopped out of the unit set
    /// (after each batch of actions; nothing to do while no scope was
    /// started). A failed one stays, as systemd keeps a failed unit loaded
    /// until `reset-failed`, which takes it out (`reset_failed`, as any
    /// failed unit of the run set). Whether the set changed.
    pub(super) fn collect_scopes(&mut self) -> bool {
        if self.scopes.started.is_empty() {
            return false;
        }
        let g = self.planner.graph();
        let ended: Vec<String> = self
            .scopes
            .started
            .iter()
            .filter(|n| match g.unit(n) {
                None => true,
                Some(id) => matches!(
                    self.planner.state(id),
                    UnitState::Disabled | UnitState::Exited
                ),
            })
            .cloned()
            .collect();
        if ended.is_empty() {
            return false;
        }
        self.scopes.started.retain(|n| !ended.contains(n));
        let gone: Vec<String> = ended.into_iter().filter(|n| self.is_run(n)).collect();
        if gone.is_empty() {
            return false;
        }
        // Their end reaches the watchers before they leave the set (after
        // it they have no status to report): logind learns of a session's
        // end from the scope's change (`PropertiesChanged`, busd).
        self.report_changes();
        let r = self.drop_runs(gone);
        matches!(r, flotilla_units::protocol::Reply::Applied(_))
    }
}
