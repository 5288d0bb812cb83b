//! The one per-unit table: for each unit the init has dealt with, a
//! [`Slot`] with its I/O ([`UnitIo`]: output pipes, log, notify socket,
//! `ready-grep`) and the last state reported for it; and the tokens of the
//! descriptors watched for it.
//!
//! A slot keeps its number for its unit's life, whatever a reload does to
//! the planner's unit ids: tokens name slots, so when the graph is
//! replaced only the index from unit id to slot changes, in one place
//! ([`Slots::renumber`]). A unit gone for good takes its slot, its I/O and
//! its tokens with it.

use crate::logbuf::LogBuf;
use crate::notify::NotifySocket;
use crate::outpipe::OutPipe;
use crate::ratelimit::{Limiter, RateLimit};
use crate::sys::unitrun::UnitRun;
use crate::sys::{Sys, Token};
use flotilla_units::graph::UnitId;
use flotilla_units::state::UnitState;
use std::os::fd::AsRawFd;

use super::SOURCE_BASE;

/// A slot's number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SlotId(u32);

/// What a token stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// One of the unit's output pipes (which one: by token, in
    /// [`UnitIo::pipes`]).
    Output(SlotId),
    /// The unit's notify socket.
    Notify(SlotId),
    /// One of a socket unit's sockets (`triggers.rs`), or a path unit's
    /// inotify instance (`watches.rs`).
    Trigger(SlotId),
    /// What watches a scope's processes (`scopes.rs`).
    Scope(SlotId),
    /// What watches the cgroup of an `exit-type: cgroup` service whose
    /// main process exited (`emptied.rs`).
    Emptying(SlotId),
    /// The report pipe of a process forked for the unit, until it exec'd
    /// (`execs.rs`).
    Exec(SlotId),
    /// A descriptor in the unit's store, watched for hang-up
    /// (`fdstore.rs`).
    Stored(SlotId),
    /// The `cgroup.events` of a unit or slice being frozen or thawed, by
    /// its entry (`freezer.rs`).
    Freezer(u32),
}

/// A unit's I/O: its output pipes, log, notify socket and ready-grep.
///
/// Each spawn gets its own pair of pipes (stdout, stderr): the child has the
/// write ends, the init only the read ends, so it holds two descriptors per
/// running process rather than four per unit (every descriptor the init
/// holds is copied and closed again by each `clone` + `execve`). A pipe is
/// dropped at end of file, when every writer (the process and whatever
/// inherited its output) is gone; a unit may have several at once (main
/// process, a stop command, a daemon's leftovers).
pub(super) struct UnitIo {
    pub pipes: Vec<(OutPipe, Token)>,
    pub log: LogBuf,
    /// Boxed: only `foreground-notified` units have one.
    pub notify: Option<Box<(NotifySocket, Token)>>,
    /// Boxed: only units with `ready-grep` have one.
    pub grep: Option<Box<regex_lite::Regex>>,
    /// The unit's output rate limit (from its spec, at each spawn).
    pub limit: RateLimit,
    /// Its lines in the current window of the limit.
    pub limiter: Limiter,
}

impl UnitIo {
    /// A unit's I/O before its first process: a log and nothing else.
    pub fn new(log: LogBuf) -> UnitIo {
        UnitIo {
            pipes: Vec::new(),
            log,
            notify: None,
            grep: None,
            limit: RateLimit::default(),
            limiter: Limiter::default(),
        }
    }
}

/// One unit's record.
pub(super) struct Slot {
    /// The unit, by its id in the planner's current graph.
    pub unit: UnitId,
    /// The last state printed on the console and noted in its log
    /// (`disabled` before any).
    pub reported: UnitState,
    /// Made at the unit's first spawn.
    pub io: Option<Box<UnitIo>>,
    /// What the init made for the unit's current run (cgroup, directories,
    /// prepared context): made at its first spawn, ended when it stops.
    pub run: Option<Box<UnitRun>>,
    /// `run` was prepared from a definition a reload has changed since:
    /// the unit's next start makes a new one (a changed unit restarts
    /// without passing through `disabled`, where runs end).
    pub run_stale: bool,
    /// A socket unit's sockets, while it is up (`triggers.rs`).
    pub listening: Option<Box<super::held::Listening>>,
    /// A path unit's watches, while it is up (`watches.rs`).
    pub watching: Option<Box<super::held::Watching>>,
    /// A scope's processes, while it is up (`scopes.rs`).
    pub adopted: Option<Box<super::held::Adopted>>,
    /// A service's descriptor store (`fdstore.rs`), across its restarts.
    pub store: Option<Box<super::held::Store>>,
}

/// The table. See the module documentation.
#[derive(Default)]
pub(super) struct Slots {
    slots: Vec<Option<Slot>>,
    free_slots: Vec<u32>,
    /// Each unit id's slot; [`NO_SLOT`] for none.
    by_unit: Vec<u32>,
    tokens: Vec<Option<Source>>,
    /// Free entries of `tokens` (two are taken and given back per process).
    free_tokens: Vec<usize>,
    /// The watches of `exit-type: cgroup` services' cgroups once their
    /// main process exited, until empty (`emptied.rs`), by slot: beside
    /// the slots, as few services have one and each for a moment.
    emptying: Vec<(SlotId, super::held::Adopted)>,
}

const NO_SLOT: u32 = u32::MAX;

impl Slots {
    /// The slot of `unit`, if it has one.
    pub fn id_of(&self, unit: UnitId) -> Option<SlotId> {
        self.by_unit
            .get(unit.index())
            .copied()
            .filter(|&s| s != NO_SLOT)
            .map(SlotId)
    }

    /// The slot numbered `id`.
    pub fn slot(&self, id: SlotId) -> Option<&Slot> {
        self.slots.get(id.0 as usize).and_then(Option::as_ref)
    }

    /// The slot numbered `id`.
    pub fn slot_mut(&mut self, id: SlotId) -> Option<&mut Slot> {
        self.slots.get_mut(id.0 as usize).and_then(Option::as_mut)
    }

    /// The slot of `unit`.
    pub fn get(&self, unit: UnitId) -> Option<&Slot> {
        self.id_of(unit).and_then(|id| self.slot(id))
    }

    /// The slot of `unit`.
    pub fn get_mut(&mut self, unit: UnitId) -> Option<&mut Slot> {
        self.id_of(unit).and_then(|id| self.slot_mut(id))
    }

    /// The I/O of `unit`, if it has any.
    pub fn io(&self, unit: UnitId) -> Option<&UnitIo> {
        self.get(unit).and_then(|s| s.io.as_deref())
    }

    /// The I/O of `unit`, if it has any.
    pub fn io_mut(&mut self, unit: UnitId) -> Option<&mut UnitIo> {
        self.get_mut(unit).and_then(|s| s.io.as_deref_mut())
    }

    /// The slot of `unit`, made if it has none.
    pub fn ensure(&mut self, unit: UnitId) -> SlotId {
        if let Some(id) = self.id_of(unit) {
            return id;
        }
        let slot = Slot {
            unit,
            reported: UnitState::Disabled,
            io: None,
            run: None,
            run_stale: false,
            listening: None,
            watching: None,
            adopted: None,
            store: None,
        };
        let id = match self.free_slots.pop() {
            Some(i) => {
                if let Some(s) = self.slots.get_mut(i as usize) {
                    *s = Some(slot);
                }
                i
            }
            None => {
                self.slots.push(Some(slot));
                u32::try_from(self.slots.len() - 1).unwrap_or(NO_SLOT)
            }
        };
        if self.by_unit.len() <= unit.index() {
            self.by_unit.resize(unit.index() + 1, NO_SLOT);
        }
        if let Some(b) = self.by_unit.get_mut(unit.index()) {
            *b = id;
        }
        SlotId(id)
    }

    /// The last state reported for `unit`.
    pub fn reported(&self, unit: UnitId) -> UnitState {
        self.get(unit).map_or(UnitState::Disabled, |s| s.reported)
    }

    /// Notes the state reported for `unit`.
    pub fn set_reported(&mut self, unit: UnitId, state: UnitState) {
        let id = self.ensure(unit);
        if let Some(s) = self.slot_mut(id) {
            s.reported = state;
        }
    }

    /// A token for a new source.
    pub fn alloc_token(&mut self, src: Source) -> Token {
        let free = loop {
            match self.free_tokens.pop() {
                Some(i) if self.tokens.get(i).is_some_and(Option::is_none) => break Some(i),
                Some(_) => {}
                None => break None,
            }
        };
        let i = match free {
            Some(i) => {
                if let Some(t) = self.tokens.get_mut(i) {
                    *t = Some(src);
                }
                i
            }
            None => {
                self.tokens.push(Some(src));
                self.tokens.len() - 1
            }
        };
        Token(SOURCE_BASE + i)
    }

    /// Gives a token back.
    pub fn free_token(&mut self, t: Token) {
        let Some(i) = t.0.checked_sub(SOURCE_BASE) else {
            return;
        };
        if let Some(s) = self.tokens.get_mut(i) {
            if s.take().is_some() {
                self.free_tokens.push(i);
            }
        }
    }

    /// What `t` stands for, if anything.
    pub fn source(&self, t: Token) -> Option<Source> {
        t.0.checked_sub(SOURCE_BASE)
            .and_then(|i| self.tokens.get(i))
            .copied()
            .flatten()
    }

    /// Follows a replacement of the graph: `map` gives each old unit id its
    /// new one, `None` for a unit gone for good, whose slot is closed (its
    /// descriptors unwatched and closed, its notify socket removed, its log
    /// dropped) and freed with its tokens.
    pub fn renumber(&mut self, map: &[Option<UnitId>], units: usize, sys: &dyn Sys) {
        let mut by_unit = vec![NO_SLOT; units];
        for i in 0..self.slots.len() {
            let Some(Some(slot)) = self.slots.get_mut(i) else {
                continue;
            };
            match map.get(slot.unit.index()).copied().flatten() {
                Some(new) => {
                    slot.unit = new;
                    if let Some(b) = by_unit.get_mut(new.index()) {
                        *b = u32::try_from(i).unwrap_or(NO_SLOT);
                    }
                }
                None => {
                    if let Some(Some(gone)) = self.slots.get_mut(i).map(Option::take) {
                        if let Some(io) = gone.io {
                            self.close_io(*io, sys);
                        }
                        if let Some(run) = gone.run {
                            sys.end_unit(&run, false);
                        }
                        if let Some(l) = gone.listening {
                            self.close_listening(*l, sys);
                        }
                        if let Some(w) = gone.watching {
                            self.close_watching(*w, sys);
                        }
                        if let Some(a) = gone.adopted {
                            self.close_adopted(*a, sys);
                        }
                        if let Some(a) =
                            self.take_emptying(SlotId(u32::try_from(i).unwrap_or(NO_SLOT)))
                        {
                            self.close_adopted(a, sys);
                        }
                        if let Some(s) = gone.store {
                            self.close_store(*s, sys);
                        }
                        self.free_slots.push(u32::try_from(i).unwrap_or(NO_SLOT));
                    }
                }
            }
        }
        self.by_unit = by_unit;
    }

    /// Closes every unit's I/O and ends its run (at exit).
    pub fn close_all(&mut self, sys: &dyn Sys) {
        for slot in self.slots.iter_mut().flatten() {
            if let Some(run) = slot.run.take() {
                sys.end_unit(&run, false);
            }
        }
        for i in 0..self.slots.len() {
            let io = self
                .slots
                .get_mut(i)
                .and_then(Option::as_mut)
                .and_then(|s| s.io.take());
            if let Some(io) = io {
                self.close_io(*io, sys);
            }
        }
    }

    /// Unwatches and closes a socket unit's sockets, removing their files
    /// with `RemoveOnStop=`.
    pub fn close_listening(&mut self, l: super::held::Listening, sys: &dyn Sys) {
        for (fd, t) in l.fds {
            let _ = sys.unwatch(fd.as_raw_fd());
            self.free_token(t);
        }
        for p in &l.remove {
            let _ = sys.remove_file(p);
        }
    }

    /// Closes a path unit's inotify instance.
    pub fn close_watching(&mut self, w: super::held::Watching, sys: &dyn Sys) {
        let t = w.close(sys);
        self.free_token(t);
    }

    /// Unwatches and closes a unit's stored descriptors.
    pub fn close_store(&mut self, mut store: super::held::Store, sys: &dyn Sys) {
        for e in store.take_all() {
            if let Some(t) = e.item.token {
                let _ = sys.unwatch(e.item.fd.as_raw_fd());
                self.free_token(t);
            }
        }
    }

    /// Stops watching a scope's processes.
    pub fn close_adopted(&mut self, a: super::held::Adopted, sys: &dyn Sys) {
        for (fd, t) in a.fds {
            let _ = sys.unwatch(fd);
            self.free_token(t);
        }
    }

    /// Keeps `a` as the cgroup watch of slot `id`; returns the one it
    /// replaces.
    pub fn put_emptying(
        &mut self,
        id: SlotId,
        a: super::held::Adopted,
    ) -> Option<super::held::Adopted> {
        let old = self.take_emptying(id);
        self.emptying.push((id, a));
        old
    }

    /// The cgroup watch of slot `id`, if any.
    pub fn emptying_mut(&mut self, id: SlotId) -> Option<&mut super::held::Adopted> {
        self.emptying
            .iter_mut()
            .find(|(s, _)| *s == id)
            .map(|(_, a)| a)
    }

    /// Takes the cgroup watch of slot `id`, if any.
    pub fn take_emptying(&mut self, id: SlotId) -> Option<super::held::Adopted> {
        let i = self.emptying.iter().position(|(s, _)| *s == id)?;
        Some(self.emptying.swap_remove(i).1)
    }

    /// Every slot.
    pub fn all(&self) -> impl Iterator<Item = &Slot> {
        self.slots.iter().flatten()
    }

    fn close_io(&mut self, mut io: UnitIo, sys: &dyn Sys) {
        for (pipe, t) in io.pipes.drain(..) {
            let _ = sys.unwatch(pipe.as_raw_fd());
            self.free_token(t);
        }
        if let Some((sock, t)) = io.notify.take().map(|b| *b) {
            let _ = sys.unwatch(sock.as_raw_fd());
            sock.close(sys);
            self.free_token(t);
        }
    }
}
