//! `clean` (systemd's `CleanUnit`, `systemctl clean`): a unit's
//! directories removed while it is down. The paths and the refusals are
//! `flotilla_units::context::clean`'s; the removal is the cleaner's, a
//! child of the init (`sys/fs/clean.rs`), so the loop never waits on a walk
//! of a tree. While it runs the unit shows `cleaning` (systemd's
//! `maintenance`); its exit, reaped like any child's, answers the client
//! that asked and shows the unit as it was.

use super::Runtime;
use crate::control::{ConnId, Watch};
use crate::sys::{ExitStatus, Pid, Sys};
use flotilla_units::context::clean::{self, Refusal};
use flotilla_units::graph::UnitId;
use flotilla_units::protocol::{ErrorCode, Reply};

/// A clean under way.
#[derive(Debug)]
pub(super) struct Cleaning {
    /// The unit's name (its id may change at a reload).
    unit: String,
    /// The cleaner.
    pid: Pid,
    /// The client that asked, with its serial (a slot is reused once its
    /// connection closes).
    conn: ConnId,
    serial: u64,
}

impl<S: Sys> Runtime<S> {
    /// Whether unit `name` is being cleaned.
    pub(super) fn is_cleaning(&self, name: &str) -> bool {
        self.cleaning.iter().any(|c| c.unit == name)
    }

    /// `clean` of `unit`, asked by `c`: the reply now when it is refused,
    /// else none (it comes when the cleaner ends).
    pub(super) fn clean(&mut self, c: ConnId, unit: &str, what: &[String]) -> Option<Reply> {
        let Some(id) = self.planner.graph().unit(unit) else {
            return Some(Reply::error(
                ErrorCode::UnknownUnit,
                format!("no unit named `{unit}`"),
            ));
        };
        let what = match clean::parse_what(what) {
            Ok(w) => w,
            Err(e) => return Some(Reply::error(ErrorCode::Invalid, e)),
        };
        let (Some(st), Some(node)) = (self.unit_status(id), self.planner.graph().get(id)) else {
            return Some(Reply::error(
                ErrorCode::Internal,
                format!("{unit}: no status"),
            ));
        };
        if !clean::supports(node.spec.kind) {
            return Some(Reply::error(
                ErrorCode::NotPossible,
                format!("Unit '{unit}' does not support cleaning."),
            ));
        }
        let dirs = &node.spec.extras.context.directories;
        let store = node.spec.extras.file_descriptor_store_max.unwrap_or(0);
        // A clean under way is a pending job of the unit's.
        let planned = if self.is_cleaning(unit) {
            Err(Refusal::Busy)
        } else {
            clean::plan(dirs, store, &what, st.state, st.skipped || st.ended)
        };
        let paths = match planned {
            Ok(p) => p,
            Err(r) => return Some(Reply::error(ErrorCode::NotPossible, r.message())),
        };
        if paths.is_empty() {
            return Some(Reply::Accepted {
                message: format!("nothing of {unit} to remove"),
            });
        }
        let pid = match crate::sys::clean::spawn(&self.sys, &paths) {
            Ok(p) => p,
            Err(e) => return Some(Reply::error(ErrorCode::Internal, e)),
        };
        let serial = self.hold_for_child(c, Watch::Clean);
        self.unit_note(id, &format!("[init] cleaning: {} path(s)", paths.len()));
        self.cleaning.push(Cleaning {
            unit: unit.to_string(),
            pid,
            conn: c,
            serial,
        });
        self.send_status(id);
        None
    }

    /// Whether `pid` is a cleaner; if so, its client is answered and its
    /// unit shown as it is again.
    pub(super) fn cleaner_ended(&mut self, pid: Pid, status: ExitStatus) -> bool {
        let Some(i) = self.cleaning.iter().position(|c| c.pid == pid) else {
            return false;
        };
        let done = self.cleaning.swap_remove(i);
        let ok = matches!(status, ExitStatus::Exited(0));
        let how = match status {
            ExitStatus::Exited(c) => format!("exited with status {c}"),
            ExitStatus::Signaled { signal, .. } => format!("was killed by signal {signal}"),
        };
        let r = if ok {
            Reply::Accepted {
                message: format!("cleaned {}", done.unit),
            }
        } else {
            Reply::error(
                ErrorCode::Failed,
                format!(
                    "cleaning {} failed: the cleaner {how} (its reasons on the console)",
                    done.unit
                ),
            )
        };
        if let Some(id) = self.planner.graph().unit(&done.unit) {
            let note = if ok {
                "[init] cleaned".to_string()
            } else {
                format!("[init] cleaning failed: the cleaner {how}")
            };
            self.unit_note(id, &note);
            self.send_status(id);
        }
        self.answer_held(done.conn, done.serial, Watch::Clean, r);
        true
    }

    /// Holds client `c`'s reply until a child of the init ends (`watch`
    /// says which kind); the connection's serial, to know it again.
    pub(super) fn hold_for_child(&mut self, c: ConnId, watch: Watch) -> u64 {
        match self.control.conn_mut(c) {
            Some(conn) => {
                conn.watch = watch;
                conn.serial
            }
            None => 0,
        }
    }

    /// The reply held by [`Runtime::hold_for_child`], to its client if the
    /// connection is still the one that asked (a slot is reused once its
    /// connection closes).
    pub(super) fn answer_held(&mut self, c: ConnId, serial: u64, watch: Watch, r: Reply) {
        let ours = self
            .control
            .conn_mut(c)
            .is_some_and(|conn| conn.serial == serial && conn.watch == watch);
        if ours {
            if let Some(conn) = self.control.conn_mut(c) {
                conn.watch = Watch::None;
            }
            self.reply(c, r);
        }
    }

    /// Unit `id`'s status to the clients that watch every change (its
    /// `cleaning` is no change the planner knows of).
    pub(super) fn send_status(&mut self, id: UnitId) {
        let Some(st) = self.unit_status(id) else {
            return;
        };
        for c in self.control.watchers() {
            if self
                .control
                .conn(c)
                .is_some_and(|x| x.watch == Watch::Changes)
            {
                self.control.send(c, &Reply::Changed(st.clone()), &self.sys);
            }
        }
    }
}
