//! Socket units with `Accept=yes`: the init accepts each connection
//! itself, in the loop (the listening sockets are non-blocking and always
//! watched), makes an instance of the socket's template service for it
//! ([`Runtime::instantiate`]; named as systemd names it,
//! [`flotilla_units::trigger::instance_name`]) and tells the planner
//! ([`Fact::Accepted`]), which requires the instance until it settles, as
//! a fired trigger's unit. The instance's main process is handed the
//! connection as its one descriptor (3, `LISTEN_FDS=1`,
//! `LISTEN_FDNAMES=connection`, and `REMOTE_ADDR`/`REMOTE_PORT` for IP).
//! The init keeps the connection until the instance has settled and is no
//! longer required; then the instance leaves the unit set and the
//! connection is closed ([`Runtime::end_connections`], after each batch of
//! actions, with nothing to do when there are no connections).
//!
//! `MaxConnections=` and `MaxConnectionsPerSource=` count the connections
//! the init holds: one over either is closed at once, with a line on the
//! console and in the socket unit's log.

use super::slots::SlotId;
use super::Runtime;
use crate::sys::Sys;
use flotilla_units::graph::shared;
use flotilla_units::planner::{Fact, OnChange};
use flotilla_units::state::UnitState;
use flotilla_units::trigger::{instance_name, Peer};
use std::collections::{BTreeMap, HashSet};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

/// Connections taken from the sockets in one go; more wait for the next
/// turn (the loop's events are edge-triggered: the socket is read again
/// then without waiting).
const ACCEPT_BUDGET: usize = 64;

/// One accepted connection, held until its instance ends.
struct Connection {
    /// The instance made for it.
    instance: String,
    /// The socket unit that accepted it.
    socket: String,
    fd: OwnedFd,
    peer: Peer,
}

/// The connections the init holds, and each socket unit's count of those
/// it accepted (which numbers the instances, as systemd's `NAccepted`).
#[derive(Default)]
pub(super) struct Accepts {
    conns: Vec<Connection>,
    accepted: BTreeMap<String, u64>,
}

impl Accepts {
    /// The instances of the connections held (a reload makes them again).
    pub fn instances(&self) -> impl Iterator<Item = &str> {
        self.conns.iter().map(|c| c.instance.as_str())
    }

    /// What a re-exec carries of socket unit `socket`: each connection's
    /// instance and descriptor, and the count of accepted ones.
    pub fn carry(&self, socket: &str) -> (Vec<(String, RawFd)>, u64) {
        let conns = self
            .conns
            .iter()
            .filter(|c| c.socket == socket)
            .map(|c| (c.instance.clone(), c.fd.as_raw_fd()))
            .collect();
        (conns, self.accepted.get(socket).copied().unwrap_or(0))
    }

    /// Socket unit `socket`'s connections now, and accepted in all.
    pub fn counts(&self, socket: &str) -> (u32, u64) {
        let now = self.conns.iter().filter(|c| c.socket == socket).count();
        let all = self.accepted.get(socket).copied().unwrap_or(0);
        (u32::try_from(now).unwrap_or(u32::MAX), all)
    }
}

impl<S: Sys> Runtime<S> {
    /// A socket of the slot's `Accept=yes` unit is ready: each pending
    /// connection (up to [`ACCEPT_BUDGET`]) gets its instance, or is
    /// closed over a limit.
    pub(super) fn on_accept(&mut self, slot: SlotId) {
        let Some(s) = self.slots.slot(slot) else {
            return;
        };
        let Some(l) = s.listening.as_deref() else {
            return;
        };
        let unit = s.unit;
        let mut taken = Vec::new();
        let mut more = None;
        'fds: for (fd, token) in &l.fds {
            loop {
                if taken.len() == ACCEPT_BUDGET {
                    more = Some(*token);
                    break 'fds;
                }
                match self.sys.accept_connection(fd.as_fd()) {
                    Ok(Some(c)) => taken.push(c),
                    Ok(None) => break,
                    Err(e) => {
                        self.sys.console(&format!("init: {e}"));
                        break;
                    }
                }
            }
        }
        if let Some(t) = more {
            self.redrain.push(t);
        }
        let spec = self.planner.graph().node(unit).spec.clone();
        let Some(settings) = spec.socket() else {
            return;
        };
        let template = spec.extras.triggers.first().cloned().unwrap_or_default();
        for (fd, peer) in taken {
            let (now, _) = self.accepts.counts(&spec.name);
            let from = peer.source();
            let refused = if now >= settings.max_connections {
                Some(format!(
                    "{now} connections already (MaxConnections={})",
                    settings.max_connections
                ))
            } else if let Some(src) = from
                .as_deref()
                .filter(|_| settings.max_connections_per_source > 0)
            {
                let per = self
                    .accepts
                    .conns
                    .iter()
                    .filter(|c| c.socket == spec.name && c.peer.source().as_deref() == Some(src))
                    .count();
                (per >= settings.max_connections_per_source as usize).then(|| {
                    format!(
                        "{per} connections from {src} already (MaxConnectionsPerSource={})",
                        settings.max_connections_per_source
                    )
                })
            } else {
                None
            };
            if let Some(why) = refused {
                let from = from.map(|s| format!(" from {s}")).unwrap_or_default();
                self.socket_note(&spec.name, &format!("connection{from} closed: {why}"));
                continue;
            }
            let n = self.accepts.accepted.entry(spec.name.clone()).or_insert(0);
            let instance = instance_name(&template, *n, &peer);
            *n += 1;
            match self.instantiate(&instance) {
                Ok(true) => {}
                Ok(false) => {
                    self.socket_note(
                        &spec.name,
                        &format!("connection closed: a unit named {instance} exists already"),
                    );
                    continue;
                }
                Err(e) => {
                    self.socket_note(&spec.name, &format!("connection closed: {e}"));
                    continue;
                }
            }
            self.accepts.conns.push(Connection {
                instance: instance.clone(),
                socket: spec.name.clone(),
                fd,
                peer,
            });
            // Making the instance renumbered the units: the socket by name.
            if let Some(unit) = self.planner.graph().unit(&spec.name) {
                self.fact(Fact::Accepted { unit, instance });
            }
        }
    }

    /// After a re-exec: socket unit `socket`'s connections (each instance
    /// and descriptor) and its count of accepted ones, taken back.
    pub(super) fn restore_connections(
        &mut self,
        socket: &str,
        conns: &[(String, RawFd)],
        accepted: u64,
    ) {
        if accepted > 0 {
            self.accepts.accepted.insert(socket.to_string(), accepted);
        }
        for (instance, fd) in conns {
            match self.sys.adopt_fd(*fd) {
                Ok(fd) => {
                    let peer = self.sys.connection_peer(fd.as_fd());
                    self.accepts.conns.push(Connection {
                        instance: instance.clone(),
                        socket: socket.to_string(),
                        fd,
                        peer,
                    });
                }
                Err(e) => self.sys.console(&format!(
                    "init: after the re-exec: {instance}'s connection: {e}"
                )),
            }
        }
    }

    /// A line about socket unit `socket` on the console and in its log.
    fn socket_note(&mut self, socket: &str, text: &str) {
        self.sys.console(&format!("init: {socket}: {text}"));
        let g = self.planner.graph();
        if let Some(id) = g.unit(socket) {
            let spec = g.node(id).spec.clone();
            let _ = self.io(id, &spec);
            self.unit_note(id, text);
        }
    }

    /// The connection handed to a main process of `service`, if it is an
    /// instance made for one: the descriptor, and its `REMOTE_ADDR` and
    /// `REMOTE_PORT`.
    pub(super) fn connection_of(&self, service: &str) -> Option<(RawFd, Option<(String, u16)>)> {
        let c = self.accepts.conns.iter().find(|c| c.instance == service)?;
        let remote = c.peer.remote().map(|(ip, port)| (ip.to_string(), port));
        Some((c.fd.as_raw_fd(), remote))
    }

    /// Closes the connections whose instance has settled and is no longer
    /// required (or is gone), and takes those instances out of the unit
    /// set. Whether the set changed (the planner may have more to do).
    pub(super) fn end_connections(&mut self) -> bool {
        if self.accepts.conns.is_empty() {
            return false;
        }
        let g = self.planner.graph();
        let ended: HashSet<String> = self
            .accepts
            .conns
            .iter()
            .filter(|c| match g.unit(&c.instance) {
                None => true,
                Some(id) => self.planner.view(id).is_none_or(|v| {
                    !v.required
                        && matches!(
                            v.state,
                            UnitState::Disabled | UnitState::Exited | UnitState::Failed
                        )
                }),
            })
            .map(|c| c.instance.clone())
            .collect();
        if ended.is_empty() {
            return false;
        }
        self.accepts.conns.retain(|c| !ended.contains(&c.instance));
        let mut dir = self.units.dir_specs(g);
        let before = dir.len();
        dir.retain(|(s, _)| !ended.contains(&s.name));
        if dir.len() == before {
            return false;
        }
        let mut all = shared(dir.clone());
        all.extend(self.units.transient_specs());
        match self.replace_with(all, None, OnChange::Restart) {
            Ok(_) => {
                self.units.set_dir(dir, self.planner.graph());
                true
            }
            Err(e) => {
                self.sys.console(&format!(
                    "init: the ended connections' instances cannot be removed: {}",
                    e.join("; ")
                ));
                false
            }
        }
    }
}
