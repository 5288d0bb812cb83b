//! `exit-type: cgroup` (systemd's `ExitType=cgroup`) on the init's side:
//! once such a service's main process exited, the planner asks
//! ([`Action::AwaitEmpty`]) to be told when nothing is left in the
//! unit's cgroup. The cgroup's `cgroup.events` is watched with inotify
//! (`sys/cgroups/adopt.rs`, as a scope's: the kernel modifies it when `populated`
//! changes; no polling), and [`Fact::CgroupEmpty`] is told when it says
//! `populated 0`, or at once when it does already. A unit without a
//! cgroup (an init given none) is told at once: nothing can be followed
//! then, and a note says so.
//!
//! [`Action::AwaitEmpty`]: flotilla_units::planner::Action::AwaitEmpty

use super::slots::{SlotId, Source};
use super::Runtime;
use crate::sys::Sys;
use flotilla_units::graph::UnitId;
use flotilla_units::planner::Fact;

impl<S: Sys> Runtime<S> {
    /// Watches `unit`'s cgroup until it is empty (told at once if it is).
    pub(super) fn await_empty(&mut self, unit: UnitId) {
        let made = match self.slots.get(unit).and_then(|s| s.run.as_deref()) {
            Some(run) if run.has_cgroup() => self.sys.adopt(run, &[]),
            _ => Err("no cgroup: the service ends with its main process".to_string()),
        };
        let adoption = match made {
            Ok(a) => a,
            Err(e) => {
                self.unit_note(unit, &format!("exit-type cgroup: {e}"));
                self.fact(Fact::CgroupEmpty { unit });
                return;
            }
        };
        let slot = self.slots.ensure(unit);
        let held = self.watched(adoption, Source::Emptying(slot), 0);
        if let Some(old) = self.slots.put_emptying(slot, held) {
            self.slots.close_adopted(old, &self.sys);
        }
        // It may be empty already: the kernel said so before the watch.
        let empty = self
            .slots
            .emptying_mut(slot)
            .is_some_and(|a| !self.sys.adopted_left(&mut a.adoption, None));
        if empty {
            self.emptied(slot);
        }
    }

    /// The watch of the slot's cgroup is readable: told if it is empty.
    pub(super) fn on_emptying(&mut self, slot: SlotId, t: crate::sys::Token) {
        let Some(a) = self.slots.emptying_mut(slot) else {
            return;
        };
        let Some(&(fd, _)) = a.fds.iter().find(|(_, tok)| *tok == t) else {
            return;
        };
        if !self.sys.adopted_left(&mut a.adoption, Some(fd)) {
            self.emptied(slot);
        }
    }

    /// The slot's cgroup is empty: the watch goes, the planner is told.
    fn emptied(&mut self, slot: SlotId) {
        let Some(unit) = self.slots.slot(slot).map(|s| s.unit) else {
            return;
        };
        let Some(a) = self.slots.take_emptying(slot) else {
            return;
        };
        self.slots.close_adopted(a, &self.sys);
        self.fact(Fact::CgroupEmpty { unit });
    }
}
