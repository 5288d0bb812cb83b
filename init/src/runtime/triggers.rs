//! Socket units on the init's side (path units' watches are
//! `watches.rs`'s, paused and resumed here alike): their sockets bound when the unit
//! starts ([`Action::Arm`], before its service: the service is ordered
//! after it), kept in the unit's slot and watched in the loop (epoll, one
//! token per descriptor). The first readiness fires the trigger
//! ([`Fact::Fired`]); the init then stops watching the unit's sockets —
//! the service accepts — until the planner says the trigger waits again
//! ([`flotilla_units::planner::Planner::trigger_waits`]: its service idle
//! and settled), checked after each turn for the few paused triggers only.
//! A service's main process is handed the sockets of every socket unit
//! that triggers it as 3, 4, … with `LISTEN_FDS`, `LISTEN_FDNAMES` and
//! `LISTEN_PID` (its own PID, written by the child). A socket with
//! `Accept=yes` is never paused: the init accepts its connections itself
//! (`accepts.rs`).
//!
//! The sockets live as long as the socket unit is up: across restarts of
//! its service, across reloads that leave the socket unit unchanged (its
//! slot keeps them) and across a re-exec (carried as descriptors, taken
//! back by [`Runtime::restore_listening`]).

use super::held::Listening;
use super::slots::{SlotId, Source};
use super::Runtime;
use crate::sys::{Interest, Sys};
use flotilla_units::graph::UnitId;
use flotilla_units::planner::Fact;
use flotilla_units::spec::{Arm, Ready, UnitSpec};
use flotilla_units::trigger::{ListenAddr, SocketSettings};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

/// The socket units the loop knows of: those with sockets, and those
/// paused (fired, not watched until their service is idle again).
#[derive(Debug, Default)]
pub(super) struct Armed {
    sockets: Vec<SlotId>,
    paused: Vec<SlotId>,
}

impl Armed {
    /// The trigger in `slot` is not watched until its unit is idle.
    pub fn pause(&mut self, slot: SlotId) {
        if !self.paused.contains(&slot) {
            self.paused.push(slot);
        }
    }
}

impl<S: Sys> Runtime<S> {
    /// Binds the sockets of socket unit `unit` and watches them; on any
    /// failure what was made is closed again and the error says which
    /// line failed.
    pub(super) fn arm_trigger(&mut self, unit: UnitId, spec: &UnitSpec) -> Result<(), String> {
        self.disarm_trigger(unit);
        match spec.kind.row().ready {
            Ready::Armed(Arm::Paths) => return self.arm_paths(unit, spec),
            Ready::Armed(Arm::Sockets) => {}
            Ready::AtOnce
            | Ready::Clock
            | Ready::Spawned
            | Ready::Notified
            | Ready::Pidfile
            | Ready::ScriptExited
            | Ready::Adopted
            | Ready::Exited => {
                return Err(format!(
                    "`{}` units are not armed by the init",
                    spec.kind.as_str()
                ))
            }
        }
        let Some(settings) = spec.socket() else {
            return Err("a socket unit without its socket settings".to_string());
        };
        if settings.listen.is_empty() {
            return Err(
                "no ListenStream=, ListenDatagram=, ListenSequentialPacket=, ListenFIFO=, \
                 ListenNetlink= or ListenSpecial= this init can make (the unit's other \
                 Listen…= kinds are not supported)"
                    .into(),
            );
        }
        let owner = self.socket_owner(settings)?;
        let mut fds = Vec::with_capacity(settings.listen.len());
        let mut made: Vec<PathBuf> = Vec::new();
        for l in &settings.listen {
            match self.sys.listen(l, settings, owner) {
                Ok(fd) => fds.push(fd),
                Err(e) => {
                    for p in &made {
                        let _ = self.sys.remove_file(p);
                    }
                    return Err(format!("{}={}: {e}", l.kind.key(), l.addr));
                }
            }
            if let (ListenAddr::Path(p), true) = (&l.addr, l.kind.makes_file()) {
                made.push(p.clone());
            }
        }
        // As systemd: a link that cannot be made is said, and the socket
        // works without it.
        if let [target] = made.as_slice() {
            for link in &settings.symlinks {
                if let Err(e) = self.sys.symlink(target, link) {
                    self.unit_note(unit, &format!("Symlinks={}: {e}", link.display()));
                }
            }
        }
        self.install_listening(unit, spec, settings, fds, true);
        Ok(())
    }

    /// After a re-exec: takes back the sockets of socket unit `unit`
    /// (descriptors `fds`, in the order of its `Listen…=` lines), watched
    /// unless its service has them now. Sockets that no longer match the
    /// unit's lines are closed, and the unit's note says so.
    pub(super) fn restore_listening(&mut self, unit: UnitId, spec: &UnitSpec, fds: &[RawFd]) {
        let mut owned = Vec::with_capacity(fds.len());
        for &fd in fds {
            match self.sys.adopt_fd(fd) {
                Ok(fd) => owned.push(fd),
                Err(e) => self.unit_note(unit, &format!("after the re-exec: socket {e}")),
            }
        }
        let settings = spec.socket();
        let Some(settings) = settings.filter(|s| s.listen.len() == owned.len()) else {
            self.unit_note(
                unit,
                "after the re-exec: its sockets no longer match the unit; closed",
            );
            return;
        };
        let waits = self.planner.trigger_waits(unit);
        self.install_listening(unit, spec, settings, owned, waits);
    }

    /// Keeps socket unit `unit`'s sockets `fds` in its slot, watched or
    /// paused (left to its service).
    fn install_listening(
        &mut self,
        unit: UnitId,
        spec: &UnitSpec,
        settings: &SocketSettings,
        fds: Vec<OwnedFd>,
        watch: bool,
    ) {
        let slot = self.slots.ensure(unit);
        let mut tokens = Vec::with_capacity(fds.len());
        for fd in fds {
            let token = self.slots.alloc_token(Source::Trigger(slot));
            if watch {
                let _ = self.sys.watch(fd.as_raw_fd(), token, Interest::Read);
            }
            tokens.push((fd, token));
        }
        let files = settings.listen.iter().filter_map(|l| match &l.addr {
            ListenAddr::Path(p) if l.kind.makes_file() => Some(p.clone()),
            _ => None,
        });
        let listening = Listening {
            fds: tokens,
            lines: settings.listen.iter().map(ToString::to_string).collect(),
            // By the unit's own name: `Service=` may name an alias.
            service: spec
                .extras
                .triggers
                .first()
                .map(|n| match self.planner.resolve_triggered(n) {
                    Some(u) => self.planner.graph().node(u).spec.name.clone(),
                    None => n.clone(),
                })
                .unwrap_or_default(),
            unit: spec.name.clone(),
            name: settings
                .file_descriptor_name
                .clone()
                .unwrap_or_else(|| spec.name.clone()),
            remove: if settings.remove_on_stop {
                files.chain(settings.symlinks.iter().cloned()).collect()
            } else {
                Vec::new()
            },
            watched: watch,
            accept: settings.accept,
        };
        if let Some(s) = self.slots.slot_mut(slot) {
            s.listening = Some(Box::new(listening));
        }
        self.armed.sockets.push(slot);
        if !watch {
            self.armed.pause(slot);
        }
    }

    /// The uid and gid of `SocketUser=`/`SocketGroup=` (a user's primary
    /// group unless a group is named).
    fn socket_owner(&self, s: &SocketSettings) -> Result<Option<(u32, u32)>, String> {
        let group = match &s.socket_group {
            Some(g) => Some(
                self.sys
                    .lookup_group(g)
                    .map_err(|e| format!("SocketGroup={g}: {e}"))?,
            ),
            None => None,
        };
        Ok(match (&s.socket_user, group) {
            (Some(u), g) => {
                let info = self
                    .sys
                    .lookup_user(u)
                    .map_err(|e| format!("SocketUser={u}: {e}"))?;
                Some((info.uid, g.unwrap_or(info.gid)))
            }
            (None, Some(g)) => Some((0, g)),
            (None, None) => None,
        })
    }

    /// Closes the sockets of trigger `unit` (removing their files with
    /// `RemoveOnStop=`) or its path watches, if it has any.
    pub(super) fn disarm_trigger(&mut self, unit: UnitId) {
        let Some(slot) = self.slots.id_of(unit) else {
            return;
        };
        self.disarm_paths(unit);
        self.close_sockets(slot, true);
    }

    /// Closes the sockets of the unit in `slot`, if it has any, and stops
    /// watching them; their files are removed as `RemoveOnStop=` says when
    /// `remove_files`, else left.
    fn close_sockets(&mut self, slot: SlotId, remove_files: bool) {
        if let Some(mut l) = self.slots.slot_mut(slot).and_then(|s| s.listening.take()) {
            if !remove_files {
                l.remove.clear();
            }
            self.slots.close_listening(*l, &self.sys);
        }
        self.armed.sockets.retain(|&s| s != slot);
        self.armed.paused.retain(|&s| s != slot);
    }

    /// The socket units kept running as `not-found` (their file gone at a
    /// reload, docs/systemd-units.md) keep no socket, as systemd's: its
    /// not-found unit has no `Listen*=` to take the descriptors back at
    /// the reload, so they are closed, the socket files left where they
    /// are (nothing is removed, `RemoveOnStop=` or not), and the unit
    /// stays active, refusing connections until it is started again (its
    /// file back, a restart binds anew). systemd's test 12 checks each.
    pub(super) fn close_not_found_sockets(&mut self) {
        let g = self.planner.graph();
        let gone: Vec<SlotId> = (g.ids().filter(|&i| g.node(i).not_found()))
            .filter_map(|i| self.slots.id_of(i))
            .collect();
        for slot in gone {
            self.close_sockets(slot, false);
        }
    }

    /// A socket of the slot's unit is ready: the trigger fires, and its
    /// sockets are left to the service until the trigger waits again. (Or
    /// the slot's path unit's watches have news.)
    pub(super) fn on_trigger(&mut self, slot: SlotId) {
        let Some(s) = self.slots.slot_mut(slot) else {
            return;
        };
        if s.watching.is_some() {
            return self.on_paths(slot);
        }
        if s.listening.as_deref().is_some_and(|l| l.accept) {
            return self.on_accept(slot);
        }
        let unit = s.unit;
        let Some(l) = s.listening.as_deref_mut().filter(|l| l.watched) else {
            return;
        };
        l.watched = false;
        for (fd, _) in &l.fds {
            let _ = self.sys.unwatch(fd.as_raw_fd());
        }
        self.armed.pause(slot);
        self.fact(Fact::Fired { unit, path: None });
    }

    /// Watches again the sockets (and paths) of paused triggers whose unit
    /// is idle (after each batch of actions; nothing to do when none is
    /// paused). Whether a path unit fired at once.
    pub(super) fn resume_triggers(&mut self) -> bool {
        if self.armed.paused.is_empty() {
            return false;
        }
        let mut fired = false;
        let mut i = 0;
        while let Some(&slot) = self.armed.paused.get(i) {
            let Some(s) = self.slots.slot_mut(slot) else {
                self.armed.paused.swap_remove(i);
                continue;
            };
            if !self.planner.trigger_waits(s.unit) {
                i += 1;
                continue;
            }
            self.armed.paused.swap_remove(i);
            if let Some(l) = s.listening.as_deref_mut() {
                l.watched = true;
                for (fd, token) in &l.fds {
                    // Added again: a connection queued meanwhile makes it
                    // ready at once.
                    let _ = self.sys.watch(fd.as_raw_fd(), *token, Interest::Read);
                }
            } else if s.watching.is_some() && self.resume_paths(slot) {
                self.armed.pause(slot);
                fired = true;
            }
        }
        fired
    }

    /// The sockets handed to a main process of `service`: those of every
    /// socket unit that triggers it or that its `Sockets=` names, in the
    /// order they were bound, and their `LISTEN_FDNAMES`; for the instance
    /// of an `Accept=yes` socket's connection, that connection alone
    /// (named `connection`, as systemd names it). The listener of an
    /// `Accept=yes` socket is never handed: the init accepts on it, and a
    /// service would take connections from under it, or, handed it
    /// blocking (`sys/procs/spawn/`), leave the loop's `accept` waiting.
    pub(super) fn listen_fds_for(&self, service: &UnitSpec) -> (Vec<RawFd>, String) {
        let named = &service.extras.sockets;
        let service = service.name.as_str();
        if let Some((fd, _)) = self.connection_of(service) {
            return (vec![fd], "connection".to_string());
        }
        let mut fds = Vec::new();
        let mut names = String::new();
        for &slot in &self.armed.sockets {
            let Some(l) = self.slots.slot(slot).and_then(|s| s.listening.as_deref()) else {
                continue;
            };
            if l.accept || (l.service != service && !named.contains(&l.unit)) {
                continue;
            }
            for (fd, _) in &l.fds {
                fds.push(fd.as_raw_fd());
                if !names.is_empty() {
                    names.push(':');
                }
                names.push_str(&l.name);
            }
        }
        (fds, names)
    }

    /// The sockets of unit `id` as status shows them (none when it has
    /// none bound).
    pub(super) fn listening(&self, id: UnitId) -> Vec<String> {
        self.slots
            .get(id)
            .and_then(|s| s.listening.as_deref())
            .map(|l| l.lines.clone())
            .unwrap_or_default()
    }
}
