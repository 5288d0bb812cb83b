//! The `attach` request (systemd's `AttachProcessesToUnit`, asked by
//! flotilla-busd): processes moved into a running delegated unit's
//! cgroup, or a cgroup below it. `flotilla_units::attach` decides; here
//! the unit's facts, `/proc`'s word on each process and the moves
//! (`sys/cgroups/attach.rs`). The moved processes are followed as the unit's
//! others are, by its cgroup, which holds every cgroup below it: a scope
//! or an `exit-type: cgroup` service lasts while any is left, a stop kills
//! them with the rest.

use std::path::PathBuf;

use super::Runtime;
use crate::sys::Sys;
use flotilla_units::attach::{self, Caller, Refusal};
use flotilla_units::protocol::{ErrorCode, Reply};
use flotilla_units::state::UnitState;

/// The most of `/proc/PID/status` read (it is about 1.5 KiB).
const STATUS_MAX: usize = 16 * 1024;

impl<S: Sys> Runtime<S> {
    /// `attach` of `pids` to `unit` (below it at `subcgroup`), asked for
    /// user `uid`: accepted once every process was moved; refused, with
    /// nothing moved, as `flotilla_units::attach` says.
    pub(super) fn attach(&mut self, unit: &str, subcgroup: &str, pids: &[u32], uid: u32) -> Reply {
        let refused = |r: Refusal| Reply::error(r.code(), r.message());
        let Some(id) = self.planner.graph().unit(unit) else {
            return Reply::error(ErrorCode::UnknownUnit, format!("Unit {unit} not loaded."));
        };
        let sub = match attach::subcgroup(subcgroup) {
            Ok(s) => s,
            Err(r) => return refused(r),
        };
        let delegated = self
            .planner
            .graph()
            .get(id)
            .is_some_and(|n| n.spec.extras.context.resources.delegate.is_some());
        if !delegated {
            return refused(Refusal::NotDelegated);
        }
        // Active as systemd means it (starting, running, reloading,
        // stopping): a unit down, or waiting for its dependencies, has no
        // run, hence no cgroup, to move anything into.
        let active = !matches!(
            self.planner.state(id),
            UnitState::Disabled | UnitState::Waiting | UnitState::Failed
        );
        let run = self.slots.get(id).and_then(|s| s.run.as_deref());
        let Some(run) = run.filter(|_| active) else {
            return refused(Refusal::Inactive);
        };
        if !run.has_cgroup() {
            return Reply::error(
                ErrorCode::Failed,
                format!(
                    "Failed to attach processes to control group: {unit} has no cgroup of its \
                     own (the init was given none)"
                ),
            );
        }
        let caller = Caller::of(uid, self.sys.geteuid(), run.owner_uid());
        let init = u32::try_from(self.sys.getpid()).unwrap_or(0);
        let mut moving: Vec<i32> = Vec::with_capacity(pids.len());
        for &pid in pids {
            let found = i32::try_from(pid)
                .is_ok_and(|p| p > 0)
                .then(|| self.process(pid))
                .flatten();
            match attach::judge(pid, init, found, caller) {
                Ok(p) if !moving.contains(&p) => moving.push(p),
                Ok(_) => {}
                Err(r) => return refused(r),
            }
        }
        // As systemd: every process is tried, the first failure told.
        let mut first_error = None;
        for &pid in &moving {
            if let Err(e) = self.sys.attach_to_unit(run, sub, pid) {
                first_error.get_or_insert(e);
            }
        }
        if let Some(e) = first_error {
            return Reply::error(
                ErrorCode::Failed,
                format!("Failed to attach processes to control group: {e}"),
            );
        }
        let place = sub.map_or_else(String::new, |s| format!(" (/{s})"));
        let message = format!("{} process(es) attached to {unit}{place}", moving.len());
        self.unit_note(id, &format!("[init] {message}"));
        Reply::Accepted { message }
    }

    /// What `/proc` says of process `pid` now (`None`: no such process).
    fn process(&self, pid: u32) -> Option<attach::Process> {
        let read = |file: &str| {
            let path = PathBuf::from(format!("/proc/{pid}/{file}"));
            let bytes = self.sys.read_file_limited(&path, STATUS_MAX).ok()?;
            String::from_utf8(bytes).ok()
        };
        attach::process(&read("status")?, &read("stat")?)
    }
}
