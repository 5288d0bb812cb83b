//! Starting a process: the hot path of [`crate::sys::real::RealSys::spawn`].
//!
//! # Why not `posix_spawn(3)`
//!
//! `posix_spawn(3)` (glibc and musl: `clone(CLONE_VM | CLONE_VFORK)` then
//! `execve(2)`) and `fork(2)` both give the child a copy of the spawner's
//! whole descriptor table (`dup_fd` in the kernel: one reference taken per
//! open descriptor), which the child then closes again (`closefrom`, or
//! close-on-exec at `execve`). The init holds two output pipes per running
//! process, plus notify sockets, log files and control connections, so each
//! spawn cost O(descriptors) and launching N units O(N²). Here a spawn
//! costs the same whatever the init holds.
//!
//! # How
//!
//! One path for every request, credentials or not: with the identity
//! changed by raw system calls (below) a `CLONE_VM` child can do it safely,
//! so units with `user` or `group` no longer pay for a `fork(2)` (a copy of
//! the init's page tables, then copy-on-write faults in the init).
//! Steps 1 and 2 are the spawner's (`spawner.rs`), step 3 the child's
//! (`child.rs`).
//!
//! 1. **Reserved slots.** Once per process ([`reserve`], called by
//!    `RealSys::new`, or at the first spawn) three low descriptors are set
//!    aside, all above 2 (`F_DUPFD_CLOEXEC` from 3), so that `K`, one more
//!    than the highest, is small (6 when the init starts with only 0, 1 and
//!    2 open). Between spawns they hold `/dev/null` (or an `O_PATH`
//!    descriptor of `/` while `/dev/null` cannot be opened, as early in PID
//!    1's boot). Above them, the lanes of the children in flight
//!    (`lanes.rs`, `flight.rs`), which share the table too. The child's
//!    stack (64 KiB and a guard page, `mmap(2)`) is made at the same time.
//!    All of it lives as long as the process, behind one mutex (the init
//!    has one thread; tests have several).
//! 2. **In the parent, per spawn**: everything is prepared first (the
//!    program's path, argv and envp as C arrays, the directory); each of
//!    stdin, stdout, stderr that is not inherited is `dup3(src, slot,
//!    O_CLOEXEC)`-ed into its slot (`/dev/null` stays where it already is);
//!    every signal is blocked (raw `rt_sigprocmask`, the C library's
//!    internal ones included, as glibc's `posix_spawn` does), so that no
//!    handler of the init ever runs in the child; then `clone(CLONE_VM |
//!    CLONE_VFORK | CLONE_FILES, SIGCHLD)` on the dedicated stack: no page
//!    tables and **no descriptor table** copied, and the parent sleeps until
//!    the child has exec'd or exited. Afterwards the mask is restored and
//!    the slots get `/dev/null` back, so the parent drops its references to
//!    the pipes' write ends (or their readers would never see end of file).
//! 3. **In the child**, which still shares the init's table:
//!    `close_range(K, ~0U, CLOSE_RANGE_UNSHARE)` first. The kernel then
//!    gives the child a table of its own holding **only the descriptors
//!    below K** (fs/file.c: when the range runs to the end of the table and
//!    `CLOSE_RANGE_CLOEXEC` is not asked, only what lies below its start is
//!    copied, rounded up to a word of the table's bitmap, 64 descriptors,
//!    and what was copied from K up is closed at once): a constant cost, not
//!    O(descriptors). Then `setsid`, `setgroups`, `setresgid`, `setresuid`,
//!    `dup2` of the slots onto 0, 1 and 2 (a slot is never below 3, so
//!    `dup2` always clears close-on-exec and never overwrites a later
//!    source), `close_range(3, K - 1)`, `chdir`, every disposition the init has other
//!    than the default back to `SIG_DFL` (raw `rt_sigaction`: `execve` keeps
//!    ignored signals, and Rust ignores `SIGPIPE`; the init reads which once,
//!    as it never changes them), an empty mask, `execve`. The child exec's
//!    with exactly its stdin, stdout and stderr (and whatever of 0, 1, 2 it
//!    inherits).
//!
//! **Handed descriptors** (a socket unit's, for `LISTEN_FDS`): the child
//! unshares from just above the highest of them instead of from K (so it
//! copies what lies below: a cost in that descriptor's number, paid by
//! socket-activated services only), copies each above every target, moves
//! the copies to 3, 4, … with `dup2` (clearing close-on-exec), writes its
//! own PID over the value of `LISTEN_PID` in the `envp` the parent laid
//! out (the child of a hand-off writes its own), and closes everything
//! from the last of them up.
//!
//! The child shares the init's memory, so it makes only async-signal-safe
//! calls, allocates nothing, takes no lock, formats nothing and cannot
//! panic; identity changes are **raw system calls**, since the C library's
//! `setuid`, `setgid` and `setgroups` would signal the init's threads (a
//! `CLONE_VM` child is not one of them). A failure is written as (step,
//! errno) into the request's plan, in the memory the child shares with the
//! parent, before `_exit(127)`; `CLONE_VFORK` guarantees the child has
//! exec'd or exited when `clone` returns, so the parent reads it there,
//! reaps the failed child and returns the error
//! ([`SysError::ChildSetup`], with the step's name): the caller never sees
//! a child that failed before `execve`.
//!
//! # Requirements and fall-backs
//!
//! Linux 5.9 for `close_range(2)` with `CLOSE_RANGE_UNSHARE`. If it fails
//! (older kernel: `ENOSYS`; a seccomp filter: `EPERM`), the child unshares
//! with `unshare(CLONE_FILES)` instead: a copy of the whole table, O(fds)
//! as with `posix_spawn(3)`, after which the slots' copies are closed
//! one by one and everything else is left to close-on-exec (every
//! descriptor the init makes has it; one it inherited without it would
//! then leak into children on such kernels). Nothing else depends on the C
//! library: `clone(2)` is glibc's and musl's wrapper (both run the callback
//! on the given stack and, with `CLONE_VM`, do nothing else), every other
//! call in the child is a plain system call. x86_64 glibc and the static
//! musl build of the VM image are what is tested.
//!
//! The program is found in the parent first (`execvp(3)` semantics, minus
//! the current directory), so that a missing program is an error before
//! anything is cloned, and argv/envp are laid out in one buffer each (two
//! allocations per array, whatever its length).

use std::ffi::{c_char, c_int, c_uint, c_void, CString};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::PoisonError;

use crate::sys::clone3;
use crate::sys::context::ChildContext;
use crate::sys::journal::JournalStream;
use crate::sys::{Credentials, Errno, Os, Pid, SpawnRequest, Stdio, SysError};

mod child;
mod flight;
mod lanes;
mod program;
mod slots;
mod spawner;
mod stack;
mod watch;

use child::*;
pub(crate) use flight::trim_stacks;
pub use program::program_on_path;
pub(crate) use program::{resolve_program, CStrArray};
pub use spawner::set_clone_into_cgroup;
use spawner::{open_dir, Exec, Spawner, CLONE3, SPAWNER};
pub use watch::{ExecOutcome, ExecWatch};

/// Starts the process `req` describes; returns once it has exec'd.
pub(crate) fn spawn(req: &SpawnRequest<'_>) -> Result<Pid, SysError> {
    start(req, false).map(|(pid, _)| pid)
}

/// Starts the process `req` describes and returns at once: with an
/// [`ExecWatch`] that tells whether it exec'd, for a child that was
/// forked or handed off (its context makes directories or opens files);
/// without one for a child that needs the shared memory of a `CLONE_VM`
/// child (a journal stream), which has exec'd already. See the module
/// documentation.
pub(crate) fn spawn_started(req: &SpawnRequest<'_>) -> Result<(Pid, Option<ExecWatch>), SysError> {
    start(req, true)
}

/// `started`: return before the child's `execve`, with a watch of it.
fn start(req: &SpawnRequest<'_>, started: bool) -> Result<(Pid, Option<ExecWatch>), SysError> {
    let program = req.program();
    if program.is_empty() {
        return Err(SysError::EmptyCommand);
    }
    // A relative path with a slash is run from the child's directory (the
    // chdir comes first in the child), so look for it there.
    let path = match req.cwd {
        Some(dir) if program.contains('/') && !program.starts_with('/') => {
            let joined = dir.join(program);
            resolve_program(&joined.to_string_lossy(), None).map_err(|e| match e {
                SysError::NoProgram { reason, .. } => SysError::NoProgram {
                    program: program.to_owned(),
                    reason,
                },
                other => other,
            })?
        }
        _ => resolve_program(program, req.env.get("PATH"))?,
    };
    let words = match req.argv.split_first() {
        Some((_, rest)) if req.argv0_given && !rest.is_empty() => rest,
        _ => req.argv,
    };
    let mut argv = CStrArray::argv(words).ok_or_else(|| nul(program, "an argument"))?;
    let mut envp = CStrArray::envp(req.env);
    if req.listen_fds.len() > child::MAX_LISTEN_FDS {
        return Err(SysError::Spawn {
            program: program.to_owned(),
            errno: Os(Errno::EMFILE),
        });
    }
    set_handed_flags(req).map_err(|errno| SysError::Spawn {
        program: program.to_owned(),
        errno: Os(errno),
    })?;
    // The journal's `dev:ino`, written by the child once connected.
    let journal_env = req
        .journal
        .and_then(|_| envp.value_slot(b"JOURNAL_STREAM"))
        .unwrap_or((std::ptr::null_mut(), 0));
    let listen_pid = if req.listen_fds.is_empty() {
        None
    } else {
        envp.value_slot(b"LISTEN_PID")
    };
    let mut cwd = match req.cwd {
        Some(dir) => Some(
            CString::new(dir.as_os_str().as_bytes())
                .map_err(|_| nul(program, "the working directory"))?,
        ),
        None => None,
    };
    let mut path = path;
    if started && flight::eligible(req) {
        let owned = flight::Owned {
            path,
            argv,
            envp,
            cwd,
        };
        match flight::fly(owned, req, program) {
            Ok(started) => return started,
            Err(back) => {
                let back = *back;
                (path, argv, envp, cwd) = (back.path, back.argv, back.envp, back.cwd);
            }
        }
    }
    // Where the child copies the handed descriptors before it moves them
    // to 3, 4, …: its stack is too small for thousands (a descriptor
    // store's), so the parent lends it this (the child has exec'd or
    // exited when the spawn returns, or has its own copy when forked).
    let mut listen_copies: Vec<c_int> = vec![-1; req.listen_fds.len()];
    let exec = Exec {
        path: &path,
        argv: &argv,
        envp: &envp,
        cwd: cwd.as_deref(),
        cwd_optional: req.cwd_optional,
        foreground: req.foreground,
        stdio: [req.stdin, req.stdout, req.stderr],
        credentials: req.credentials,
        context: req.context,
        listen_fds: req.listen_fds,
        listen_copies: listen_copies.as_mut_ptr(),
        listen_pid,
        journal: req.journal,
        journal_env,
    };
    // The journal's `connected` and a hand-off's PID come back through
    // the memory a `CLONE_VM` child shares: those children are not forked.
    let detaches = req.context.is_some_and(ChildContext::detaches);
    let forked = started && req.journal.is_none() && !detaches;
    // A handed-off child reports through a pipe as a forked one does: the
    // spawn returns once it is handed off, before it has made the unit's
    // directories and exec'd, and its start (a `Type=exec` unit's done)
    // is told only when the pipe says it exec'd.
    let report = if forked || (started && detaches) {
        let (read, write) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK)
                .map_err(|errno| SysError::Spawn {
                    program: program.to_owned(),
                    errno: Os(errno),
                })?;
        Some((read, write))
    } else {
        None
    };
    let mut spawner = SPAWNER.lock().unwrap_or_else(PoisonError::into_inner);
    if spawner.is_none() {
        *spawner = Some(Spawner::new().map_err(|errno| SysError::Spawn {
            program: program.to_owned(),
            errno: Os(errno),
        })?);
    }
    let write = report.as_ref().map(|(_, w)| w.as_raw_fd());
    let pid = match spawner.as_mut() {
        Some(s) => s.spawn(&exec, write, forked),
        // Set just above.
        None => Err(Failure::Spawn(Errno::EAGAIN)),
    }
    .map_err(|failure| failure.into_error(program, req.cwd, req.context))?;
    drop(spawner);
    // The write end is the child's alone now (the handed-off process's,
    // whose PID `pid` is): end of file comes at its `execve` or its exit.
    Ok((
        pid,
        report.map(|(read, _)| ExecWatch::new(read, pid, program, req.cwd)),
    ))
}

/// Sets the slots and the child's stack aside now, if not done yet, while
/// the process holds few descriptors: `RealSys::new` calls it. Failure is
/// left for the first spawn to retry and report. Never waits: in a panic
/// hook the lock may be held by the code that panicked.
pub(crate) fn reserve() {
    if let Ok(mut spawner) = SPAWNER.try_lock() {
        if spawner.is_none() {
            *spawner = Spawner::new().ok();
        }
    }
}

/// Gives lane `i` back to the spawner (`lanes.rs`): its child has
/// unshared the table, or ended.
pub(in crate::sys) fn give_back_lane(i: usize) {
    let mut spawner = SPAWNER.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = spawner.as_mut() {
        s.lanes.give_back(i, s.placeholder.as_raw_fd());
    }
}

/// systemd's `flags_fds()`: the sockets handed as 3, 4, … get
/// `O_NONBLOCK` as `NonBlocking=` says (off by default), and a socket put
/// on a standard stream alone (`StandardInput=socket`) loses it. A daemon
/// written for systemd calls a plain `accept()` on its descriptor and
/// expects it to wait. The flag belongs to the open socket, which the
/// init shares with the child: set here, before the child exists, it is
/// what the child gets. The init only waits for those sockets to be
/// readable (an `Accept=yes` socket's listener is never handed).
fn set_handed_flags(req: &SpawnRequest<'_>) -> Result<(), Errno> {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    let stdio = [req.stdin, req.stdout, req.stderr]
        .into_iter()
        .filter_map(|s| match s {
            Stdio::Socket(fd) if !req.listen_fds.contains(&fd) => Some((fd, false)),
            _ => None,
        });
    let handed = req
        .listen_fds
        .iter()
        .take(req.listen_sockets)
        .map(|&fd| (fd, req.listen_nonblocking));
    for (fd, on) in handed.chain(stdio) {
        // SAFETY: a descriptor the request borrows for the spawn.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let flags = OFlag::from_bits_retain(fcntl(fd, FcntlArg::F_GETFL)?);
        let want = if on {
            flags | OFlag::O_NONBLOCK
        } else {
            flags - OFlag::O_NONBLOCK
        };
        if want != flags {
            fcntl(fd, FcntlArg::F_SETFL(want))?;
        }
    }
    Ok(())
}

pub(in crate::sys) fn nul(program: &str, what: &'static str) -> SysError {
    SysError::Nul {
        program: program.to_owned(),
        what,
    }
}

/// A failure, before the program's name is attached.
#[derive(Debug)]
enum Failure {
    /// In the parent: `clone(2)` itself, or the spawner could not be set up.
    Spawn(Errno),
    /// A step (in the child, or `/dev/null` in the parent).
    Child(Step, Errno),
    /// Step `n` of the request's context, in the child.
    Context(usize, Errno),
    /// The child was killed by this signal before `execve`.
    Killed(i32),
}

impl Failure {
    /// A step's failure as the child reports it: its code (from
    /// [`CONTEXT_STEPS`] up, a step of the context) and errno.
    fn of_step(step: u32, errno: Errno) -> Failure {
        match step.checked_sub(CONTEXT_STEPS) {
            Some(n) => Failure::Context(n as usize, errno),
            None => Failure::Child(Step::from_u32(step), errno),
        }
    }

    fn into_error(
        self,
        program: &str,
        cwd: Option<&Path>,
        context: Option<&ChildContext>,
    ) -> SysError {
        let program = program.to_owned();
        match self {
            Failure::Spawn(errno) => SysError::Spawn {
                program,
                errno: Os(errno),
            },
            Failure::Child(step, errno) => {
                let name = match (step, cwd) {
                    (Step::Chdir, Some(dir)) => format!("chdir {}", dir.display()),
                    _ => step.name().to_owned(),
                };
                SysError::ChildSetup {
                    program,
                    step: name,
                    errno: Os(errno),
                    status: step.exit_status(),
                }
            }
            Failure::Killed(signal) => SysError::ChildKilled {
                program,
                // The signals a setup step can die of that the unit-file
                // names do not list.
                signal: match signal {
                    libc::SIGSYS => "SIGSYS".to_string(),
                    libc::SIGXCPU => "SIGXCPU".to_string(),
                    libc::SIGXFSZ => "SIGXFSZ".to_string(),
                    s => flotilla_units::spec::Signal(s).name(),
                },
            },
            Failure::Context(n, errno) => SysError::ChildSetup {
                program,
                step: context.map_or_else(|| format!("context step {n}"), |c| c.step_name(n)),
                errno: Os(errno),
                status: context.map_or(127, |c| c.exit_status(n)),
            },
        }
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
pub(crate) mod tests_support {
    use std::sync::atomic::AtomicBool;

    use super::*;

    /// Set: the child unshares its table with `unshare(CLONE_FILES)`, as
    /// on a kernel without `close_range(2)`. Only under the tests' process
    /// lock.
    pub(crate) static WITHOUT_CLOSE_RANGE: AtomicBool = AtomicBool::new(false);

    /// Reads the process's dispositions again (`Spawner::altered`), for a
    /// test that changes them: the init never does once it runs.
    pub(crate) fn recount_dispositions() {
        reserve();
        if let Some(s) = SPAWNER
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            s.altered = spawner::altered_dispositions();
        }
    }

    /// The reserved slots (reserving them now if needed) and K.
    pub(crate) fn slots() -> ([RawFd; 3], RawFd) {
        reserve();
        let guard = SPAWNER.lock().unwrap_or_else(PoisonError::into_inner);
        let s = guard.as_ref().expect("no spawner");
        let [a, b, c] = &s.slots;
        (
            [a.fd.as_raw_fd(), b.fd.as_raw_fd(), c.fd.as_raw_fd()],
            s.limit as RawFd,
        )
    }

    /// The descriptors of every lane, free or not (`lanes.rs`).
    pub(crate) fn lanes() -> Vec<RawFd> {
        reserve();
        let guard = SPAWNER.lock().unwrap_or_else(PoisonError::into_inner);
        guard.as_ref().expect("no spawner").lanes.fds()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests;
