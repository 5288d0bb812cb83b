//! Upgrade in place, the runtime half: `initctl reexec` writes the
//! runtime's state as a [`Snapshot`] and has the system layer execute the
//! binary again ([`Runtime::reexec`]); the new image rebuilds its runtime
//! from it ([`Runtime::resume`]) instead of booting.
//!
//! What is carried: the unit set as loaded (the directory's units and the
//! transient sets: the directory is not read again, as a `reload` would),
//! the leases on transient sets (`leases.rs`), the target and the wants,
//! each unit's planner record (phase, state, PIDs, restart counters, the
//! pending timer as the time left), each unit's output pipes, notify socket and log ring, a service's
//! descriptor store (`fdstore.rs`: each descriptor and its name), a socket unit's
//! sockets (the service keeps accepting on the same ones, and what is
//! queued in them waits) and an `Accept=yes` socket's connections, a
//! scope's processes (its cgroup watched again, or the pidfds kept where it
//! has none) and the scopes not started yet, the log streams' name, and
//! the control socket's listener. The children are the same processes
//! with the same PIDs, and the init is still their parent: those that
//! exited during the `execve` are zombies that the first reap collects.
//! Client connections other than the one that asked close at the
//! `execve`; that one is answered by the new image, then closed.
//!
//! A snapshot the new image cannot read leaves it booting from the
//! directory (`main.rs`, `pid1.rs`); nothing is ever killed for it
//! (`docs/operations.md`).

use super::slots::{Source, UnitIo};
use super::unitset::{with_origin, UnitSet};
use super::wallclock::WallClock;
use super::{LogFeed, Runtime, CONN_BASE, LISTENER_TOKEN};
use crate::args::Settings;
use crate::control::{ConnId, Control};
use crate::logbuf::{LogBuf, LogLine};
use crate::notify::NotifySocket;
use crate::outpipe::{OutPipe, Stream};
use crate::sys::{FileId, Interest, Sys, WallTime};
use flotilla_units::graph::{shared, Graph, UnitId};
use flotilla_units::planner::{Planner, PlannerOptions};
use flotilla_units::protocol::{ErrorCode, Reply};
use flotilla_units::snapshot::{
    self, ControlCarry, IoCarry, LineCarry, LogCarry, NotifyCarry, Snapshot,
};
use flotilla_units::time::Instant;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

impl<S: Sys> Runtime<S> {
    /// `reexec`: executes the binary again with the state. Returns only if
    /// that failed (or is refused now): then nothing changed and the
    /// requester is told why.
    pub(super) fn reexec(&mut self, c: ConnId) {
        if let Some(why) = self.planner.carry_refusal() {
            self.reply(
                c,
                Reply::error(ErrorCode::NotPossible, format!("cannot re-exec: {why}")),
            );
            return;
        }
        // Every spawn's fate known before the snapshot (`execs.rs`).
        self.settle_execs();
        let (snap, keep) = self.snapshot(c);
        let bytes = snapshot::encode(&snap);
        self.sys.console(&format!(
            "init: re-executing (a snapshot of {} bytes, {} units, {} descriptors)",
            bytes.len(),
            snap.units.len(),
            keep.len()
        ));
        let Err(e) = self.sys.reexec(&bytes, &keep);
        self.sys
            .console(&format!("init: re-exec failed: {e}; going on as before"));
        self.reply(
            c,
            Reply::error(
                ErrorCode::NotPossible,
                format!("re-exec failed: {e}; the init goes on as it was"),
            ),
        );
    }

    /// The state, and the descriptors it names.
    fn snapshot(&self, requester: ConnId) -> (Snapshot, Vec<RawFd>) {
        let now = self.now();
        let (listener, id) = self.control.listener();
        let requester = self.control.conn_fd(requester);
        let mut keep: Vec<RawFd> = [listener].into_iter().chain(requester).collect();
        let g = self.planner.graph();
        let mut io = Vec::new();
        for slot in self.slots.all() {
            let Some(node) = g.get(slot.unit) else {
                continue;
            };
            let mut carry = IoCarry {
                unit: node.spec.name.clone(),
                reported: slot.reported,
                pipes: Vec::new(),
                notify: None,
                log: None,
                had_run: slot.run.is_some(),
                listening: Vec::new(),
                connections: Vec::new(),
                accepted: 0,
                adopted: None,
                stored: self.carry_store(slot.unit),
            };
            keep.extend(carry.stored.iter().map(|c| c.fd));
            if let Some(a) = slot.adopted.as_deref() {
                let held = a.adoption.pidfds();
                keep.extend(held.iter().map(|h| h.1));
                carry.adopted = Some(held);
            }
            if let Some(l) = slot.listening.as_deref() {
                for (fd, _) in &l.fds {
                    keep.push(fd.as_raw_fd());
                    carry.listening.push(fd.as_raw_fd());
                }
                (carry.connections, carry.accepted) = self.accepts.carry(&node.spec.name);
                keep.extend(carry.connections.iter().map(|c| c.1));
            }
            if let Some(uio) = slot.io.as_deref() {
                for (p, _) in &uio.pipes {
                    keep.push(p.as_raw_fd());
                    carry
                        .pipes
                        .push((p.as_raw_fd(), p.stream() == Stream::Stderr));
                }
                if let Some((sock, _)) = uio.notify.as_deref() {
                    keep.push(sock.as_raw_fd());
                    let FileId { dev, ino } = sock.file_id();
                    carry.notify = Some(NotifyCarry {
                        fd: sock.as_raw_fd(),
                        path: sock.path().to_string_lossy().into_owned(),
                        dev,
                        ino,
                    });
                }
                carry.log = Some(log_out(&uio.log));
            }
            io.push(carry);
        }
        let (instance, next_log_id) = self.feed.carry();
        let snap = Snapshot {
            magic: snapshot::MAGIC.to_string(),
            version: snapshot::VERSION,
            target: self.planner.target().to_string(),
            dir_units: self.units.dir_specs(g),
            load_errors: self.units.load_errors().to_vec(),
            transient: (self.units.transient_sets().iter())
                .map(|(set, units)| (set.clone(), units.iter().map(|u| (**u).clone()).collect()))
                .collect(),
            leases: self.units.leases.clone(),
            wants: self.planner.carry_wants(),
            held: self.planner.held().map(str::to_string).collect(),
            units: self.planner.carry(now),
            io,
            control: ControlCarry {
                listener,
                dev: id.dev,
                ino: id.ino,
                requester,
            },
            mono0: self.mono0.0,
            wall0: (self.wall.start().1.secs, self.wall.start().1.nanos),
            wall_sets: self
                .wall
                .sets()
                .iter()
                .map(|(m, w)| (m.0, (w.secs, w.nanos)))
                .collect(),
            notify_seq: self.notify_seq,
            log_instance: instance.to_string(),
            next_log_id,
            pending_scopes: self.scopes.carry_pending(),
            log: self.log,
            bus_names: self.planner.carry_bus_names(),
            manager_env: self.manager_env.clone(),
            service_watchdogs: self.planner.service_watchdogs(),
        };
        (snap, keep)
    }

    /// The runtime of the image before the re-exec, rebuilt from `snap`:
    /// the same units in the same states with the same processes, the
    /// control socket listening as before. Children that exited in
    /// between are reaped now; the requester is answered.
    pub fn resume(
        sys: S,
        settings: Settings,
        pid1: bool,
        snap: Snapshot,
    ) -> Result<Runtime<S>, String> {
        sys.open_events().map_err(|e| e.to_string())?;
        let listener = sys
            .adopt_fd(snap.control.listener)
            .map_err(|e| format!("control socket: {e}"))?;
        let id = FileId {
            dev: snap.control.dev,
            ino: snap.control.ino,
        };
        let control = Control::adopt(
            &sys,
            UnixListener::from(listener),
            &settings.control,
            id,
            LISTENER_TOKEN,
            CONN_BASE,
        )
        .map_err(|e| format!("control socket: {e}"))?;
        super::set_up(&sys, &settings, pid1);
        let (shape, problems) = crate::shape::load(&sys, &settings);
        for p in &problems {
            sys.console(&format!("init: {p}"));
        }
        let transient: std::collections::BTreeMap<_, Vec<_>> = (snap.transient.into_iter())
            .map(|(set, units)| (set, units.into_iter().map(std::sync::Arc::new).collect()))
            .collect();
        let mut all = shared(snap.dir_units.clone());
        for (set, units) in &transient {
            all.extend(with_origin(set, units));
        }
        let (graph, _) = Graph::build_shaped(all, shape);
        let opts = PlannerOptions {
            max_concurrent_starts: settings.max_concurrent_starts,
        };
        let now = sys.monotonic_now();
        let (planner, unplaced) = Planner::resume(
            graph,
            &snap.target,
            now,
            opts,
            snap.units,
            &snap.wants,
            &snap.held,
        );
        for u in &unplaced {
            let pids: Vec<String> = u.pids().map(|p| p.to_string()).collect();
            if !pids.is_empty() {
                sys.console(&format!(
                    "init: re-exec: `{}` is in no unit set; its processes ({}) are left running",
                    u.name,
                    pids.join(", ")
                ));
            }
        }
        let mut units = UnitSet::resumed(
            snap.dir_units,
            planner.graph(),
            snap.load_errors,
            transient,
            snap.leases,
        );
        // The manager's settings are read again, as systemd's re-exec
        // does (the unit files are not: they are carried).
        if let Some(root) = &settings.system_conf {
            let (manager, warnings) = crate::unitdir::read_system_conf(&sys, root);
            for w in &warnings {
                sys.console(&format!("init: {w}"));
            }
            units.manager = manager;
        }
        let feed = LogFeed::resume(snap.log_instance, snap.next_log_id);
        let wall = |(secs, nanos): (i64, u32)| WallTime { secs, nanos };
        let clock = WallClock::resumed(
            (Instant(snap.mono0), wall(snap.wall0)),
            snap.wall_sets
                .into_iter()
                .map(|(m, w)| (Instant(m), wall(w)))
                .collect(),
        );
        // Timers' zones, seed and stamps read again; a timer that was up is
        // armed afresh (no timer run is carried).
        let (timers, timer_env, problems) =
            super::timers::Timers::load(&sys, &settings, planner.graph(), &clock);
        for e in &problems {
            sys.console(&format!("init: {e}"));
        }
        let mut planner = planner;
        planner.set_timer_env(timer_env, now);
        planner.resume_bus_names(snap.bus_names);
        let mut rt = Runtime::assemble(
            sys, planner, settings, pid1, control, units, feed, clock, timers,
        );
        rt.watch_wall_clock();
        rt.follow_udev();
        rt.follow_mount_table();
        rt.notify_seq = snap.notify_seq;
        rt.log = snap.log;
        rt.manager_env = snap.manager_env;
        rt.planner.set_service_watchdogs(snap.service_watchdogs);
        rt.scopes.resume_pending(snap.pending_scopes);
        for io in snap.io {
            rt.restore_io(io);
        }
        rt.rewatch_paths();
        rt.sys.console(&format!(
            "init: re-executed: target {}, {} units",
            rt.planner.target(),
            rt.planner.graph().len()
        ));
        if let Some(fd) = snap.control.requester {
            rt.answer_requester(fd);
        }
        // What exited during the execve waits as a zombie: collected now.
        rt.reap();
        rt.drive();
        Ok(rt)
    }

    /// Answers the connection that asked for the re-exec, then closes it.
    fn answer_requester(&mut self, fd: RawFd) {
        let Ok(fd) = self.sys.adopt_fd(fd) else {
            return;
        };
        let Some(c) = self.control.insert(&self.sys, UnixStream::from(fd), 0, 0) else {
            return;
        };
        let exe = crate::sys::reexec::exe();
        let message = format!(
            "re-executed {} (init {})",
            exe.as_deref().unwrap_or(Path::new("init")).display(),
            env!("CARGO_PKG_VERSION")
        );
        self.reply(c, Reply::Accepted { message });
        self.control.finish(c, &self.sys);
    }

    /// One unit's I/O back: its log, pipes and notify socket, watched
    /// again (the pipes read at the next turn: they may hold what the
    /// unit wrote during the exec), and its run made again.
    fn restore_io(&mut self, io: IoCarry) {
        let Some(unit) = self.planner.graph().unit(&io.unit) else {
            self.drop_fds(&io);
            return;
        };
        let slot = self.slots.ensure(unit);
        self.slots.set_reported(unit, io.reported);
        let spec = self.planner.graph().node(unit).spec.clone();
        if let Some(log) = io.log {
            let lines = log.lines.into_iter().map(line_in);
            let buf = LogBuf::restore(
                super::executor::LOG_RING_BYTES,
                log.id,
                log.next_seq,
                log.persisted,
                lines,
            );
            if let Some(s) = self.slots.slot_mut(slot) {
                s.io = Some(Box::new(UnitIo::new(buf)));
            }
            // The rate limit and `ready-grep` from the spec, as at a spawn.
            let _ = self.io(unit, &spec);
            for (fd, stderr) in io.pipes {
                self.restore_pipe(unit, fd, stderr);
            }
            if let Some(n) = io.notify {
                self.restore_notify(unit, n);
            }
            self.queue_log(slot);
        }
        if !io.listening.is_empty() {
            self.restore_listening(unit, &spec, &io.listening);
        }
        self.restore_connections(&spec.name, &io.connections, io.accepted);
        if io.had_run {
            let made = self
                .credentials(&spec)
                .and_then(|creds| self.ensure_run(unit, &spec, &creds));
            if let Err(e) = made {
                self.unit_note(unit, &format!("after the re-exec: {e}"));
            }
        }
        if let Some(carried) = io.adopted {
            self.rewatch_scope(unit, carried);
        }
        if !io.stored.is_empty() {
            self.restore_store(unit, io.stored);
        }
    }

    fn restore_pipe(&mut self, unit: UnitId, fd: RawFd, stderr: bool) {
        let reader = match self.sys.adopt_fd(fd) {
            Ok(r) => r,
            Err(e) => return self.unit_note(unit, &format!("after the re-exec: output pipe {e}")),
        };
        let stream = if stderr {
            Stream::Stderr
        } else {
            Stream::Stdout
        };
        let pipe = OutPipe::adopt(stream, reader);
        let slot = self.slots.ensure(unit);
        let token = self.slots.alloc_token(Source::Output(slot));
        let _ = self.sys.watch(pipe.as_raw_fd(), token, Interest::Read);
        self.redrain.push(token);
        if let Some(uio) = self.slots.io_mut(unit) {
            uio.pipes.push((pipe, token));
        }
    }

    fn restore_notify(&mut self, unit: UnitId, n: NotifyCarry) {
        let fd = match self.sys.adopt_fd(n.fd) {
            Ok(fd) => fd,
            Err(e) => {
                return self.unit_note(unit, &format!("after the re-exec: notify socket {e}"))
            }
        };
        let id = FileId {
            dev: n.dev,
            ino: n.ino,
        };
        let sock = NotifySocket::adopt(fd, Path::new(&n.path), id);
        let slot = self.slots.ensure(unit);
        let token = self.slots.alloc_token(Source::Notify(slot));
        let _ = self.sys.watch(sock.as_raw_fd(), token, Interest::Read);
        self.redrain.push(token);
        if let Some(uio) = self.slots.io_mut(unit) {
            uio.notify = Some(Box::new((sock, token)));
        }
    }

    /// Closes the descriptors of a unit that is in no unit set any more.
    fn drop_fds(&self, io: &IoCarry) {
        let fds = io
            .pipes
            .iter()
            .map(|p| p.0)
            .chain(io.notify.as_ref().map(|n| n.fd))
            .chain(io.listening.iter().copied())
            .chain(io.connections.iter().map(|c| c.1))
            .chain(io.adopted.iter().flatten().map(|a| a.1))
            .chain(io.stored.iter().map(|c| c.fd));
        for fd in fds {
            drop(self.sys.adopt_fd(fd));
        }
    }
}

fn log_out(log: &LogBuf) -> LogCarry {
    LogCarry {
        id: log.id(),
        next_seq: log.next_seq(),
        persisted: log.persisted(),
        lines: log
            .lines()
            .map(|l| LineCarry {
                seq: l.seq,
                time: (l.time.secs, l.time.nanos),
                stderr: l.stream == Stream::Stderr,
                text: l.text.to_string(),
                cut: l.cut,
            })
            .collect(),
    }
}

fn line_in(l: LineCarry) -> LogLine {
    LogLine {
        seq: l.seq,
        time: WallTime {
            secs: l.time.0,
            nanos: l.time.1,
        },
        stream: if l.stderr {
            Stream::Stderr
        } else {
            Stream::Stdout
        },
        text: l.text.into_boxed_str(),
        cut: l.cut,
    }
}

/// The runtime at start: resumed from the snapshot `inherited` from the
/// image before (when this image was started by a re-exec), else booted.
/// A snapshot that cannot be read or resumed (another version, corrupt)
/// is said on the console and the init boots from the unit directory:
/// the processes of the image before are left running, never signalled
/// (they are reaped when they exit); units that were running start again
/// beside them (`docs/operations.md`).
pub fn start<S: Sys + Clone>(
    sys: S,
    settings: Settings,
    pid1: bool,
    inherited: Option<Result<Vec<u8>, String>>,
) -> Result<Runtime<S>, String> {
    crate::sys::context::set_default_policy(settings.sandbox);
    let snap = match inherited {
        None => return Runtime::new(sys, settings, pid1),
        Some(bytes) => bytes.and_then(|b| snapshot::decode(&b).map_err(|e| e.to_string())),
    };
    let failed = match snap {
        Ok(snap) => match Runtime::resume(sys.clone(), settings.clone(), pid1, snap) {
            Ok(rt) => return Ok(rt),
            Err(e) => e,
        },
        Err(e) => e,
    };
    sys.console(&format!(
        "init: re-exec: {failed}: booting from the unit directory; the processes of the \
         image before are left running, unsupervised"
    ));
    Runtime::new(sys, settings, pid1)
}
