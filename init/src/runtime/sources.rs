//! What the kernel tells the loop, turned into planner facts: signals
//! (shutdown, reload, children), children's exits, unit output (the log
//! and `ready-grep`) and notify messages.

use super::slots::{SlotId, Source, UnitIo};
use super::Runtime;
use crate::notify::NotifyMsg;
use crate::outpipe::{Drained, Stream};
use crate::ratelimit::{dropped_note, THROTTLE};
use crate::sys::signals::Asked;
use crate::sys::{ExitStatus as SysExit, Pid, Sys, Token};
use flotilla_units::fdstore::StoreAsk;
use flotilla_units::graph::UnitId;
use flotilla_units::notify_access::{self, NewMain, Sender};
use flotilla_units::planner::{ExitStatus, Fact, Notify, OnChange, Role};
use flotilla_units::protocol::Reply;
use flotilla_units::spec::NotifyAccess;
use flotilla_units::state::UnitState;
use flotilla_units::time::Instant;
use std::os::fd::AsRawFd;

impl<S: Sys> Runtime<S> {
    /// Handles one signal (children are reaped after every batch).
    pub(super) fn on_signal(&mut self, signo: i32) {
        let why = crate::sys::signals::name(signo);
        match crate::sys::signals::asked(signo, self.sigint, self.pid1) {
            Asked::Shutdown(kind) => self.begin_shutdown(kind, &why),
            Asked::Immediate(kind) => self.begin_immediate(kind, &why),
            Asked::Reload => {
                if let Some(Reply::Error {
                    message, details, ..
                }) = self.begin_reload(None, OnChange::Restart)
                {
                    self.sys
                        .console(&format!("init: reload refused: {message}"));
                    for d in details {
                        self.sys.console(&format!("init: {d}"));
                    }
                }
            }
            // SIGCHLD: reaped after the batch. SIGQUIT, SIGUSR1, SIGUSR2,
            // SIGPIPE: documented as ignored.
            Asked::Nothing => {}
        }
    }

    /// Reaps every terminated child and tells the planner.
    pub(super) fn reap(&mut self) {
        // Bounded: a process table holds at most PID_MAX_LIMIT entries.
        for _ in 0..(1 << 22) {
            let Ok(Some((pid, status))) = self.sys.wait_any() else {
                break;
            };
            // A child that failed before `execve` is a spawn's failure,
            // not an exit; one that exec'd is the planner's from here.
            if self.exec_reaped(pid, &status) {
                continue;
            }
            // Started in this turn: its end in the next (`execs.rs`).
            if self
                .planner
                .owner(pid)
                .is_some_and(|(unit, _)| self.started_untold(unit))
            {
                self.exits.push((pid, status));
                continue;
            }
            self.exited(pid, status);
        }
    }

    /// Tells the planner of one reaped child's end.
    pub(super) fn exited(&mut self, pid: Pid, status: SysExit) {
        if self.reload_child_ended(pid, status)
            || self.cleaner_ended(pid, status)
            || self.binder_ended(pid, status)
        {
            return;
        }
        let status = match status {
            SysExit::Exited(c) => ExitStatus::Code(c),
            SysExit::Signaled { signal, .. } => ExitStatus::Signal(signal),
        };
        if let Some((unit, role)) = self.planner.owner(pid) {
            // A scope's process, reparented to the init: the scope
            // lasts while any of its processes does (`scopes.rs`).
            if self.slots.get(unit).is_some_and(|s| s.adopted.is_some()) {
                return;
            }
            // The command after `--`: the init's exit status (`cmd.rs`).
            if role == Role::Main
                && self
                    .planner
                    .graph()
                    .get(unit)
                    .is_some_and(|n| crate::cmd::is_builtin(&n.origin))
            {
                self.cmd_status = Some(status);
            }
            // Its last words are logged before its exit.
            self.drain_unit(unit);
            if role == Role::Main && !status.success() {
                self.unit_note(unit, &format!("process {pid} {}", status.describe()));
            }
        }
        if status == ExitStatus::Signal(libc::SIGKILL) {
            self.check_oom(pid);
        }
        self.fact(Fact::Exited { pid, status });
    }

    /// Reads what a unit's pipes hold now.
    fn drain_unit(&mut self, unit: flotilla_units::graph::UnitId) {
        let tokens: Vec<Token> = self
            .slots
            .io(unit)
            .map(|io| io.pipes.iter().map(|(_, t)| *t).collect())
            .unwrap_or_default();
        for t in tokens {
            self.on_source(t);
        }
    }

    /// Handles readiness of a unit's pipe or notify socket.
    pub(super) fn on_source(&mut self, t: Token) {
        match self.slots.source(t) {
            Some(Source::Output(slot)) => self.on_output(slot, t),
            Some(Source::Notify(slot)) => self.on_notify(slot),
            Some(Source::Trigger(slot)) => self.on_trigger(slot),
            Some(Source::Scope(slot)) => self.on_scope(slot, t),
            Some(Source::Emptying(slot)) => self.on_emptying(slot, t),
            Some(Source::Exec(_)) => self.on_exec(t),
            Some(Source::Stored(slot)) => self.on_stored_hangup(slot, t),
            Some(Source::Freezer(id)) => self.on_freezer(id),
            None => {}
        }
    }

    /// Reads one output pipe (up to its budget) into the unit's log, and
    /// tells the planner when a line matched `ready-grep`.
    ///
    /// Past its rate limit a unit's lines are counted and dropped, and its
    /// pipes are read at most once every [`THROTTLE`]: an event for a
    /// pipe read less than that ago is left for the timer.
    fn on_output(&mut self, slot: SlotId, t: Token) {
        if let Some(unit) = self.slots.slot(slot).map(|s| s.unit) {
            self.settle_unit_execs(unit);
            // Its start is reported first (`execs.rs`).
            if self.started_untold(unit) {
                self.redrain.push(t);
                return;
            }
        }
        let wall = self.sys.wall_now();
        let now = self.now();
        let Some(s) = self.slots.slot_mut(slot) else {
            return;
        };
        let unit = s.unit;
        // `ready-grep` matters only until the unit is ready.
        let starting = self.planner.state(unit) == UnitState::Starting;
        let Some(io) = s.io.as_deref_mut() else {
            return;
        };
        let UnitIo {
            pipes,
            log,
            grep,
            limit,
            limiter,
            ..
        } = io;
        let limit = *limit;
        if let Some(due) = limiter.read_due(now, limit) {
            self.throttle(t, due);
            return;
        }
        let Some(at) = pipes.iter().position(|(_, tok)| *tok == t) else {
            return;
        };
        let Some((pipe, _)) = pipes.get_mut(at) else {
            return;
        };
        limiter.note_read(now);
        let mut matched = false;
        let name = self
            .planner
            .graph()
            .get(unit)
            .map_or("", |n| n.spec.name.as_str());
        let mut mirror = self.mirror.as_mut();
        let res = pipe.drain(|line| {
            let verdict = limiter.admit(now, limit);
            if let Some(n) = verdict.dropped {
                log.push_text(wall, Stream::Init, dropped_note(n, limit).as_bytes(), false);
            }
            if starting && !matched {
                if let Some(re) = grep.as_ref() {
                    matched = re.is_match(&String::from_utf8_lossy(line.text));
                }
            }
            if verdict.keep {
                if let Some(m) = mirror.as_deref_mut() {
                    m.push(name, line.text);
                }
                log.push(wall, line);
            }
        });
        if let Some(m) = mirror {
            m.flush(&self.sys);
        }
        match res {
            Ok(Drained::More) if limiter.over(now, limit) => {
                self.throttle(t, now.after(THROTTLE));
            }
            Ok(Drained::More) => self.redrain.push(t),
            Ok(Drained::WouldBlock) | Err(_) => {}
            // End of file: every writer is gone, drop the pipe.
            Ok(Drained::Closed) => {
                let pipe = pipes.remove(at).0;
                let _ = self.sys.unwatch(pipe.as_raw_fd());
                drop(pipe);
                self.slots.free_token(t);
            }
        }
        // A flood that stopped: its count goes in at the end of its window
        // or of the output.
        if let Some(io) = self.slots.slot_mut(slot).and_then(|s| s.io.as_deref_mut()) {
            let told = match io.pipes.is_empty() {
                true => io.limiter.take_dropped(),
                false => io.limiter.ended_with_drops(now, io.limit),
            };
            if let Some(n) = told {
                let note = dropped_note(n, io.limit);
                io.log.push_text(wall, Stream::Init, note.as_bytes(), false);
            }
        }
        self.queue_log(slot);
        if matched {
            self.fact(Fact::ReadyLine { unit });
        }
    }

    /// Leaves pipe `t` for the throttle timer, which reads it at `due`.
    fn throttle(&mut self, t: Token, due: Instant) {
        if !self.throttled.contains(&t) {
            self.throttled.push(t);
        }
        self.throttle_at = Some(self.throttle_at.map_or(due, |x| x.min(due)));
    }

    /// Reads the unit's notify socket and passes on what its own processes
    /// sent.
    fn on_notify(&mut self, slot: SlotId) {
        if let Some(unit) = self.slots.slot(slot).map(|s| s.unit) {
            self.settle_unit_execs(unit);
            // Its start is reported first (`execs.rs`).
            if self.started_untold(unit) {
                let token = self
                    .slots
                    .io(unit)
                    .and_then(|io| io.notify.as_deref())
                    .map(|(_, t)| *t);
                if let Some(t) = token {
                    self.redrain.push(t);
                }
                return;
            }
        }
        let Some(s) = self.slots.slot_mut(slot) else {
            return;
        };
        let unit = s.unit;
        let Some((sock, token)) = s.io.as_deref_mut().and_then(|io| io.notify.as_deref_mut())
        else {
            return;
        };
        let token = *token;
        let received = match sock.recv_all() {
            Ok(r) => r,
            Err(e) => {
                self.unit_note(unit, &format!("notify socket: {e}"));
                return;
            }
        };
        if received.more {
            self.redrain.push(token);
        }
        // The socket must be writable by the unit's own user, so the sender
        // is checked against the unit's `NotifyAccess=`
        // (`notify_access.rs`): the main process, or a process in the
        // session it leads (`systemd-notify` run from a start script); the
        // commands run for it; any process of its cgroup.
        let access = self
            .planner
            .graph()
            .get(unit)
            .map_or(NotifyAccess::Main, |n| notify_access::effective(&n.spec));
        let cgroup: Vec<Pid> = self
            .slots
            .get(unit)
            .and_then(|s| s.run.as_deref())
            .map(|r| self.sys.unit_pids(r))
            .unwrap_or_default();
        let heard = Heard {
            unit,
            cgroup: &cgroup,
        };
        for dg in received.datagrams {
            let sender = dg.pid.map(|p| self.sender(&heard, p));
            if !sender.is_some_and(|s| notify_access::takes(access, s)) {
                let who = dg
                    .pid
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "an unknown process".into());
                self.unit_note(
                    unit,
                    &format!("notify message from {who} ignored: not the unit's process"),
                );
                continue;
            }
            let ask = StoreAsk::of(dg.msgs.iter().filter_map(|m| match m {
                NotifyMsg::Unknown { key, value } => Some((key.as_str(), value.as_str())),
                _ => None,
            }));
            if ask.any() || !dg.fds.is_empty() {
                self.store_request(unit, &ask, dg.fds);
            }
            for m in dg.msgs {
                let msg = match m {
                    NotifyMsg::Ready => Notify::Ready,
                    NotifyMsg::Reloading => Notify::Reloading,
                    NotifyMsg::Stopping => Notify::Stopping,
                    NotifyMsg::Status(s) => Notify::Status(s),
                    NotifyMsg::MainPid(p) => {
                        let asked = NewMain {
                            manager: p == self.sys.getpid(),
                            exists: self.sys.session_of(p).is_some(),
                            of_unit: self.sender(&heard, p).in_unit,
                            from_root: dg.uid == Some(0),
                        };
                        if let Err(why) = notify_access::new_main(asked) {
                            self.unit_note(unit, &format!("notify: MAINPID={p} ignored: {why}"));
                            continue;
                        }
                        Notify::MainPid(p)
                    }
                    NotifyMsg::Errno(e) => Notify::Errno(e),
                    NotifyMsg::ExtendTimeout(d) => Notify::ExtendTimeout(d),
                    NotifyMsg::Watchdog => Notify::Watchdog,
                    NotifyMsg::Malformed(m) => {
                        self.unit_note(unit, &format!("notify: {m}"));
                        continue;
                    }
                    _ => continue,
                };
                self.fact(Fact::Notify { unit, msg });
            }
        }
    }

    /// What the init knows of process `p` as a sender to unit
    /// `heard.unit` (`notify_access::Sender`), with its main PID now (a
    /// message before may have changed it).
    fn sender(&self, heard: &Heard<'_>, p: Pid) -> Sender {
        let main = self
            .planner
            .view(heard.unit)
            .and_then(|v| v.pid)
            .is_some_and(|m| p == m || self.sys.session_of(p) == self.sys.session_of(m));
        let owner = self.planner.owner(p).filter(|(u, _)| *u == heard.unit);
        Sender {
            main,
            command: owner.is_some_and(|(_, r)| r != Role::Main),
            // Without a cgroup, the main process's session is the unit.
            in_unit: heard.cgroup.contains(&p)
                || owner.is_some()
                || (heard.cgroup.is_empty() && main),
        }
    }
}

/// The unit a notify socket's datagrams are for, and the processes of
/// its cgroup when they were read.
struct Heard<'a> {
    unit: UnitId,
    cgroup: &'a [Pid],
}
