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
//!    1's boot). The child's stack (64 KiB and a guard page, `mmap(2)`) is
//!    made at the same time. All of it lives as long as the process, behind
//!    one mutex (the init has one thread; tests have several).
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
//!    source), `close_range(3, K - 1)`, `chdir`, every disposition back to
//!    `SIG_DFL` (raw `rt_sigaction`: `execve` keeps ignored signals, and
//!    Rust ignores `SIGPIPE`), an empty mask, `execve`. The child exec's
//!    with exactly its stdin, stdout and stderr (and whatever of 0, 1, 2 it
//!    inherits).
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

use nix::sys::stat::{stat, SFlag};

use super::clone3::{self, NotHere};
use super::context::ChildContext;
use super::env::DEFAULT_PATH;
use super::{Credentials, Env, Errno, Os, Pid, SpawnRequest, Stdio, SysError};

/// Starts the process `req` describes.
pub(crate) fn spawn(req: &SpawnRequest<'_>) -> Result<Pid, SysError> {
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
    let argv = CStrArray::argv(words).ok_or_else(|| nul(program, "an argument"))?;
    let envp = CStrArray::envp(req.env);
    let cwd = match req.cwd {
        Some(dir) => Some(
            CString::new(dir.as_os_str().as_bytes())
                .map_err(|_| nul(program, "the working directory"))?,
        ),
        None => None,
    };
    let exec = Exec {
        path: &path,
        argv: &argv,
        envp: &envp,
        cwd: cwd.as_deref(),
        stdio: [req.stdin, req.stdout, req.stderr],
        credentials: req.credentials,
        context: req.context,
    };
    let mut spawner = SPAWNER.lock().unwrap_or_else(PoisonError::into_inner);
    if spawner.is_none() {
        *spawner = Some(Spawner::new().map_err(|errno| SysError::Spawn {
            program: program.to_owned(),
            errno: Os(errno),
        })?);
    }
    match spawner.as_mut() {
        Some(s) => s.spawn(&exec),
        // Set just above.
        None => Err(Failure::Spawn(Errno::EAGAIN)),
    }
    .map_err(|failure| failure.into_error(program, req.cwd, req.context))
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

fn nul(program: &str, what: &'static str) -> SysError {
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
                let step = match (step, cwd) {
                    (Step::Chdir, Some(dir)) => format!("chdir {}", dir.display()),
                    _ => step.name().to_owned(),
                };
                SysError::ChildSetup {
                    program,
                    step,
                    errno: Os(errno),
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
            },
        }
    }
}

/// Finds `program` as `execvp(3)` would, without its fall-back to the
/// current directory: a name with a slash is used as is, a bare name is
/// searched in `path_var` (or [`DEFAULT_PATH`]). Only regular files with an
/// execute bit qualify. One `stat(2)` per candidate.
pub(crate) fn resolve_program(program: &str, path_var: Option<&[u8]>) -> Result<CString, SysError> {
    let no = |reason: &str| SysError::NoProgram {
        program: program.to_owned(),
        reason: reason.to_owned(),
    };
    if program.as_bytes().contains(&0) {
        return Err(nul(program, "the program name"));
    }
    let mut buf = Vec::with_capacity(program.len() + 64);
    if program.contains('/') {
        buf.extend_from_slice(program.as_bytes());
        buf.push(0);
        return match check_executable(&buf) {
            Ok(()) => Ok(into_cstring(buf)),
            Err(Errno::ENOENT | Errno::ENOTDIR) => Err(no("no such file")),
            Err(Errno::EISDIR) => Err(no("is a directory")),
            Err(Errno::ENOEXEC) => Err(no("not a regular file")),
            Err(Errno::EACCES) => Err(no("permission denied")),
            Err(errno) => Err(no(&Os(errno).to_string())),
        };
    }
    let mut denied = false;
    let path_var = path_var.unwrap_or(DEFAULT_PATH.as_bytes());
    for dir in path_var.split(|&c| c == b':').filter(|d| !d.is_empty()) {
        buf.clear();
        buf.extend_from_slice(dir);
        if !dir.ends_with(b"/") {
            buf.push(b'/');
        }
        buf.extend_from_slice(program.as_bytes());
        buf.push(0);
        match check_executable(&buf) {
            Ok(()) => return Ok(into_cstring(buf)),
            Err(Errno::EACCES) => denied = true,
            Err(_) => {}
        }
    }
    Err(no(if denied {
        "permission denied"
    } else {
        "not found in PATH"
    }))
}

/// `buf` is a path with its trailing NUL.
fn check_executable(buf: &[u8]) -> Result<(), Errno> {
    let path = CStr::from_bytes_with_nul(buf).map_err(|_| Errno::EINVAL)?;
    let st = stat(path)?;
    let kind = SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits());
    if kind == SFlag::S_IFDIR {
        Err(Errno::EISDIR)
    } else if kind != SFlag::S_IFREG {
        Err(Errno::ENOEXEC)
    } else if st.st_mode & 0o111 == 0 {
        Err(Errno::EACCES)
    } else {
        Ok(())
    }
}

/// `buf` ends with its only NUL (checked by the caller).
fn into_cstring(mut buf: Vec<u8>) -> CString {
    buf.pop();
    // No interior NUL: the program and the PATH entry were checked or split
    // on NUL-free input; the fallback is never taken.
    CString::new(buf).unwrap_or_default()
}

/// A NULL-terminated array of C strings laid out in one buffer, as
/// `execve(2)` takes `argv` and `envp`.
pub(crate) struct CStrArray {
    /// The strings, each followed by NUL. Never touched after `ptrs` is
    /// built, so the pointers into it stay valid.
    _buf: Vec<u8>,
    ptrs: Vec<*mut c_char>,
}

impl CStrArray {
    /// `argv`; `None` if an argument holds a NUL byte.
    pub(crate) fn argv(args: &[String]) -> Option<CStrArray> {
        if args.iter().any(|a| a.as_bytes().contains(&0)) {
            return None;
        }
        let total = args.iter().map(|a| a.len() + 1).sum();
        let mut buf = Vec::with_capacity(total);
        for a in args {
            buf.extend_from_slice(a.as_bytes());
            buf.push(0);
        }
        Some(CStrArray::index(
            buf,
            args.iter().map(|a| a.len() + 1),
            args.len(),
        ))
    }

    /// `envp`: `KEY=VALUE` for each variable ([`Env`] refuses NUL bytes).
    pub(crate) fn envp(env: &Env) -> CStrArray {
        let total = env.iter().map(|(k, v)| k.len() + v.len() + 2).sum();
        let mut buf = Vec::with_capacity(total);
        for (k, v) in env.iter() {
            buf.extend_from_slice(k);
            buf.push(b'=');
            buf.extend_from_slice(v);
            buf.push(0);
        }
        CStrArray::index(
            buf,
            env.iter().map(|(k, v)| k.len() + v.len() + 2),
            env.len(),
        )
    }

    fn index(buf: Vec<u8>, lens: impl Iterator<Item = usize>, n: usize) -> CStrArray {
        let mut ptrs = Vec::with_capacity(n + 1);
        let base = buf.as_ptr();
        let mut off = 0;
        for len in lens {
            ptrs.push(base.wrapping_add(off).cast::<c_char>().cast_mut());
            off += len;
        }
        ptrs.push(std::ptr::null_mut());
        CStrArray { _buf: buf, ptrs }
    }

    pub(crate) fn as_ptr(&self) -> *const *mut c_char {
        self.ptrs.as_ptr()
    }
}

/// One spawn, prepared in the parent.
struct Exec<'a> {
    path: &'a CStr,
    argv: &'a CStrArray,
    envp: &'a CStrArray,
    cwd: Option<&'a CStr>,
    /// stdin, stdout, stderr.
    stdio: [Stdio<'a>; 3],
    credentials: Option<&'a Credentials>,
    context: Option<&'a ChildContext>,
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

/// What a reserved slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// The `O_PATH` descriptor of `/` (no `/dev/null` yet).
    Placeholder,
    /// `/dev/null`.
    Null,
    /// A descriptor of the caller's, during a spawn.
    Handed,
}

#[derive(Debug)]
struct Slot {
    fd: OwnedFd,
    holds: Holds,
}

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
    stack: Stack,
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
        let mut spawner = Spawner {
            slots: [slot(first), slot(second), slot(third)],
            limit,
            placeholder,
            null: open_null().ok(),
            stack: Stack::new()?,
        };
        spawner.restore();
        Ok(spawner)
    }

    fn spawn(&mut self, exec: &Exec<'_>) -> Result<Pid, Failure> {
        if self.null.is_none() && exec.stdio.iter().any(|s| matches!(s, Stdio::Null)) {
            self.null = Some(open_null().map_err(|errno| Failure::Child(Step::OpenNull, errno))?);
        }
        let result = self
            .fill_slots(&exec.stdio)
            .and_then(|stdio| self.clone_exec(exec, stdio));
        self.restore();
        result
    }

    /// Puts each stream's source into its slot; returns, for each of 0, 1,
    /// 2, the slot to `dup2` from in the child, or -1 to inherit.
    fn fill_slots(&mut self, stdio: &[Stdio<'_>; 3]) -> Result<[RawFd; 3], Failure> {
        let null = self.null.as_ref().map(AsRawFd::as_raw_fd);
        let mut fds = [-1; 3];
        for (((target, slot), s), out) in (0..)
            .zip(self.slots.iter_mut())
            .zip(stdio)
            .zip(fds.iter_mut())
        {
            let (src, holds) = match (*s, null) {
                (Stdio::Inherit, _) => continue,
                (Stdio::Null, _) if slot.holds == Holds::Null => {
                    *out = slot.fd.as_raw_fd();
                    continue;
                }
                (Stdio::Null, Some(null)) => (null, Holds::Null),
                // Opened by `spawn` just before.
                (Stdio::Null, None) => return Err(Failure::Child(Step::OpenNull, Errno::ENOENT)),
                (Stdio::Fd(fd), _) => (fd.as_raw_fd(), Holds::Handed),
            };
            // SAFETY: dup3(2) onto a descriptor this spawner owns; `src` is
            // valid (borrowed by the request, or ours).
            if unsafe { libc::dup3(src, slot.fd.as_raw_fd(), libc::O_CLOEXEC) } < 0 {
                return Err(Failure::Child(Step::dup2(target), Errno::last()));
            }
            slot.holds = holds;
            *out = slot.fd.as_raw_fd();
        }
        Ok(fds)
    }

    /// Gives every slot that holds a caller's descriptor (or the
    /// placeholder, once `/dev/null` is open) `/dev/null` back, so that the
    /// init keeps no reference to a child's pipe.
    fn restore(&mut self) {
        let (src, holds) = match &self.null {
            Some(null) => (null.as_raw_fd(), Holds::Null),
            None => (self.placeholder.as_raw_fd(), Holds::Placeholder),
        };
        for slot in &mut self.slots {
            if slot.holds == holds || slot.holds == Holds::Null {
                continue;
            }
            // SAFETY: dup3(2) between two descriptors this spawner owns. It
            // cannot fail for two valid, distinct descriptors; if it did,
            // the slot would be retried after the next spawn.
            if unsafe { libc::dup3(src, slot.fd.as_raw_fd(), libc::O_CLOEXEC) } >= 0 {
                slot.holds = holds;
            }
        }
    }

    /// The clone itself: see the module documentation.
    fn clone_exec(&self, exec: &Exec<'_>, stdio: [RawFd; 3]) -> Result<Pid, Failure> {
        let creds = exec.credentials;
        let plan = Plan {
            path: exec.path.as_ptr(),
            argv: exec.argv.as_ptr(),
            envp: exec.envp.as_ptr(),
            cwd: exec.cwd.map_or(std::ptr::null(), CStr::as_ptr),
            stdio,
            limit: self.limit,
            close_range: close_range_allowed(),
            groups: creds
                .and_then(|c| c.groups.as_deref())
                .map(|g| (g.as_ptr(), g.len())),
            gid: creds.and_then(|c| c.gid),
            uid: creds.and_then(|c| c.uid),
            context: exec.context.map_or(std::ptr::null(), std::ptr::from_ref),
            execing: AtomicBool::new(false),
            step: AtomicU32::new(0),
            errno: AtomicI32::new(0),
        };
        let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD;
        let all = [u64::MAX; 2];
        let mut old = [0u64; 2];
        // SAFETY: the masks are valid for KERNEL_SIGSET_SIZE bytes. The
        // stack is ours and unused (the lock is held); `plan` outlives the
        // child's use of it, which ends before clone(2) returns
        // (CLONE_VFORK: at its execve or its exit); `child_entry` never
        // returns and only makes async-signal-safe calls.
        let arg: *mut c_void = std::ptr::addr_of!(plan).cast_mut().cast();
        // A unit with a cgroup: its child is born there (clone3.rs says
        // why), else it joins it itself.
        let cgroup = exec.context.and_then(ChildContext::cgroup_fd);
        let (pid, errno) = unsafe {
            sigprocmask(libc::SIG_SETMASK, all.as_ptr(), old.as_mut_ptr());
            let mut born = None;
            if let (Some(ctx), Some(fd)) = (exec.context, cgroup) {
                if CLONE3.load(Ordering::Relaxed) {
                    ctx.set_joined(true);
                    let size = STACK_SIZE;
                    let bottom = self.stack.top.cast::<u8>().wrapping_sub(size).cast();
                    born = match clone3::clone_into(flags, fd, bottom, size, child_entry, arg) {
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
        let step = plan.step.load(Ordering::Relaxed);
        if step == 0 && plan.execing.load(Ordering::Relaxed) {
            return Ok(pid);
        }
        // The child is at `_exit(127)`, or was killed on its way to
        // `execve`: reap it so that the loop never sees it.
        let mut status = 0;
        loop {
            // SAFETY: waitpid(2) on our own child.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r >= 0 || Errno::last() != Errno::EINTR {
                break;
            }
        }
        if step == 0 {
            return Err(Failure::Killed(libc::WTERMSIG(status)));
        }
        let errno = Errno::from_raw(plan.errno.load(Ordering::Relaxed));
        if let Some(n) = step.checked_sub(CONTEXT_STEPS) {
            return Err(Failure::Context(n as usize, errno));
        }
        Err(Failure::Child(Step::from_u32(step), errno))
    }
}

/// `fd` itself if above 2, else a close-on-exec copy from 3 up (PID 1 may
/// start with 0, 1, 2 closed, and reopens the console onto them later).
fn above_stdio(fd: OwnedFd) -> Result<OwnedFd, Errno> {
    if fd.as_raw_fd() > 2 {
        Ok(fd)
    } else {
        dup_above_stdio(&fd)
    }
}

/// A close-on-exec copy of `fd`, the lowest free descriptor from 3 up.
fn dup_above_stdio(fd: &OwnedFd) -> Result<OwnedFd, Errno> {
    // SAFETY: fcntl(2) on a descriptor we own; the result is new and ours.
    let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        return Err(Errno::last());
    }
    // SAFETY: `copy` is a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

fn open_null() -> Result<OwnedFd, Errno> {
    use nix::fcntl::OFlag;
    let fd = nix::fcntl::open(
        c"/dev/null",
        OFlag::O_RDWR | OFlag::O_CLOEXEC | OFlag::O_NOCTTY,
        nix::sys::stat::Mode::empty(),
    )?;
    above_stdio(fd)
}

/// The size of the child's stack. The child's deepest call chain is a few
/// frames of its own plus a C library system-call wrapper: well under a
/// page in release builds, a few in debug builds.
const STACK_SIZE: usize = 64 << 10;

/// The child's stack: an anonymous mapping with a guard page below it (an
/// overflow kills the child, whose signals are blocked, instead of writing
/// over the parent's memory). Only the pages the child touches are ever
/// backed.
#[derive(Debug)]
struct Stack {
    base: *mut c_void,
    len: usize,
    /// The highest address: stacks grow down.
    top: *mut c_void,
}

// SAFETY: the mapping belongs to the stack alone; it is only used under the
// spawner's lock.
unsafe impl Send for Stack {}

impl Stack {
    fn new() -> Result<Stack, Errno> {
        // SAFETY: sysconf(3) has no memory-safety requirements.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .unwrap_or(4096)
            .max(4096);
        let len = STACK_SIZE + page;
        // SAFETY: a new private anonymous mapping; nothing else is touched.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(Errno::last());
        }
        let stack = Stack {
            base,
            len,
            top: base.cast::<u8>().wrapping_add(len).cast(),
        };
        // SAFETY: the lowest page of the mapping just made.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } < 0 {
            return Err(Errno::last());
        }
        Ok(stack)
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: our mapping, unmapped once; no child is running on it
        // (dropping needs the spawner, which a spawn borrows).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// Whether the child may try `close_range(2)` (tests turn it off to run
/// the fall-back).
#[cfg(not(test))]
fn close_range_allowed() -> bool {
    true
}

#[cfg(test)]
fn close_range_allowed() -> bool {
    !tests_support::WITHOUT_CLOSE_RANGE.load(Ordering::Relaxed)
}

/// `rt_sigprocmask(2)` itself: the C library's wrappers leave out its
/// internal signals.
unsafe fn sigprocmask(how: c_int, set: *const u64, old: *mut u64) {
    libc::syscall(libc::SYS_rt_sigprocmask, how, set, old, KERNEL_SIGSET_SIZE);
}

/// `sizeof(sigset_t)` as the kernel counts it (`_NSIG / 8`).
const KERNEL_SIGSET_SIZE: libc::size_t = if cfg!(any(target_arch = "mips", target_arch = "mips64"))
{
    16
} else {
    8
};

/// Identity system calls taking 32-bit IDs (the plain numbers take 16-bit
/// ones on these architectures).
#[cfg(any(target_arch = "x86", target_arch = "arm"))]
mod nr {
    pub(super) const SETGROUPS: libc::c_long = libc::SYS_setgroups32;
    pub(super) const SETRESGID: libc::c_long = libc::SYS_setresgid32;
    pub(super) const SETRESUID: libc::c_long = libc::SYS_setresuid32;
}

#[cfg(not(any(target_arch = "x86", target_arch = "arm")))]
mod nr {
    pub(super) const SETGROUPS: libc::c_long = libc::SYS_setgroups;
    pub(super) const SETRESGID: libc::c_long = libc::SYS_setresgid;
    pub(super) const SETRESUID: libc::c_long = libc::SYS_setresuid;
}

/// Where the step codes of a context's steps start: step `n` of the
/// context reports `CONTEXT_STEPS + n`.
const CONTEXT_STEPS: u32 = 1 << 16;

/// A step, reported with its errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Setsid = 1,
    Setgroups,
    Setgid,
    Setuid,
    Dup2Stdin,
    Dup2Stdout,
    Dup2Stderr,
    Chdir,
    Execve,
    Unshare,
    OpenNull,
}

impl Step {
    fn from_u32(v: u32) -> Step {
        [
            Step::Setsid,
            Step::Setgroups,
            Step::Setgid,
            Step::Setuid,
            Step::Dup2Stdin,
            Step::Dup2Stdout,
            Step::Dup2Stderr,
            Step::Chdir,
            Step::Unshare,
            Step::OpenNull,
        ]
        .into_iter()
        .find(|s| *s as u32 == v)
        .unwrap_or(Step::Execve)
    }

    fn name(self) -> &'static str {
        match self {
            Step::Setsid => "setsid",
            Step::Setgroups => "setgroups",
            Step::Setgid => "setgid",
            Step::Setuid => "setuid",
            Step::Dup2Stdin => "set up stdin",
            Step::Dup2Stdout => "set up stdout",
            Step::Dup2Stderr => "set up stderr",
            Step::Chdir => "chdir",
            Step::Execve => "execve",
            Step::Unshare => "unshare the descriptor table",
            Step::OpenNull => "open /dev/null",
        }
    }

    fn dup2(target: RawFd) -> Step {
        match target {
            0 => Step::Dup2Stdin,
            1 => Step::Dup2Stdout,
            _ => Step::Dup2Stderr,
        }
    }
}

/// Everything the child reads, prepared in the parent, and where it
/// reports a failure. Lives in the parent's frame; the child sees it
/// through the memory they share.
struct Plan {
    path: *const c_char,
    argv: *const *mut c_char,
    envp: *const *mut c_char,
    /// NULL: no `chdir`.
    cwd: *const c_char,
    /// The slot to `dup2` onto 0, 1, 2, or -1 to inherit.
    stdio: [RawFd; 3],
    /// K.
    limit: c_uint,
    close_range: bool,
    groups: Option<(*const libc::gid_t, usize)>,
    gid: Option<libc::gid_t>,
    uid: Option<libc::uid_t>,
    /// The request's context (NULL: none): see `context.rs`.
    context: *const ChildContext,
    /// Set by the child right before `execve`: a child that ends without
    /// it and without a step was killed on the way.
    execing: AtomicBool,
    /// The failed [`Step`] (0: none; from [`CONTEXT_STEPS`] up, a step of
    /// the context).
    step: AtomicU32,
    errno: AtomicI32,
}

/// The child's entry point on its own stack.
extern "C" fn child_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the parent's `Plan`, alive until clone(2) returns,
    // which is after this child has exec'd or exited.
    unsafe { child(&*arg.cast::<Plan>()) }
}

/// The child. Only async-signal-safe system calls (`signal-safety(7)`), no
/// allocation, no lock, no panic; never returns. All signals are blocked
/// on entry (the parent's doing) until the last step before `execve`.
unsafe fn child(p: &Plan) -> ! {
    // A table of our own before anything else touches a descriptor: until
    // then it is the init's.
    let ranged = p.close_range
        && libc::syscall(
            libc::SYS_close_range,
            libc::c_ulong::from(p.limit),
            libc::c_ulong::from(c_uint::MAX),
            libc::c_ulong::from(libc::CLOSE_RANGE_UNSHARE),
        ) == 0;
    if !ranged && libc::unshare(libc::CLONE_FILES) < 0 {
        fail(p, Step::Unshare);
    }
    if libc::setsid() < 0 {
        fail(p, Step::Setsid);
    }
    // The context's cgroup, limits, namespaces and mounts, while the child
    // still has the init's privileges.
    let context = p.context.as_ref();
    if let Some(Err((n, errno))) = context.map(|c| c.before_identity()) {
        fail_context(p, n, errno);
    }
    // Raw system calls: the C library's wrappers would apply the change to
    // every thread of the init (see the module documentation). setgroups
    // and setresgid need the privilege that setresuid gives up.
    if let Some((list, len)) = p.groups {
        if libc::syscall(nr::SETGROUPS, len, list) < 0 {
            fail(p, Step::Setgroups);
        }
    }
    if let Some(gid) = p.gid {
        if libc::syscall(nr::SETRESGID, gid, gid, gid) < 0 {
            fail(p, Step::Setgid);
        }
    }
    if let Some(uid) = p.uid {
        if libc::syscall(nr::SETRESUID, uid, uid, uid) < 0 {
            fail(p, Step::Setuid);
        }
    }
    if let Some(Err((n, errno))) = context.map(|c| c.after_identity()) {
        fail_context(p, n, errno);
    }
    // Slots are above 2: dup2 never overwrites a later source and always
    // clears close-on-exec on the target.
    for (target, src) in (0..).zip(p.stdio) {
        if src >= 0 && libc::dup2(src, target) < 0 {
            fail(p, Step::dup2(target));
        }
    }
    // What is left from 3 up: the slots and whatever else of the init's
    // lay below K.
    let last = p.limit.saturating_sub(1);
    if !ranged
        || libc::syscall(
            libc::SYS_close_range,
            libc::c_ulong::from(3u32),
            libc::c_ulong::from(last),
            0 as libc::c_ulong,
        ) != 0
    {
        for fd in 3..p.limit {
            libc::close(fd as c_int);
        }
    }
    // After the identity change: the unit's user must be able to enter its
    // directory.
    if !p.cwd.is_null() && libc::chdir(p.cwd) < 0 {
        fail(p, Step::Chdir);
    }
    // Default dispositions first, then the empty mask, so that a pending
    // signal cannot run an inherited handler. The raw rt_sigaction(2): the C
    // library's sigaction(3) refuses its internal signals (32, 33, …), which
    // may have been inherited ignored. An all-zero kernel `struct
    // sigaction` is SIG_DFL, no flags, empty mask, whatever the
    // architecture's field order. The kernel refuses SIGKILL and SIGSTOP,
    // which are always default anyway.
    let dfl = [0u64; 4];
    for sig in 1..=64 {
        libc::syscall(
            libc::SYS_rt_sigaction,
            sig,
            dfl.as_ptr(),
            std::ptr::null_mut::<u64>(),
            KERNEL_SIGSET_SIZE,
        );
    }
    let empty = [0u64; 2];
    sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), std::ptr::null_mut());
    // Last: no-new-privileges and the seccomp filter, which the child's
    // own steps must not run under.
    if let Some(Err((n, errno))) = context.map(|c| c.before_exec()) {
        fail_context(p, n, errno);
    }
    p.execing.store(true, Ordering::Relaxed);
    libc::execve(p.path, p.argv.cast(), p.envp.cast());
    fail(p, Step::Execve)
}

/// Reports `step` and `errno` to the parent and exits 127.
unsafe fn fail(p: &Plan, step: Step) -> ! {
    p.errno.store(Errno::last_raw(), Ordering::Relaxed);
    p.step.store(step as u32, Ordering::Relaxed);
    libc::_exit(127)
}

/// Reports step `n` of the context and `errno` to the parent and exits
/// 127.
unsafe fn fail_context(p: &Plan, n: usize, errno: c_int) -> ! {
    p.errno.store(errno, Ordering::Relaxed);
    let code = u32::try_from(n).map_or(u32::MAX, |n| CONTEXT_STEPS.saturating_add(n));
    p.step.store(code, Ordering::Relaxed);
    libc::_exit(127)
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
mod tests {
    use super::*;

    fn cstrs(a: &CStrArray) -> Vec<String> {
        let mut out = Vec::new();
        for &p in &a.ptrs {
            if p.is_null() {
                break;
            }
            // SAFETY: pointers into `a.buf`, each NUL-terminated.
            out.push(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned());
        }
        out
    }

    #[test]
    fn argv_and_envp_are_laid_out_in_one_buffer() {
        let args = vec!["prog".to_string(), String::new(), "a b".to_string()];
        let a = CStrArray::argv(&args).unwrap();
        assert_eq!(cstrs(&a), args);
        assert_eq!(a.ptrs.len(), 4);
        assert!(a.ptrs.last().unwrap().is_null());
        assert!(CStrArray::argv(&["a\0b".to_string()]).is_none());

        let mut env = Env::new();
        env.set("B", "2").unwrap();
        env.set("A", "").unwrap();
        let e = CStrArray::envp(&env);
        assert_eq!(cstrs(&e), ["A=", "B=2"]);
        let none = CStrArray::envp(&Env::new());
        assert_eq!(none.ptrs.len(), 1);
    }

    #[test]
    fn resolve_absolute_and_path_programs() {
        assert_eq!(
            resolve_program("/bin/sh", None).unwrap().as_bytes(),
            b"/bin/sh"
        );
        let found = resolve_program("sh", Some(b"/nonexistent::/bin")).unwrap();
        assert_eq!(found.as_bytes(), b"/bin/sh");
        let err = resolve_program("/usr/bin/flotilla-missing", None).unwrap_err();
        assert_eq!(err.to_string(), "/usr/bin/flotilla-missing: no such file");
        let err = resolve_program("flotilla-missing", Some(b"/bin")).unwrap_err();
        assert_eq!(err.to_string(), "flotilla-missing: not found in PATH");
        let err = resolve_program("/tmp", None).unwrap_err();
        assert_eq!(err.to_string(), "/tmp: is a directory");
        let err = resolve_program("/dev/null", None).unwrap_err();
        assert_eq!(err.to_string(), "/dev/null: not a regular file");
        // The current directory is never searched.
        let err = resolve_program("spawn.rs", Some(b"")).unwrap_err();
        assert!(matches!(err, SysError::NoProgram { .. }));
    }

    #[test]
    fn non_executable_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("script");
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        let err = resolve_program(f.to_str().unwrap(), None).unwrap_err();
        assert!(err.to_string().ends_with("permission denied"), "{err}");
        let err = resolve_program("script", Some(dir.path().as_os_str().as_bytes())).unwrap_err();
        assert!(err.to_string().ends_with("permission denied"), "{err}");
    }

    #[test]
    fn step_codes_round_trip() {
        for s in [
            Step::Setsid,
            Step::Setgroups,
            Step::Setgid,
            Step::Setuid,
            Step::Dup2Stdin,
            Step::Dup2Stdout,
            Step::Dup2Stderr,
            Step::Chdir,
            Step::Execve,
            Step::Unshare,
            Step::OpenNull,
        ] {
            assert_eq!(Step::from_u32(s as u32), s);
        }
        assert_eq!(Step::dup2(1), Step::Dup2Stdout);
    }

    #[test]
    fn a_child_killed_before_execve_is_reported_with_its_signal() {
        let err = Failure::Killed(libc::SIGSYS).into_error("/bin/x", None, None);
        assert_eq!(err.to_string(), "/bin/x: killed by SIGSYS before execve");
        let err = Failure::Context(3, Errno::EPERM).into_error("/bin/x", None, None);
        assert_eq!(
            err.to_string(),
            "/bin/x: context step 3: operation not permitted"
        );
    }
}
