//! The `freeze` request (systemd's `FreezeUnit`/`ThawUnit`, `systemctl
//! freeze`/`thaw`): a running unit's cgroup, or a slice's directory,
//! frozen or thawed with cgroup v2's `cgroup.freeze` (`sys/cgroups/freezer.rs`).
//! The states and what moves them are `flotilla_units::freezer`'s; here
//! the writes, the watch of `cgroup.events` (the kernel's `frozen 1` or
//! `frozen 0`, by inotify, never polled) and the clients waiting: one is
//! answered when the kernel says the change is done, as systemd answers
//! once its freezer job completes.
//!
//! Only units and slices that are not `running` have an entry. A stop
//! of a frozen unit thaws it first ([`Runtime::thaw_for_stop`]), so that
//! its processes get the stop signal, as systemd does; its end forgets
//! the entry.

use std::path::PathBuf;

use super::held::Adopted;
use super::slots::Source;
use super::Runtime;
use crate::control::{ConnId, Watch};
use crate::sys::Sys;
use flotilla_units::context::slice::{slice_dirs, DEFAULT_SLICE};
use flotilla_units::freezer::{self, Asked, FreezerAction, FreezerState};
use flotilla_units::graph::UnitId;
use flotilla_units::protocol::{ErrorCode, Reply, UnitStatus, SLICE_SOURCE};
use flotilla_units::spec::UnitType;
use flotilla_units::state::UnitState;

/// The units and slices flotilla froze, or is freezing or thawing.
#[derive(Default)]
pub(super) struct Freezers {
    list: Vec<Frozen>,
    next: u32,
}

/// One unit or slice whose freezer state is not `running`.
struct Frozen {
    id: u32,
    /// The unit's or the slice's name.
    name: String,
    /// Its cgroup.
    dir: PathBuf,
    state: FreezerState,
    /// While freezing or thawing: the watch of its `cgroup.events`.
    watch: Option<Adopted>,
    /// The clients waiting for the change to be done, with their serials.
    waiters: Vec<(ConnId, u64)>,
}

impl<S: Sys> Runtime<S> {
    /// `freeze` (or `thaw`) of `name`, asked by `c`: the reply now when it
    /// is refused or nothing is to be done, else none (it comes when the
    /// kernel says the change is done).
    pub(super) fn freeze(&mut self, c: ConnId, name: &str, thaw: bool) -> Option<Reply> {
        let dir = match self.freezer_dir(name) {
            Ok(d) => d,
            Err((code, why)) => return Some(Reply::error(code, why)),
        };
        if !self.sys.can_freeze(&dir) {
            return Some(Reply::error(
                ErrorCode::NotPossible,
                format!(
                    "{name}: its cgroup {} has no cgroup v2 freezer (cgroup.freeze)",
                    dir.display()
                ),
            ));
        }
        let action = if thaw {
            FreezerAction::Thaw
        } else {
            FreezerAction::Freeze
        };
        let state = self.own_freezer_state(name);
        let (frozen, now) = match freezer::ask(state, action) {
            Asked::Already => {
                return Some(Reply::Accepted {
                    message: format!("{name} is {} already", state.as_str()),
                })
            }
            Asked::InProgress => {
                return Some(Reply::error(
                    ErrorCode::NotPossible,
                    format!(
                        "Previously requested freezer operation for unit '{name}' is still in \
                         progress."
                    ),
                ))
            }
            Asked::Write { frozen, now } => (frozen, now),
        };
        let adoption = match self.sys.freeze_cgroup(&dir, frozen) {
            Ok(a) => a,
            Err(e) => return Some(Reply::error(ErrorCode::Failed, e)),
        };
        // A freeze turned around by a thaw: its clients are told.
        let (old_watch, old_waiters) = match self.freezers.list.iter_mut().find(|f| f.name == name)
        {
            Some(f) => (f.watch.take(), std::mem::take(&mut f.waiters)),
            None => (None, Vec::new()),
        };
        if let Some(w) = old_watch {
            self.slots.close_adopted(w, &self.sys);
        }
        for (conn, serial) in old_waiters {
            self.answer_waiter(
                conn,
                serial,
                Reply::error(
                    ErrorCode::Failed,
                    format!("freezing {name} was cancelled by a thaw"),
                ),
            );
        }
        let id = match self.freezers.list.iter().find(|f| f.name == name) {
            Some(f) => f.id,
            None => {
                self.freezers.next = self.freezers.next.wrapping_add(1);
                let id = self.freezers.next;
                self.freezers.list.push(Frozen {
                    id,
                    name: name.to_string(),
                    dir,
                    state: now,
                    watch: None,
                    waiters: Vec::new(),
                });
                id
            }
        };
        let held = self.watched(adoption, Source::Freezer(id), 0);
        let serial = match self.control.conn_mut(c) {
            Some(conn) => {
                conn.watch = Watch::Freeze;
                conn.serial
            }
            None => 0,
        };
        if let Some(f) = self.freezers.list.iter_mut().find(|f| f.id == id) {
            f.state = now;
            f.watch = Some(held);
            f.waiters.push((c, serial));
        }
        self.freezer_changed(name);
        // The kernel may have said it before the watch began.
        self.freezer_look(id);
        None
    }

    /// The watch of freezer entry `id` is readable.
    pub(super) fn on_freezer(&mut self, id: u32) {
        self.freezer_look(id);
    }

    /// Reads entry `id`'s kernel word; answers its clients once the
    /// change is done.
    fn freezer_look(&mut self, id: u32) {
        let Some(f) = self.freezers.list.iter_mut().find(|f| f.id == id) else {
            return;
        };
        let Some(w) = f.watch.as_mut() else {
            return;
        };
        let frozen = self.sys.cgroup_frozen(&mut w.adoption);
        let state = freezer::kernel_said(f.state, frozen);
        if state == f.state || !freezer::settled(state) {
            return;
        }
        f.state = state;
        let name = f.name.clone();
        let watch = f.watch.take();
        let waiters = std::mem::take(&mut f.waiters);
        if state.is_running() {
            self.freezers.list.retain(|f| f.id != id);
        }
        if let Some(w) = watch {
            self.slots.close_adopted(w, &self.sys);
        }
        for (conn, serial) in waiters {
            let message = format!("{name} is {}", state.as_str());
            self.answer_waiter(conn, serial, Reply::Accepted { message });
        }
        self.freezer_changed(&name);
    }

    /// Before unit `id`'s processes get a stop signal: a unit flotilla
    /// froze (or is freezing) is thawed, and its clients told, so that
    /// the signal reaches them (systemd thaws a unit it stops, too). Also
    /// when its run ends: the entry goes with its cgroup.
    pub(super) fn thaw_for_stop(&mut self, id: UnitId) {
        if self.freezers.list.is_empty() {
            return;
        }
        let Some(name) = self.planner.graph().get(id).map(|n| n.spec.name.clone()) else {
            return;
        };
        let Some(i) = self.freezers.list.iter().position(|f| f.name == name) else {
            return;
        };
        let f = self.freezers.list.swap_remove(i);
        // The write's own watch is not needed: nobody waits for the thaw.
        if let Ok(w) = self.sys.freeze_cgroup(&f.dir, false) {
            drop(w);
        }
        if let Some(w) = f.watch {
            self.slots.close_adopted(w, &self.sys);
        }
        for (conn, serial) in f.waiters {
            let r = Reply::error(
                ErrorCode::Failed,
                format!("{name} is being stopped: the freezer operation was cancelled"),
            );
            self.answer_waiter(conn, serial, r);
        }
        self.unit_note(id, "[init] thawed to be stopped");
        self.freezer_changed(&name);
    }

    /// After a unit's run ended: the slices whose directories went with
    /// it (its slice's last unit) lose their entries, so that the slice
    /// made again later starts `running`, as a new cgroup does.
    pub(super) fn forget_gone_slices(&mut self) {
        if self.freezers.list.is_empty() {
            return;
        }
        let gone: Vec<u32> = self
            .freezers
            .list
            .iter()
            .filter(|f| self.planner.graph().unit(&f.name).is_none())
            .filter(|f| self.sys.slice_cgroup(&f.name).is_none())
            .map(|f| f.id)
            .collect();
        for id in gone {
            let Some(i) = self.freezers.list.iter().position(|f| f.id == id) else {
                continue;
            };
            let f = self.freezers.list.swap_remove(i);
            if let Some(w) = f.watch {
                self.slots.close_adopted(w, &self.sys);
            }
            for (conn, serial) in f.waiters {
                let r = Reply::error(
                    ErrorCode::Failed,
                    format!("{}: its cgroup is gone (no unit runs below it)", f.name),
                );
                self.answer_waiter(conn, serial, r);
            }
        }
    }

    /// The freezer state of a unit or slice as flotilla set it.
    fn own_freezer_state(&self, name: &str) -> FreezerState {
        self.freezers
            .list
            .iter()
            .find(|f| f.name == name)
            .map_or(FreezerState::Running, |f| f.state)
    }

    /// The freezer state unit `id` shows: its own, else its slices'.
    pub(super) fn freezer_shown(&self, id: UnitId) -> FreezerState {
        if self.freezers.list.is_empty() {
            return FreezerState::Running;
        }
        let Some(node) = self.planner.graph().get(id) else {
            return FreezerState::Running;
        };
        let slice = node.spec.extras.context.resources.slice.as_deref();
        let above: Vec<FreezerState> = slice_dirs(slice.unwrap_or(DEFAULT_SLICE))
            .iter()
            .map(|s| self.own_freezer_state(s))
            .collect();
        freezer::shown(self.own_freezer_state(&node.spec.name), &above)
    }

    /// Whether unit `id`'s cgroup can be frozen now (systemd's
    /// `CanFreeze`): it runs in a cgroup that has the freezer.
    pub(super) fn can_freeze(&self, id: UnitId) -> bool {
        self.slots
            .get(id)
            .and_then(|s| s.run.as_deref())
            .and_then(|r| r.cgroup())
            .is_some_and(|cg| self.sys.can_freeze(cg.dir()))
    }

    /// The status of slice `name` while its directory exists: active,
    /// with its freezer state (flotilla's slices are places in the cgroup
    /// tree, not units: docs/service-context.md, "Slices").
    pub(super) fn slice_status(&self, name: &str) -> Option<UnitStatus> {
        if !name.ends_with(".slice") {
            return None;
        }
        let dir = self.sys.slice_cgroup(name)?;
        Some(UnitStatus {
            unit: name.to_string(),
            kind: UnitType::Virtual,
            state: UnitState::Running,
            status: format!("cgroup {}", dir.display()),
            since: self.wall_of(self.now()),
            source: SLICE_SOURCE.to_string(),
            freezer: self.own_freezer_state(name),
            can_freeze: self.sys.can_freeze(&dir),
            ..UnitStatus::default()
        })
    }

    /// The status `s` of a unit, and for a slice unit the facts of its
    /// directory: active while it exists (a unit in it runs), as
    /// systemd's slice is active while a unit in it is, with its freezer
    /// state.
    pub(super) fn with_slice_dir(&self, mut s: UnitStatus) -> UnitStatus {
        if !s.kind.row().holds_units {
            return s;
        }
        if let Some(dir) = self.slice_status(&s.unit) {
            if s.state == UnitState::Disabled {
                s.state = UnitState::Running;
                s.status = dir.status;
            }
            s.freezer = dir.freezer;
            s.can_freeze = dir.can_freeze;
        }
        s
    }

    /// The cgroup of `name` to freeze: a running unit's, or a slice's
    /// directory; else the refusal.
    fn freezer_dir(&self, name: &str) -> Result<PathBuf, (ErrorCode, String)> {
        let g = self.planner.graph();
        // A slice unit is frozen by its directory, as any slice.
        let Some(id) = g
            .unit(name)
            .filter(|&i| !g.node(i).spec.kind.row().holds_units)
        else {
            return match name.ends_with(".slice") {
                true => self.sys.slice_cgroup(name).ok_or_else(|| {
                    (
                        ErrorCode::NotPossible,
                        format!("{name}: no unit runs in the slice (it has no cgroup)"),
                    )
                }),
                false => Err((ErrorCode::UnknownUnit, format!("no unit named `{name}`"))),
            };
        };
        if !matches!(
            self.planner.state(id),
            UnitState::Running | UnitState::Reloading
        ) {
            return Err((ErrorCode::NotPossible, format!("Unit {name} is inactive.")));
        }
        self.slots
            .get(id)
            .and_then(|s| s.run.as_deref())
            .and_then(|r| r.cgroup())
            .map(|cg| cg.dir().to_path_buf())
            .ok_or_else(|| {
                (
                    ErrorCode::NotPossible,
                    format!(
                        "{name} has no cgroup of its own (the init was given none): nothing to \
                         freeze"
                    ),
                )
            })
    }

    /// Answers a waiting client, if its connection is still the one that
    /// asked.
    fn answer_waiter(&mut self, c: ConnId, serial: u64, r: Reply) {
        let ours = self
            .control
            .conn_mut(c)
            .is_some_and(|conn| conn.serial == serial && conn.watch == Watch::Freeze);
        if !ours {
            return;
        }
        if let Some(conn) = self.control.conn_mut(c) {
            conn.watch = Watch::None;
        }
        self.reply(c, r);
    }

    /// The freezer state of `name` changed: the units it shows on (itself,
    /// or those below a slice) to the clients watching every change.
    fn freezer_changed(&mut self, name: &str) {
        let g = self.planner.graph();
        let ids: Vec<UnitId> = match g.unit(name) {
            Some(id) => vec![id],
            None => g
                .node_ids()
                .take(g.unit_count())
                .filter(|&id| {
                    g.get(id).is_some_and(|n| {
                        let slice = n.spec.extras.context.resources.slice.as_deref();
                        slice_dirs(slice.unwrap_or(DEFAULT_SLICE))
                            .iter()
                            .any(|s| s == name)
                    })
                })
                .collect(),
        };
        for id in ids {
            self.send_status(id);
        }
    }
}
