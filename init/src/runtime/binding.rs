//! `bind-mount` (systemd's `BindMountUnit`, `systemctl bind`): a path of
//! the host bound into a running service's mount namespace. The refusals
//! are `flotilla_units::context::binds`'s, in systemd's words; the mount is
//! the binder's, a child of the init that enters the namespace of the
//! unit's main process (`sys/fs/bind_mount.rs`), so the init never leaves
//! its own. Its exit, reaped like any child's, answers the client that
//! asked.

use super::Runtime;
use crate::control::{ConnId, Watch};
use crate::sys::bind_mount::{self, Job};
use crate::sys::{ExitStatus, Pid, Sys};
use flotilla_units::context::binds::{self, Target, NOT_NAMESPACED};
use flotilla_units::protocol::{ErrorCode, Reply};
use flotilla_units::unit_type::SPAWNING;

/// A bind under way.
#[derive(Debug)]
pub(super) struct Binding {
    /// What is bound, for the reply.
    job: Job,
    /// The binder.
    pid: Pid,
    /// The client that asked, with its serial.
    conn: ConnId,
    serial: u64,
}

/// What a client asked to bind.
pub(super) struct Asked<'a> {
    pub unit: &'a str,
    pub source: &'a str,
    pub destination: &'a str,
    pub read_only: bool,
    pub mkdir: bool,
}

impl<S: Sys> Runtime<S> {
    /// `bind-mount` into `a.unit`, asked by `c`: the reply now when it is
    /// refused, else none (it comes when the binder ends).
    pub(super) fn bind_mount(&mut self, c: ConnId, a: &Asked<'_>) -> Option<Reply> {
        let Some(id) = self.planner.graph().unit(a.unit) else {
            return Some(Reply::error(
                ErrorCode::UnknownUnit,
                format!("Unit {} not loaded.", a.unit),
            ));
        };
        let (Some(st), Some(node)) = (self.unit_status(id), self.planner.graph().get(id)) else {
            return Some(Reply::error(
                ErrorCode::Internal,
                format!("{}: no status", a.unit),
            ));
        };
        let target = Target {
            // The process types are systemd's service types.
            is_service: SPAWNING.contains(&node.spec.kind),
            context: &node.spec.extras.context,
            running: st.state.is_active() && st.pid.is_some(),
        };
        let (source, destination) = match binds::check_runtime(a.source, a.destination, target) {
            Ok(p) => p,
            Err(e) => return Some(Reply::error(ErrorCode::Invalid, e)),
        };
        let pid = st.pid.unwrap_or_default();
        // Its keys ask for a namespace, but it may have been left out
        // (`sandbox: as-systemd` without CAP_SYS_ADMIN).
        if bind_mount::shares_init_namespace(pid) {
            return Some(Reply::error(ErrorCode::Invalid, NOT_NAMESPACED));
        }
        let job = Job {
            pid,
            source,
            destination,
            read_only: a.read_only,
            mkdir: a.mkdir,
        };
        let binder = match bind_mount::spawn(&self.sys, &job) {
            Ok(p) => p,
            Err(e) => return Some(Reply::error(ErrorCode::Internal, e)),
        };
        let serial = self.hold_for_child(c, Watch::BindMount);
        self.unit_note(
            id,
            &format!(
                "[init] binding {} on {}",
                job.source.display(),
                job.destination.display()
            ),
        );
        self.binding.push(Binding {
            job,
            pid: binder,
            conn: c,
            serial,
        });
        None
    }

    /// Whether `pid` is a binder; if so, its client is answered.
    pub(super) fn binder_ended(&mut self, pid: Pid, status: ExitStatus) -> bool {
        let Some(i) = self.binding.iter().position(|b| b.pid == pid) else {
            return false;
        };
        let done = self.binding.swap_remove(i);
        let (src, dest) = (done.job.source.display(), done.job.destination.display());
        let r = match status {
            ExitStatus::Exited(0) => Reply::Accepted {
                message: format!("bound {src} on {dest}"),
            },
            ExitStatus::Exited(code) => Reply::error(
                ErrorCode::Failed,
                format!(
                    "Failed to mount {src} on {dest} in unit's namespace: {}",
                    bind_mount::failure(code)
                ),
            ),
            ExitStatus::Signaled { signal, .. } => Reply::error(
                ErrorCode::Failed,
                format!("Failed to mount {src} on {dest} in unit's namespace: the binder was killed by signal {signal}"),
            ),
        };
        self.answer_held(done.conn, done.serial, Watch::BindMount, r);
        true
    }
}
