//! Starting a process: the hot path of [`super::real::RealSys::spawn`].
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

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

use super::clone3::{self, NotHere};
use super::context::ChildContext;
use super::journal::JournalStream;
use super::{Credentials, Errno, Os, Pid, SpawnRequest, Stdio, SysError};

mod child;
mod flight;
mod lanes;
mod program;
mod slots;
mod stack;
mod watch;

use child::*;
pub(crate) use flight::trim_stacks;
pub use program::program_on_path;
pub(crate) use program::{resolve_program, CStrArray};
use slots::{above_stdio, dup_above_stdio, fill_slots, open_null, restore_slots, Holds, Slot};
use stack::{Stack, STACK_SIZE};
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
pub(super) fn give_back_lane(i: usize) {
    let mut spawner = SPAWNER.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = spawner.as_mut() {
        let (src, holds) = s.filler();
        s.lanes.give_back(i, src, holds);
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

pub(super) fn nul(program: &str, what: &'static str) -> SysError {
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

/// Finds `program` as `execvp(3)` would, without its fall-back to the
/// current directory: a name with a slash is used as is, a bare name is
/// searched in `path_var` (or [`DEFAULT_PATH`]). Only regular files with an
/// execute bit qualify. One `stat(2)` per candidate.
/// One spawn, prepared in the parent.
struct Exec<'a> {
    path: &'a CStr,
    argv: &'a CStrArray,
    envp: &'a CStrArray,
    cwd: Option<&'a CStr>,
    cwd_optional: bool,
    foreground: bool,
    /// stdin, stdout, stderr.
    stdio: [Stdio<'a>; 3],
    credentials: Option<&'a Credentials>,
    context: Option<&'a ChildContext>,
    /// Handed as 3, 4, ….
    listen_fds: &'a [RawFd],
    /// Room for as many descriptors, the child's to write.
    listen_copies: *mut c_int,
    /// The value of `LISTEN_PID` in `envp`, overwritten by the child.
    listen_pid: Option<(*mut u8, usize)>,
    journal: Option<&'a JournalStream>,
    /// The value of `JOURNAL_STREAM` in `envp`, written by the child.
    journal_env: (*mut u8, usize),
}

/// Whether `clone3(2)` with `CLONE_INTO_CGROUP` works here; cleared the
/// first time the kernel says it does not.
static CLONE3: AtomicBool = AtomicBool::new(true);

/// Whether a child with a cgroup is created in it (`clone3(2)` with
/// `CLONE_INTO_CGROUP`, the default where the kernel has it) or joins it
/// itself by writing `cgroup.procs`, as on kernels without it. For tests
/// and benchmarks of the second way; the init never turns it off.
pub fn set_clone_into_cgroup(on: bool) {
    CLONE3.store(on, Ordering::Relaxed);
}

/// The process's spawner: its reserved slots and the child's stack. One per
/// process, as the descriptor table is; `None` until [`reserve`] or the
/// first spawn succeeds.
static SPAWNER: Mutex<Option<Spawner>> = Mutex::new(None);

#[derive(Debug)]
struct Spawner {
    /// For stdin, stdout and stderr: each above 2, close-on-exec.
    slots: [Slot; 3],
    /// K: one more than the highest slot. The child keeps only the
    /// descriptors below it when it unshares the table.
    limit: c_uint,
    /// An `O_PATH` descriptor of `/`: what a slot holds while `/dev/null`
    /// cannot be opened (PID 1 before devtmpfs is mounted).
    placeholder: OwnedFd,
    /// `/dev/null`, read-write, once it could be opened.
    null: Option<OwnedFd>,
    /// While `/dev/null` cannot be opened: a descriptor below every lane
    /// that it takes once it can. A child in flight keeps only what lies
    /// below its lane, and its stdin, when null, is this one.
    null_place: Option<OwnedFd>,
    stack: Stack,
    /// The signals whose disposition is not `SIG_DFL` in the init (bit
    /// `n - 1` for signal `n`): the only ones a child sets back before it
    /// unblocks signals, rather than all 64 (a system call each, a
    /// quarter of the child's own work before `execve`). The init never
    /// changes a disposition once it runs: these are what it inherited and
    /// what Rust set at its start (`SIGPIPE` ignored, the stack guard's
    /// `SIGSEGV` and `SIGBUS` handlers), read when the spawner is made.
    altered: u64,
    /// For children in flight that share the table (`lanes.rs`).
    lanes: lanes::Lanes,
}

impl Spawner {
    fn new() -> Result<Spawner, Errno> {
        use nix::fcntl::OFlag;
        let root = nix::fcntl::open(
            c"/",
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )?;
        // The three lowest free descriptors from 3 up.
        let first = above_stdio(root)?;
        let second = dup_above_stdio(&first)?;
        let third = dup_above_stdio(&first)?;
        let highest = first
            .as_raw_fd()
            .max(second.as_raw_fd())
            .max(third.as_raw_fd());
        let limit = c_uint::try_from(highest).map_err(|_| Errno::EBADF)? + 1;
        let placeholder = dup_above_stdio(&first)?;
        let slot = |fd| Slot {
            fd,
            holds: Holds::Placeholder,
        };
        let null = open_null().ok();
        let null_place = match null {
            Some(_) => None,
            None => Some(dup_above_stdio(&first)?),
        };
        let lanes = match &null {
            Some(null) => lanes::Lanes::reserve(null, Holds::Null),
            None => lanes::Lanes::reserve(&placeholder, Holds::Placeholder),
        };
        let mut spawner = Spawner {
            slots: [slot(first), slot(second), slot(third)],
            limit,
            placeholder,
            null,
            null_place,
            stack: Stack::new()?,
            altered: altered_dispositions(),
            lanes,
        };
        spawner.restore();
        Ok(spawner)
    }

    /// Opens `/dev/null` if it is not open yet (PID 1 starts before
    /// devtmpfs is mounted), at the place kept for it below the lanes.
    fn open_null(&mut self) -> Result<(), Errno> {
        if self.null.is_some() {
            return Ok(());
        }
        let opened = open_null()?;
        self.null = Some(match self.null_place.take() {
            Some(place) => {
                // SAFETY: dup3(2) onto a descriptor this spawner owns; the
                // OwnedFd `place` then holds `/dev/null`.
                let r =
                    unsafe { libc::dup3(opened.as_raw_fd(), place.as_raw_fd(), libc::O_CLOEXEC) };
                if r < 0 {
                    let errno = Errno::last();
                    self.null_place = Some(place);
                    return Err(errno);
                }
                place
            }
            None => opened,
        });
        Ok(())
    }

    /// `report`: the write end of the child's report pipe (`None`: a
    /// `CLONE_VM` child that reports in the memory it shares); `forked`:
    /// the child is forked, else a `CLONE_VM` child, which writes to the
    /// pipe only once it has handed off.
    fn spawn(
        &mut self,
        exec: &Exec<'_>,
        report: Option<RawFd>,
        forked: bool,
    ) -> Result<Pid, Failure> {
        if exec.stdio.iter().any(|s| matches!(s, Stdio::Null)) {
            self.open_null()
                .map_err(|errno| Failure::Child(Step::OpenNull, errno))?;
        }
        let result = self
            .fill_slots(&exec.stdio)
            .and_then(|stdio| self.clone_exec(exec, stdio, report, forked));
        self.restore();
        result
    }

    /// Puts each stream's source into its slot; returns, for each of 0, 1,
    /// 2, the slot to `dup2` from in the child, or -1 to inherit.
    fn fill_slots(&mut self, stdio: &[Stdio<'_>; 3]) -> Result<[RawFd; 3], Failure> {
        let null = self.null.as_ref().map(AsRawFd::as_raw_fd);
        let [a, b, c] = &mut self.slots;
        fill_slots([Some(a), Some(b), Some(c)], null, stdio)
    }

    /// Gives every slot that holds a caller's descriptor (or the
    /// placeholder, once `/dev/null` is open) `/dev/null` back, so that the
    /// init keeps no reference to a child's pipe.
    fn restore(&mut self) {
        let (src, holds) = self.filler();
        restore_slots(self.slots.iter_mut(), src, holds);
    }

    /// What a free slot holds: `/dev/null`, or the placeholder until it
    /// can be opened.
    fn filler(&self) -> (RawFd, Holds) {
        match &self.null {
            Some(null) => (null.as_raw_fd(), Holds::Null),
            None => (self.placeholder.as_raw_fd(), Holds::Placeholder),
        }
    }

    /// The clone itself: see the module documentation.
    fn clone_exec(
        &self,
        exec: &Exec<'_>,
        stdio: [RawFd; 3],
        report: Option<RawFd>,
        forked: bool,
    ) -> Result<Pid, Failure> {
        let creds = exec.credentials;
        // A `CLONE_VM` child that will hand off keeps its report's write
        // end as it unshares the table: a cost in that descriptor's number
        // (the lowest free one when the pipe was made).
        let report_bound = report
            .filter(|_| !forked)
            .and_then(|fd| c_uint::try_from(fd).ok())
            .map_or(0, |fd| fd.saturating_add(1));
        let plan = Plan {
            path: exec.path.as_ptr(),
            argv: exec.argv.as_ptr(),
            envp: exec.envp.as_ptr(),
            cwd: exec.cwd.map_or(std::ptr::null(), CStr::as_ptr),
            cwd_optional: exec.cwd_optional,
            foreground: exec.foreground,
            stdio,
            limit: self.limit,
            reset: self.altered,
            // The child's table keeps what lies below this: the slots, the
            // descriptors it is handed, and its report's write end.
            keep_below: exec
                .listen_fds
                .iter()
                .filter_map(|&fd| c_uint::try_from(fd).ok())
                .map(|fd| fd.saturating_add(1))
                .fold(self.limit.max(report_bound), c_uint::max),
            listen_fds: (exec.listen_fds.as_ptr(), exec.listen_fds.len()),
            listen_copies: exec.listen_copies,
            listen_pid: exec.listen_pid.unwrap_or((std::ptr::null_mut(), 0)),
            close_range: close_range_allowed(),
            groups: creds
                .and_then(|c| c.groups.as_deref())
                .map(|g| (g.as_ptr(), g.len())),
            gid: creds.and_then(|c| c.gid),
            uid: creds.and_then(|c| c.uid),
            context: exec.context.map_or(std::ptr::null(), std::ptr::from_ref),
            journal: exec.journal.map_or(std::ptr::null(), std::ptr::from_ref),
            journal_env: exec.journal_env,
            execing: AtomicBool::new(false),
            step: AtomicU32::new(0),
            errno: AtomicI32::new(0),
            handed: AtomicI32::new(0),
            detached: AtomicBool::new(false),
            report: AtomicI32::new(report.unwrap_or(-1)),
            forked,
        };
        // Forked: a copy of the init's memory and descriptor table, and
        // the parent goes on at once. Else shared, and the parent sleeps
        // until the child has exec'd, exited or handed off.
        let flags = if forked {
            libc::SIGCHLD
        } else {
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD
        };
        let all = [u64::MAX; 2];
        let mut old = [0u64; 2];
        // SAFETY: the masks are valid for KERNEL_SIGSET_SIZE bytes. The
        // stack is ours and unused (the lock is held); `plan` outlives the
        // child's use of it: a `CLONE_VM` child's ends before clone(2)
        // returns (CLONE_VFORK: at its execve or its exit), a forked
        // child uses its own copy of the plan, of what it points to and
        // of the stack, whatever the parent does with them afterwards;
        // `child_entry` never returns and only makes async-signal-safe
        // calls.
        let arg: *mut c_void = std::ptr::addr_of!(plan).cast_mut().cast();
        // A unit with a cgroup: its child is born there (clone3.rs says
        // why), its directory opened for this spawn only; else (or when
        // that cannot be opened) the child joins it itself.
        let cgroup = exec
            .context
            .and_then(ChildContext::cgroup_dir)
            .and_then(open_dir);
        let cgroup_fd = cgroup.as_ref().map(AsRawFd::as_raw_fd);
        let (pid, errno) = unsafe {
            sigprocmask(libc::SIG_SETMASK, all.as_ptr(), old.as_mut_ptr());
            let mut born = None;
            if let (Some(ctx), Some(fd)) = (exec.context, cgroup_fd) {
                if CLONE3.load(Ordering::Relaxed) {
                    ctx.set_joined(true);
                    let size = STACK_SIZE;
                    let bottom = self.stack.top.cast::<u8>().wrapping_sub(size).cast();
                    born = match clone3::clone_into(
                        flags,
                        Some(fd),
                        None,
                        bottom,
                        size,
                        child_entry,
                        arg,
                    ) {
                        Ok(pid) => Some((pid, Errno::UnknownErrno)),
                        Err(NotHere::Failed(e)) => Some((-1, Errno::from_raw(e))),
                        Err(NotHere::Unsupported) => {
                            CLONE3.store(false, Ordering::Relaxed);
                            None
                        }
                    };
                }
                if born.is_none() {
                    ctx.set_joined(false);
                }
            }
            let (pid, errno) = born.unwrap_or_else(|| {
                let pid = libc::clone(child_entry, self.stack.top, flags, arg);
                (pid, Errno::last())
            });
            sigprocmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut());
            (pid, errno)
        };
        if pid < 0 {
            return Err(Failure::Spawn(errno));
        }
        if forked {
            return Ok(pid);
        }
        let step = plan.step.load(Ordering::Relaxed);
        if step == 0 && plan.execing.load(Ordering::Relaxed) {
            return Ok(pid);
        }
        let handed = plan.handed.load(Ordering::Relaxed);
        // The child is at `_exit` (it failed, or handed off), or was killed
        // on its way to `execve`: reap it so that the loop never sees it.
        let mut status = 0;
        loop {
            // SAFETY: waitpid(2) on our own child.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r >= 0 || Errno::last() != Errno::EINTR {
                break;
            }
        }
        if handed > 0 {
            // The process that goes on in its place is the init's child
            // too (CLONE_PARENT): the unit's.
            return Ok(handed);
        }
        if step == 0 {
            return Err(Failure::Killed(libc::WTERMSIG(status)));
        }
        let errno = Errno::from_raw(plan.errno.load(Ordering::Relaxed));
        Err(Failure::of_step(step, errno))
    }
}

/// A cgroup's directory, opened for `CLONE_INTO_CGROUP` (`None`: it
/// cannot be; the child then joins the cgroup itself).
fn open_dir(dir: &CStr) -> Option<OwnedFd> {
    // SAFETY: `dir` is a C string; the descriptor returned is ours.
    let fd = unsafe {
        libc::open(
            dir.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    // SAFETY: a descriptor open(2) just returned, owned by nothing else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The signals whose disposition is not `SIG_DFL` in this process, as a
/// mask (bit `n - 1` for signal `n`). The raw `rt_sigaction(2)`: the C
/// library's `sigaction(3)` refuses its internal signals (32, 33, …).
fn altered_dispositions() -> u64 {
    let mut altered = 0u64;
    for sig in 1..=64u32 {
        // A kernel `struct sigaction`: the handler first (0: SIG_DFL).
        let mut old = [0u64; 4];
        // SAFETY: queries only (no new action); `old` is large enough for
        // the kernel's `struct sigaction`.
        let r = unsafe {
            libc::syscall(
                libc::SYS_rt_sigaction,
                libc::c_long::from(sig),
                std::ptr::null::<u64>(),
                old.as_mut_ptr(),
                child::KERNEL_SIGSET_SIZE,
            )
        };
        if r == 0 && old[0] != 0 {
            altered |= 1 << (sig - 1);
        }
    }
    altered
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
            s.altered = altered_dispositions();
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
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
#[cfg(test)]
mod tests;
