//! The parent's side of a forked child's report pipe: whether the child
//! exec'd, learnt after the spawn has returned.
//!
//! The child holds the pipe's write end, close-on-exec, from its `clone`
//! to its `execve`; the parent holds the read end, non-blocking, which the
//! loop watches, and, for a child in flight that shares the table through
//! a lane (`lanes.rs`), a copy of the write end in the lane until the
//! child's first message or its end (the watch gives the lane back then).
//! The child writes at most two messages of nine
//! bytes, a kind and eight bytes: `E` and the steps skipped as denied
//! (a bit each, `Scratch::denied`) right before `execve`; `F`, a step's
//! code and the errno when a step (or `execve` itself) failed, before
//! `_exit(127)`. The report ends at end of file, or, for a child in
//! flight, once its word says it has left the init's memory
//! (`flight.rs`): whichever comes first, since another child that copied
//! the table may hold a copy of the write end for a moment. `E` alone
//! means it exec'd; an `F` that a step failed; nothing that the child
//! died before `execve` (a signal, or it could not keep the pipe: its
//! exit status is the errno).

use std::ffi::c_int;
use std::ops::Deref;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

use super::child::Step;
use super::flight::Flight;
use super::Failure;
use crate::sys::context::ChildContext;
use crate::sys::{Errno, ExitStatus, Pid, SysError};

/// Room for both messages.
const ROOM: usize = 32;

/// A forked child that may not have exec'd yet, and its report so far.
#[derive(Debug)]
pub struct ExecWatch {
    fd: OwnedFd,
    pid: Pid,
    got: [u8; ROOM],
    len: usize,
    /// For the error, as a synchronous spawn names it.
    program: String,
    cwd: Option<PathBuf>,
    /// The memory of a child in flight (`flight.rs`), kept until the
    /// report has ended.
    flight: Option<Box<Flight>>,
    /// The report has ended (end of file, or a read error).
    ended: bool,
    /// The lane a child in flight shares the table through (`lanes.rs`),
    /// held until the child has unshared it: until its first message, or
    /// its end.
    lane: Option<usize>,
}

/// What a report says.
#[derive(Debug)]
pub enum ExecOutcome {
    /// Not ended yet: watch the descriptor again.
    Pending,
    /// The child exec'd; these steps of its context were skipped as
    /// denied (a bit each, for `ChildContext::add_denied`).
    Execed {
        /// The bits.
        denied: u64,
    },
    /// The child failed before its program ran, and has been reaped; the
    /// same error a synchronous spawn returns.
    Failed(SysError),
}

impl ExecWatch {
    pub(super) fn new(fd: OwnedFd, pid: Pid, program: &str, cwd: Option<&Path>) -> ExecWatch {
        ExecWatch {
            fd,
            pid,
            got: [0; ROOM],
            len: 0,
            program: program.to_owned(),
            cwd: cwd.map(Path::to_path_buf),
            flight: None,
            ended: false,
            lane: None,
        }
    }

    /// Holds `lane` until the child's first message.
    pub(super) fn in_lane(mut self, lane: Option<usize>) -> ExecWatch {
        self.lane = lane;
        self
    }

    /// Gives the lane back: the child no longer shares the table (it has
    /// written, and it writes only once its table is its own) or has
    /// ended. The lane's slot was the last write end the init held, so end
    /// of file comes with the child's `execve` or exit.
    fn release_lane(&mut self) {
        if let Some(i) = self.lane.take() {
            super::give_back_lane(i);
        }
    }

    /// Keeps `flight` until the report has ended.
    pub(super) fn flying(mut self, flight: Box<Flight>) -> ExecWatch {
        self.flight = Some(flight);
        self
    }

    /// The read end, for the loop to watch.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The child.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Reads what the child has written. `exited`: the child has been
    /// reaped with this status (its write end is closed, so the report is
    /// whole). `context`: gives the request's, to name a failed step of
    /// it; asked only then (a unit's context may be made for the asking,
    /// `unitrun.rs`).
    pub fn read<C: Deref<Target = ChildContext>>(
        &mut self,
        exited: Option<&ExitStatus>,
        context: impl FnOnce() -> Option<C>,
    ) -> ExecOutcome {
        if exited.is_some() {
            self.release_lane();
        }
        if !self.drain() && exited.is_none() {
            return ExecOutcome::Pending;
        }
        self.outcome(exited, context)
    }

    /// Reads what the child has written, after a process of its unit has
    /// written output or a notify message, which nothing does before its
    /// `execve`. A child in flight is judged by its word (the writer may
    /// be another process of the unit). A forked child whose report says
    /// `E` and no `F` has exec'd even before end of file (held back while
    /// another child still holds a copy of the write end): an `F` follows
    /// an `E` only when `execve` fails, and then the child wrote nothing.
    pub fn read_after_output<C: Deref<Target = ChildContext>>(
        &mut self,
        context: impl FnOnce() -> Option<C>,
    ) -> ExecOutcome {
        if !self.drain() && (self.flight.is_some() || !self.said(b'E') || self.said(b'F')) {
            return ExecOutcome::Pending;
        }
        self.outcome(None, context)
    }

    /// Whether a message of `kind` has been read.
    fn said(&self, kind: u8) -> bool {
        self.messages().any(|(k, _)| k == kind)
    }

    /// The whole messages read so far: each a kind and its eight bytes.
    fn messages(&self) -> impl Iterator<Item = (u8, [u8; 8])> + '_ {
        self.got
            .get(..self.len)
            .unwrap_or_default()
            .chunks_exact(9)
            .filter_map(|m| Some((*m.first()?, <[u8; 8]>::try_from(m.get(1..)?).ok()?)))
    }

    /// Waits until the report has ended (for a re-exec, which must not
    /// leave a child of unknown fate behind).
    pub fn wait<C: Deref<Target = ChildContext>>(
        &mut self,
        context: impl FnOnce() -> Option<C>,
    ) -> ExecOutcome {
        self.wait_end();
        self.outcome(None, context)
    }

    /// Reads until the report has ended. A child in flight is waited for
    /// on its word (`Flight::wait_landed`): a copy of its write end in
    /// another child, or in its lane, would hold end of file back.
    fn wait_end(&mut self) {
        while !self.drain() {
            match &self.flight {
                Some(flight) => flight.wait_landed(),
                None => {
                    let mut pfd = libc::pollfd {
                        fd: self.fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one pollfd. A failure other than EINTR is
                    // left for the next read to report as the end.
                    unsafe { libc::poll(&mut pfd, 1, -1) };
                }
            }
        }
    }

    /// Reads until the pipe is empty; whether the report has ended (end of
    /// file, or a read error, which no more data will follow).
    fn drain(&mut self) -> bool {
        if self.ended {
            return true;
        }
        // Read before the pipe: once a child in flight has landed, all it
        // wrote is in the pipe, whoever still holds a copy of the write end.
        let landed = self.flight.as_ref().is_some_and(|f| f.landed());
        let mut spill = [0u8; ROOM];
        let fd = self.fd.as_raw_fd();
        loop {
            let room = match self.got.get_mut(self.len..) {
                Some(rest) if !rest.is_empty() => rest,
                // More than the child writes: read and dropped.
                _ => &mut spill[..],
            };
            // SAFETY: read(2) into a buffer of `room.len()` bytes.
            let n = unsafe { libc::read(fd, room.as_mut_ptr().cast(), room.len()) };
            match n {
                0 => return self.end(),
                n if n > 0 => {
                    self.release_lane();
                    if self.len < ROOM {
                        self.len = (self.len + n as usize).min(ROOM);
                    }
                }
                _ => match Errno::last() {
                    Errno::EINTR => {}
                    Errno::EAGAIN if landed => return self.end(),
                    Errno::EAGAIN => return false,
                    _ => {
                        self.ended = true;
                        return true;
                    }
                },
            }
        }
    }

    /// The report has ended: nothing more will come, and the child no
    /// longer shares the table. Returns `true`, for `drain`.
    fn end(&mut self) -> bool {
        self.ended = true;
        self.release_lane();
        true
    }

    /// The ended report's meaning.
    fn outcome<C: Deref<Target = ChildContext>>(
        &self,
        exited: Option<&ExitStatus>,
        context: impl FnOnce() -> Option<C>,
    ) -> ExecOutcome {
        let mut denied = None;
        let mut failure = None;
        for (kind, body) in self.messages() {
            let [a, b, c, d, e, f, g, h] = body;
            match kind {
                b'E' => denied = Some(u64::from_le_bytes(body)),
                b'F' => {
                    let step = u32::from_le_bytes([a, b, c, d]);
                    let errno = Errno::from_raw(c_int::from_le_bytes([e, f, g, h]));
                    failure = Some(Failure::of_step(step, errno));
                }
                _ => break,
            }
        }
        let failure = match (failure, denied) {
            (Some(f), _) => {
                if exited.is_none() {
                    self.reap();
                }
                f
            }
            (None, Some(denied)) => return ExecOutcome::Execed { denied },
            (None, None) => match exited.copied().or_else(|| self.reap()) {
                Some(ExitStatus::Signaled { signal, .. }) => Failure::Killed(signal),
                Some(ExitStatus::Exited(code)) => {
                    Failure::Child(Step::Report, Errno::from_raw(code))
                }
                None => Failure::Child(Step::Report, Errno::ECHILD),
            },
        };
        let context = context();
        ExecOutcome::Failed(failure.into_error(
            &self.program,
            self.cwd.as_deref(),
            context.as_deref(),
        ))
    }

    /// Reaps the child, which has ended its report by failing: it is at
    /// `_exit`, so this waits no longer than it takes to get there. The
    /// loop never sees it.
    fn reap(&self) -> Option<ExitStatus> {
        let mut status = 0;
        loop {
            // SAFETY: waitpid(2) on our own child.
            let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if r >= 0 {
                return ExitStatus::from_raw(status);
            }
            if Errno::last() != Errno::EINTR {
                return None;
            }
        }
    }
}

impl Drop for ExecWatch {
    /// A child in flight may still be using its flight's memory until its
    /// report has ended: wait for that before the memory goes (at most
    /// until the child's `execve` or exit).
    fn drop(&mut self) {
        if self.flight.is_some() && !self.ended {
            self.wait_end();
        }
        self.release_lane();
    }
}
