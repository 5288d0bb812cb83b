//! Path units on the init's side: one inotify instance per path unit
//! (`sys/fs/paths.rs`), watched in the loop under one token, with a watch on
//! each watched path's directory and its parents (so that a path that
//! appears anywhere below `/` is seen: `PathSpec::watched_dirs`) and on
//! the path itself for `PathChanged=`, `PathModified=` and
//! `DirectoryNotEmpty=`. Watches are added again after each batch of
//! events: a directory made since gets its own.
//!
//! A batch fires the trigger when a level kind holds now (`PathExists=`,
//! `PathExistsGlob=`, `DirectoryNotEmpty=`) or an event touched a
//! `PathChanged=` path (written and closed, attributes, made, removed,
//! renamed; an entry of it, for a directory) or, for `PathModified=`, any
//! write too. Then, as for a socket, the instance is not watched until the
//! planner says the trigger waits again (its unit settled); the queued
//! events are dropped then and the level kinds looked at again, firing at
//! once if one still holds — as at the unit's start. A re-exec carries no
//! instance: the new image watches every path unit that is up afresh.

use super::held::Watching;
use super::slots::{SlotId, Source};
use super::Runtime;
use crate::sys::paths::PathEvent;
use crate::sys::{Interest, Sys};
use flotilla_units::graph::UnitId;
use flotilla_units::planner::Fact;
use flotilla_units::spec::UnitSpec;
use flotilla_units::trigger::{PathKind, PathSpec};
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

/// Whether an event `mask` on `touched` fires a `PathChanged=` or
/// `PathModified=` spec: it is the spec's path, or an entry of it.
fn fires(spec: &PathSpec, touched: &Path, mask: u32) -> bool {
    let changed = libc::IN_CLOSE_WRITE
        | libc::IN_ATTRIB
        | libc::IN_CREATE
        | libc::IN_DELETE
        | libc::IN_MOVED_FROM
        | libc::IN_MOVED_TO
        | libc::IN_DELETE_SELF
        | libc::IN_MOVE_SELF;
    let wanted = match spec.kind {
        PathKind::Changed => changed,
        PathKind::Modified => changed | libc::IN_MODIFY,
        _ => return false,
    };
    mask & wanted != 0 && (touched == spec.path || touched.parent() == Some(spec.path.as_path()))
}

impl<S: Sys> Runtime<S> {
    /// Makes the directories of `MakeDirectory=` and watches the paths of
    /// path unit `unit`; the first look at them is the resumption that
    /// follows (`resume_triggers`), once the unit is up.
    pub(super) fn arm_paths(&mut self, unit: UnitId, spec: &UnitSpec) -> Result<(), String> {
        let Some(settings) = spec.path() else {
            return Err("a path unit without paths".to_string());
        };
        if settings.make_directory {
            // As systemd: the watched directories themselves, not what
            // an existence check waits for.
            let dirs = settings
                .paths
                .iter()
                .filter(|p| !matches!(p.kind, PathKind::Exists | PathKind::ExistsGlob));
            for p in dirs {
                self.sys
                    .make_dir(&p.path, settings.directory_mode)
                    .map_err(|e| format!("MakeDirectory= {e}"))?;
            }
        }
        let fd = self.sys.path_watch().map_err(|e| e.to_string())?;
        let slot = self.slots.ensure(unit);
        let token = self.slots.alloc_token(Source::Trigger(slot));
        let mut w = Watching {
            fd,
            token,
            specs: settings.paths.clone(),
            wds: Vec::new(),
            watched: false,
        };
        self.add_watches(&mut w);
        if let Some(s) = self.slots.slot_mut(slot) {
            s.watching = Some(Box::new(w));
        }
        self.armed.pause(slot);
        Ok(())
    }

    /// Watches every directory the specs need that exists now.
    fn add_watches(&self, w: &mut Watching) {
        for spec in &w.specs {
            for dir in spec.watched_dirs() {
                if let Ok(wd) = self.sys.path_watch_add(w.fd.as_fd(), &dir) {
                    if !w.wds.iter().any(|(d, p)| *d == wd && *p == dir) {
                        w.wds.retain(|(d, _)| *d != wd);
                        w.wds.push((wd, dir));
                    }
                }
            }
        }
    }

    /// Whether `events` (or, with none, the file system now) fire `w`:
    /// the path that fires it (a level kind's that holds, else the
    /// `PathChanged=`/`PathModified=` spec's path an event touched), which
    /// its unit gets as `TRIGGER_PATH`.
    fn paths_fire(&self, w: &Watching, events: &[PathEvent]) -> Option<PathBuf> {
        let level = w
            .specs
            .iter()
            .filter(|s| s.kind.is_level())
            .find_map(|s| self.sys.path_holding(s));
        level.or_else(|| {
            events.iter().find_map(|e| {
                let (_, dir) = w.wds.iter().find(|(d, _)| *d == e.wd)?;
                let touched = match &e.name {
                    Some(n) => dir.join(n),
                    None => dir.clone(),
                };
                w.specs
                    .iter()
                    .find(|s| fires(s, &touched, e.mask))
                    .map(|s| s.path.clone())
            })
        })
    }

    /// The slot's inotify instance is readable: its events read, the
    /// watches renewed, the trigger fired if they say so.
    pub(super) fn on_paths(&mut self, slot: SlotId) {
        let Some(s) = self.slots.slot_mut(slot) else {
            return;
        };
        let unit = s.unit;
        let Some(mut w) = s.watching.take() else {
            return;
        };
        let events = self.sys.path_events(w.fd.as_fd());
        let fired = if w.watched {
            self.paths_fire(&w, &events)
        } else {
            None
        };
        let fire = fired.is_some();
        self.add_watches(&mut w);
        if fire {
            w.watched = false;
            let _ = self.sys.unwatch(w.fd.as_raw_fd());
            self.armed.pause(slot);
        }
        if let Some(s) = self.slots.slot_mut(slot) {
            s.watching = Some(w);
        }
        if fire {
            self.fact(Fact::Fired { unit, path: fired });
        }
    }

    /// A paused path unit waits again: what queued meanwhile is dropped,
    /// and the level kinds are looked at now: the trigger fires at once
    /// (staying paused; returns `true`) or its instance is watched again.
    pub(super) fn resume_paths(&mut self, slot: SlotId) -> bool {
        let Some(s) = self.slots.slot_mut(slot) else {
            return false;
        };
        let unit = s.unit;
        let Some(mut w) = s.watching.take() else {
            return false;
        };
        let _ = self.sys.path_events(w.fd.as_fd());
        self.add_watches(&mut w);
        let fired = self.paths_fire(&w, &[]);
        let fire = fired.is_some();
        if !fire {
            w.watched = true;
            let _ = self.sys.watch(w.fd.as_raw_fd(), w.token, Interest::Read);
        }
        if let Some(s) = self.slots.slot_mut(slot) {
            s.watching = Some(w);
        }
        if fire {
            self.fact(Fact::Fired { unit, path: fired });
        }
        fire
    }

    /// After a re-exec (which carries no inotify instance): every path
    /// unit that is up watches its paths afresh, looked at again at once.
    pub(super) fn rewatch_paths(&mut self) {
        let up: Vec<(UnitId, std::sync::Arc<UnitSpec>)> = self
            .planner
            .graph()
            .node_ids()
            .filter(|&u| self.planner.state(u) == flotilla_units::state::UnitState::Running)
            .map(|u| (u, self.planner.graph().node(u).spec.clone()))
            .filter(|(_, s)| {
                use flotilla_units::spec::{Arm, Ready};
                s.kind.row().ready == Ready::Armed(Arm::Paths)
            })
            .collect();
        for (u, spec) in up {
            if let Err(e) = self.arm_paths(u, &spec) {
                self.unit_note(u, &format!("after the re-exec: {e}"));
            }
        }
    }

    /// Removes the watches of path unit `unit`, if it has any.
    pub(super) fn disarm_paths(&mut self, unit: UnitId) {
        let Some(slot) = self.slots.id_of(unit) else {
            return;
        };
        let taken = self.slots.slot_mut(slot).and_then(|s| s.watching.take());
        if let Some(w) = taken {
            self.slots.close_watching(*w, &self.sys);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn what_a_change_fires() {
        let changed = PathSpec {
            kind: PathKind::Changed,
            path: "/etc/app.conf".into(),
        };
        let conf = Path::new("/etc/app.conf");
        assert!(fires(&changed, conf, libc::IN_CLOSE_WRITE));
        assert!(fires(&changed, conf, libc::IN_MOVED_TO));
        assert!(
            !fires(&changed, conf, libc::IN_MODIFY),
            "a write not yet closed"
        );
        assert!(!fires(
            &changed,
            Path::new("/etc/other"),
            libc::IN_CLOSE_WRITE
        ));
        let modified = PathSpec {
            kind: PathKind::Modified,
            path: "/var/spool/in".into(),
        };
        assert!(fires(
            &modified,
            Path::new("/var/spool/in/a"),
            libc::IN_MODIFY
        ));
        let exists = PathSpec {
            kind: PathKind::Exists,
            path: "/etc/app.conf".into(),
        };
        assert!(
            !fires(&exists, conf, libc::IN_CREATE),
            "a level kind is asked, not told"
        );
    }
}
