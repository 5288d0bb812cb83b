//! A service's descriptor store on the init's side (systemd's "file
//! descriptor store"; the rules are `flotilla_units::fdstore`'s, the keys
//! and limits in docs/systemd-units.md): the descriptors a unit's main
//! process sends with `FDSTORE=1` on its notify socket, kept in the unit's
//! slot while it restarts and handed back to its next main process after
//! its socket units' descriptors (`LISTEN_FDS`, `LISTEN_FDNAMES`).
//!
//! - Each entry is watched for hang-up only (`Interest::Hangup`; no
//!   polling loop): when its peer closes it leaves the store, unless it was
//!   sent with `FDPOLL=0`. A descriptor epoll cannot watch (a regular
//!   file) is kept unwatched, as systemd keeps it.
//! - The store is emptied when the unit is stopped or failed for good (no
//!   restart under way: `flotilla_units::fdstore::released_in`), when the
//!   unit leaves the unit set, and at the init's exit; a restart, asked
//!   for or automatic, keeps it.
//! - It is carried across a re-exec (`reexec.rs`): the descriptors are
//!   kept open across the `execve` and taken back with their names.

use super::held::{Held, Store};
use super::slots::{SlotId, Slots, Source};
use super::Runtime;
use crate::sys::kcmp::same_file;
use crate::sys::{Interest, Sys, Token};
use flotilla_units::fdstore::{Entry, Refused, StoreAsk};
use flotilla_units::graph::UnitId;
use flotilla_units::snapshot::StoredCarry;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

fn same(a: &Held, b: &Held) -> bool {
    same_file(a.fd.as_fd(), b.fd.as_fd())
}

/// The entry stored last in the store of `slot`.
fn last_entry(slots: &mut Slots, slot: SlotId) -> Option<&mut Entry<Held>> {
    slots
        .slot_mut(slot)
        .and_then(|s| s.store.as_deref_mut())
        .and_then(|s| s.last_mut())
}

impl<S: Sys> Runtime<S> {
    /// What one notify message of the unit's own process asks of its
    /// store, with the descriptors sent along: those of `FDSTORE=1` kept
    /// (up to `FileDescriptorStoreMax=`), every other one closed, and each
    /// refusal said in the unit's log.
    pub(super) fn store_request(&mut self, unit: UnitId, ask: &StoreAsk, fds: Vec<OwnedFd>) {
        if ask.remove {
            match ask.name.as_deref() {
                Some(name) => {
                    let gone = self.store_mut(unit).map(|s| s.remove_named(name));
                    for e in gone.into_iter().flatten() {
                        self.let_go(e.item);
                    }
                }
                None => self.unit_note(unit, "FDSTOREREMOVE=1 without FDNAME=: nothing removed"),
            }
        }
        if fds.is_empty() {
            return;
        }
        if !ask.store {
            let n = fds.len();
            drop(fds);
            self.unit_note(
                unit,
                &format!("notify: {n} descriptor(s) sent without FDSTORE=1, closed"),
            );
            return;
        }
        let max = self
            .planner
            .graph()
            .get(unit)
            .and_then(|n| n.spec.extras.file_descriptor_store_max)
            .unwrap_or(0);
        let name = match ask.name() {
            Ok(n) => n.to_string(),
            Err(bad) => {
                let note = format!(
                    "notify: FDNAME={bad} is not a valid name, stored as `{}`",
                    flotilla_units::fdstore::DEFAULT_NAME
                );
                self.unit_note(unit, &note);
                flotilla_units::fdstore::DEFAULT_NAME.to_string()
            }
        };
        let slot = self.slots.ensure(unit);
        let mut full = 0usize;
        for fd in fds {
            let held = Held { fd, token: None };
            let Some(store) = self
                .slots
                .slot_mut(slot)
                .map(|s| s.store.get_or_insert_default())
            else {
                return;
            };
            match store.add(max, &name, held, ask.poll, same) {
                Ok(()) => self.watch_last(slot),
                // Already held: this copy is closed.
                Err(Refused::Duplicate(_)) => {}
                Err(Refused::Full(_)) => full += 1,
            }
        }
        if full > 0 {
            let note = if max == 0 {
                format!(
                    "notify: FDSTORE=1 but the unit has no descriptor store \
                     (FileDescriptorStoreMax=0): {full} descriptor(s) closed"
                )
            } else {
                format!(
                    "notify: the descriptor store is full (FileDescriptorStoreMax={max}): \
                     {full} descriptor(s) closed"
                )
            };
            self.unit_note(unit, &note);
        }
    }

    /// Watches the entry just stored for hang-up, if it asks to be.
    fn watch_last(&mut self, slot: SlotId) {
        let Some(fd) = last_entry(&mut self.slots, slot)
            .filter(|e| e.poll)
            .map(|e| e.item.fd.as_raw_fd())
        else {
            return;
        };
        let token = self.slots.alloc_token(Source::Stored(slot));
        // Not watchable (a regular file, a memory file: EPERM): kept
        // unwatched, as systemd keeps it.
        if self.sys.watch(fd, token, Interest::Hangup).is_err() {
            self.slots.free_token(token);
            return;
        }
        if let Some(e) = last_entry(&mut self.slots, slot) {
            e.item.token = Some(token);
        }
    }

    /// A stored descriptor of the slot's unit hung up: it leaves the store.
    pub(super) fn on_stored_hangup(&mut self, slot: SlotId, t: Token) {
        let gone = self
            .slots
            .slot_mut(slot)
            .and_then(|s| s.store.as_deref_mut())
            .and_then(|s| s.remove_first(|e| e.item.token == Some(t)));
        match gone {
            Some(e) => self.let_go(e.item),
            None => self.slots.free_token(t),
        }
    }

    /// Unwatches and closes a stored descriptor.
    fn let_go(&mut self, held: Held) {
        if let Some(t) = held.token {
            let _ = self.sys.unwatch(held.fd.as_raw_fd());
            self.slots.free_token(t);
        }
    }

    fn store_mut(&mut self, unit: UnitId) -> Option<&mut Store> {
        self.slots
            .get_mut(unit)
            .and_then(|s| s.store.as_deref_mut())
    }

    /// Empties the unit's store (stopped for good); says how much it held.
    pub(super) fn release_store(&mut self, unit: UnitId) {
        let all = match self.store_mut(unit) {
            Some(s) if !s.is_empty() => s.take_all(),
            _ => return,
        };
        let n = all.len();
        for e in all {
            self.let_go(e.item);
        }
        self.unit_note(
            unit,
            &format!("descriptor store emptied: {n} descriptor(s) closed"),
        );
    }

    /// The unit's stored descriptors and their names, to hand its next
    /// main process after its sockets.
    pub(super) fn stored_fds(&self, unit: UnitId, fds: &mut Vec<RawFd>, names: &mut String) {
        let Some(store) = self.slots.get(unit).and_then(|s| s.store.as_deref()) else {
            return;
        };
        for e in store.entries() {
            if !fds.is_empty() {
                names.push(':');
            }
            fds.push(e.item.fd.as_raw_fd());
            names.push_str(&e.name);
        }
    }

    /// The store as the snapshot carries it (its descriptors are kept
    /// across the `execve`).
    pub(super) fn carry_store(&self, unit: UnitId) -> Vec<StoredCarry> {
        let Some(store) = self.slots.get(unit).and_then(|s| s.store.as_deref()) else {
            return Vec::new();
        };
        store
            .entries()
            .iter()
            .map(|e| StoredCarry {
                fd: e.item.fd.as_raw_fd(),
                name: e.name.clone(),
                poll: e.poll,
            })
            .collect()
    }

    /// After a re-exec: the unit's store taken back, each entry watched
    /// again as it was.
    pub(super) fn restore_store(&mut self, unit: UnitId, carried: Vec<StoredCarry>) {
        let slot = self.slots.ensure(unit);
        for c in carried {
            let fd = match self.sys.adopt_fd(c.fd) {
                Ok(fd) => fd,
                Err(e) => {
                    self.unit_note(unit, &format!("after the re-exec: stored descriptor {e}"));
                    continue;
                }
            };
            let Some(store) = self
                .slots
                .slot_mut(slot)
                .map(|s| s.store.get_or_insert_default())
            else {
                return;
            };
            let held = Held { fd, token: None };
            // The carried store fit its max; a lower max after an upgrade
            // does not drop what the service already handed over.
            if store.add(u32::MAX, &c.name, held, c.poll, same).is_ok() {
                self.watch_last(slot);
            }
        }
    }
}
