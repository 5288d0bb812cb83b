//! What the init waits for: the signals it handles and the readiness of the
//! descriptors it watches, as one stream of [`Event`]s from
//! [`crate::sys::Sys::wait`].
//!
//! On the kernel ([`EventQueue`]) that is one `epoll(7)` instance with a
//! `signalfd(2)` in it: the handled signals are blocked and read from the
//! signalfd, so a signal is an event like any other and nothing runs in a
//! signal handler. The queue is per process, as the signal mask is: PID 1's
//! loop, its emergency mode and its final sequence all wait on it.
//! Descriptors are watched edge-triggered: whoever is woken reads until
//! `EAGAIN`.

use std::os::fd::{AsFd, BorrowedFd, RawFd};
use std::sync::OnceLock;
use std::time::Duration;

use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

use crate::sys::{Errno, Os, SysError};

/// The signals the init takes as events (blocked, read from a signalfd):
/// children, the shutdown and reload requests, and the ones it ignores on
/// purpose (`SIGQUIT`, `SIGUSR1`, `SIGUSR2`, `SIGPIPE`), which must not
/// kill PID 1 with their default action. systemd's real-time signals are
/// taken too (`signals.rs`).
pub const HANDLED_SIGNALS: [Signal; 9] = [
    Signal::SIGCHLD,
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
    Signal::SIGPWR,
    Signal::SIGPIPE,
];

/// The handled signals as a set to block and read: [`HANDLED_SIGNALS`]
/// and systemd's real-time ones ([`SYSTEMD_SIGNALS`](super::signals::SYSTEMD_SIGNALS)),
/// which nix's `Signal` cannot name.
fn handled_set() -> SigSet {
    let mut set = SigSet::empty();
    for s in HANDLED_SIGNALS {
        set.add(s);
    }
    let mut raw: libc::sigset_t = *set.as_ref();
    for (signo, _) in super::signals::SYSTEMD_SIGNALS {
        // SAFETY: `raw` is an initialised set and `signo` a real-time
        // signal's number below `_NSIG` (a failure leaves it out).
        unsafe { libc::sigaddset(&mut raw, signo) };
    }
    // SAFETY: made from a valid set by `sigaddset`.
    unsafe { SigSet::from_sigset_t_unchecked(raw) }
}

/// Names a watched descriptor in the events: the caller's choice of number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(pub usize);

/// What a watched descriptor is watched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Interest {
    /// Data to read, or the other end closed.
    Read,
    /// That, or room to write (a connection with output pending).
    ReadWrite,
    /// Only a hang-up or an error (`EPOLLHUP`, `EPOLLERR`, which epoll
    /// reports whatever is asked): a stored descriptor whose peer closed
    /// (`runtime/fdstore.rs`).
    Hangup,
}

/// One thing [`crate::sys::Sys::wait`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// A handled signal arrived (signals of one kind coalesce: one
    /// `SIGCHLD` may stand for many children).
    Signal(i32),
    /// The descriptor watched under this token may be read (or written):
    /// read it until `EAGAIN`.
    Ready(Token),
}

/// epoll's data word for the signalfd: a token no watcher uses.
const SIGNAL_DATA: u64 = u64::MAX;

/// The process's event queue: an epoll instance and the signalfd of
/// [`HANDLED_SIGNALS`]. See the module documentation.
#[derive(Debug)]
pub struct EventQueue {
    epoll: Epoll,
    signals: SignalFd,
}

static QUEUE: OnceLock<EventQueue> = OnceLock::new();

fn call_error(call: &str, errno: Errno) -> SysError {
    SysError::Call {
        call: call.to_owned(),
        errno: Os(errno),
    }
}

/// The epoll flags of an interest: edge-triggered, hang-ups included.
pub(crate) fn epoll_flags(interest: Interest) -> EpollFlags {
    match interest {
        Interest::Read => EpollFlags::EPOLLIN | EpollFlags::EPOLLRDHUP | EpollFlags::EPOLLET,
        Interest::ReadWrite => {
            EpollFlags::EPOLLIN
                | EpollFlags::EPOLLOUT
                | EpollFlags::EPOLLRDHUP
                | EpollFlags::EPOLLET
        }
        Interest::Hangup => EpollFlags::EPOLLET,
    }
}

/// A timeout in whole milliseconds, rounded up: a deadline is never missed
/// by a fraction, which would wake the loop early for nothing.
pub fn millis_rounded_up(d: Duration) -> u64 {
    let ms = d.as_nanos().div_ceil(1_000_000);
    u64::try_from(ms).unwrap_or(u64::MAX)
}

impl EventQueue {
    /// The process's queue, made at the first call: blocks the handled
    /// signals (in the calling thread, the init's only one) and creates
    /// the signalfd and the epoll instance.
    pub fn get() -> Result<&'static EventQueue, SysError> {
        if let Some(q) = QUEUE.get() {
            return Ok(q);
        }
        let set = handled_set();
        set.thread_block()
            .map_err(|e| call_error("sigprocmask(SIG_BLOCK)", e))?;
        let signals = SignalFd::with_flags(&set, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
            .map_err(|e| call_error("signalfd", e))?;
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)
            .map_err(|e| call_error("epoll_create1", e))?;
        epoll
            .add(
                signals.as_fd(),
                EpollEvent::new(EpollFlags::EPOLLIN, SIGNAL_DATA),
            )
            .map_err(|e| call_error("epoll_ctl(ADD signalfd)", e))?;
        // Another thread cannot have raced us (the init has one), and a
        // test process that did keeps the first queue; ours is dropped.
        let _ = QUEUE.set(EventQueue { epoll, signals });
        QUEUE
            .get()
            .ok_or_else(|| call_error("event queue", Errno::EAGAIN))
    }

    /// Waits for events, at most `timeout` (`None`: until one comes), and
    /// appends them to `out`. An interrupted wait returns no event.
    pub fn wait(&self, out: &mut Vec<Event>, timeout: Option<Duration>) -> Result<(), SysError> {
        let timeout = match timeout {
            None => EpollTimeout::NONE,
            Some(d) => EpollTimeout::try_from(millis_rounded_up(d)).unwrap_or(EpollTimeout::MAX),
        };
        let mut ready = [EpollEvent::empty(); 256];
        let n = match self.epoll.wait(&mut ready, timeout) {
            Ok(n) => n,
            Err(Errno::EINTR) => 0,
            Err(e) => return Err(call_error("epoll_wait", e)),
        };
        for ev in ready.iter().take(n) {
            if ev.data() == SIGNAL_DATA {
                self.read_signals(out);
            } else {
                out.push(Event::Ready(Token(
                    usize::try_from(ev.data()).unwrap_or(usize::MAX),
                )));
            }
        }
        Ok(())
    }

    /// Everything the signalfd holds.
    fn read_signals(&self, out: &mut Vec<Event>) {
        // Bounded: each read takes one pending signal, and there are at
        // most as many kinds pending as handled.
        for _ in 0..64 {
            match self.signals.read_signal() {
                Ok(Some(info)) => {
                    out.push(Event::Signal(i32::try_from(info.ssi_signo).unwrap_or(0)));
                }
                Ok(None) => break,
                Err(Errno::EINTR) => continue,
                Err(_) => break,
            }
        }
    }

    /// Starts watching `fd`.
    pub fn watch(&self, fd: RawFd, token: Token, interest: Interest) -> Result<(), SysError> {
        let ev = EpollEvent::new(epoll_flags(interest), token.0 as u64);
        self.epoll
            .add(borrow(fd), ev)
            .map_err(|e| call_error("epoll_ctl(ADD)", e))
    }

    /// Changes what `fd` is watched for.
    pub fn rewatch(&self, fd: RawFd, token: Token, interest: Interest) -> Result<(), SysError> {
        let mut ev = EpollEvent::new(epoll_flags(interest), token.0 as u64);
        self.epoll
            .modify(borrow(fd), &mut ev)
            .map_err(|e| call_error("epoll_ctl(MOD)", e))
    }

    /// Stops watching `fd`.
    pub fn unwatch(&self, fd: RawFd) -> Result<(), SysError> {
        self.epoll
            .delete(borrow(fd))
            .map_err(|e| call_error("epoll_ctl(DEL)", e))
    }
}

/// `fd` as a borrowed descriptor for one `epoll_ctl(2)`. The caller owns
/// it and keeps it open for the call; epoll itself keeps no reference.
fn borrow<'a>(fd: RawFd) -> BorrowedFd<'a> {
    // SAFETY: the descriptor is open for the duration of the call (the
    // callers pass the raw number of a descriptor they own).
    unsafe { BorrowedFd::borrow_raw(fd) }
}
