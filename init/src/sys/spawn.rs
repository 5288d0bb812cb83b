//! Starting a process: the hot path of [`super::real::RealSys::spawn`].
//!
//! Two ways, chosen by the request:
//!
//! - **No identity change**: one `posix_spawn(3)`. glibc (since 2.24) and
//!   musl run it as `clone(CLONE_VM | CLONE_VFORK)` plus `execve(2)`: no
//!   page tables are copied, and the parent resumes once the child has
//!   exec'd, with the error if it could not. The attributes make the child
//!   a session leader (`POSIX_SPAWN_SETSID`, glibc >= 2.26, musl >= 1.1.24;
//!   0x80 in both `<spawn.h>`), empty its signal mask
//!   (`POSIX_SPAWN_SETSIGMASK`) and reset every disposition
//!   (`POSIX_SPAWN_SETSIGDEF` with a full set: `execve(2)` resets handled
//!   signals but keeps ignored ones, and Rust ignores `SIGPIPE`). File
//!   actions put stdio in place, `chdir` (`addchdir_np`) and, on glibc,
//!   close every descriptor from 3 up (`addclosefrom_np`, glibc >= 2.34).
//! - **User, group or groups to set**: `posix_spawn(3)` cannot, so
//!   `fork(2)`. Everything is prepared in the parent (C strings, pointer
//!   arrays, the program's path, `/dev/null`); the child makes only
//!   async-signal-safe calls (`signal-safety(7)`): `setsid`, `setgroups`,
//!   `setgid`, `setuid`, `dup2`, `chdir`, `close_range`, `sigaction`,
//!   `sigprocmask`, `execve`, `write`, `_exit`. A failure is written as
//!   (step, errno) to a close-on-exec pipe before `_exit(127)`; the parent
//!   reads that pipe until EOF (which comes at the `execve`), so the caller
//!   gets the error and the failed child is reaped here — the same contract
//!   as `posix_spawn(3)`.
//!
//! In both cases the program is found in the parent first (`execvp(3)`
//! semantics, minus the current directory), so that a missing program is an
//! error before anything is forked, and argv/envp are laid out in one
//! buffer each (two allocations per array, whatever its length).

use std::ffi::{c_char, CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::sys::stat::{stat, SFlag};

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
    let argv = CStrArray::argv(req.argv).ok_or_else(|| nul(program, "an argument"))?;
    let envp = CStrArray::envp(req.env);
    let cwd = match req.cwd {
        Some(dir) => Some(
            CString::new(dir.as_os_str().as_bytes())
                .map_err(|_| nul(program, "the working directory"))?,
        ),
        None => None,
    };
    let stdio = StdioPlan::new(req).map_err(|errno| SysError::Spawn {
        program: program.to_owned(),
        errno: Os(errno),
    })?;
    let result = match req.credentials {
        None => posix_spawn(&path, &argv, &envp, cwd.as_deref(), &stdio),
        Some(creds) => fork_exec(&path, &argv, &envp, cwd.as_deref(), &stdio, creds),
    };
    result.map_err(|failure| failure.into_error(program, req.cwd))
}

fn nul(program: &str, what: &'static str) -> SysError {
    SysError::Nul {
        program: program.to_owned(),
        what,
    }
}

/// A failure, before the program's name is attached.
enum Failure {
    /// In the parent, or reported by `posix_spawn(3)`.
    Spawn(Errno),
    /// A step in the forked child.
    Child(Step, Errno),
}

impl Failure {
    fn into_error(self, program: &str, cwd: Option<&Path>) -> SysError {
        let program = program.to_owned();
        match self {
            // `posix_spawn(3)` does not say which action failed. The program
            // was found a moment ago, so a missing file is most likely the
            // working directory: check it, on this failure path only.
            Failure::Spawn(errno @ (Errno::ENOENT | Errno::ENOTDIR)) => match cwd {
                Some(dir) if stat(dir).is_err() => SysError::ChildSetup {
                    program,
                    step: format!("chdir {}", dir.display()),
                    errno: Os(errno),
                },
                _ => SysError::Spawn {
                    program,
                    errno: Os(errno),
                },
            },
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

/// What to do with one of descriptors 0, 1, 2 in the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Inherit,
    Null,
    Dup(RawFd),
}

/// The three stdio actions, with any source descriptor below 3 first copied
/// above 2 (`F_DUPFD_CLOEXEC`), so that no `dup2` clobbers a later source
/// and none is a no-op `dup2(fd, fd)` that would leave close-on-exec set.
struct StdioPlan {
    actions: [Action; 3],
    /// Those copies, closed when the plan is dropped (after the spawn).
    _copies: [Option<OwnedFd>; 3],
}

impl StdioPlan {
    fn new(req: &SpawnRequest<'_>) -> Result<StdioPlan, Errno> {
        let (a0, c0) = plan_one(req.stdin)?;
        let (a1, c1) = plan_one(req.stdout)?;
        let (a2, c2) = plan_one(req.stderr)?;
        Ok(StdioPlan {
            actions: [a0, a1, a2],
            _copies: [c0, c1, c2],
        })
    }

    fn targets(&self) -> impl Iterator<Item = (RawFd, Action)> + '_ {
        (0..).zip(self.actions.iter().copied())
    }

    fn needs_null(&self) -> bool {
        self.actions.contains(&Action::Null)
    }
}

fn plan_one(s: Stdio<'_>) -> Result<(Action, Option<OwnedFd>), Errno> {
    match s {
        Stdio::Null => Ok((Action::Null, None)),
        Stdio::Inherit => Ok((Action::Inherit, None)),
        Stdio::Fd(fd) if fd.as_raw_fd() > 2 => Ok((Action::Dup(fd.as_raw_fd()), None)),
        Stdio::Fd(fd) => {
            // SAFETY: fcntl(2) on a descriptor we borrow; the result is new
            // and ours.
            let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
            if copy < 0 {
                return Err(Errno::last());
            }
            // SAFETY: `copy` is a fresh descriptor owned by nobody else.
            let copy = unsafe { OwnedFd::from_raw_fd(copy) };
            Ok((Action::Dup(copy.as_raw_fd()), Some(copy)))
        }
    }
}

const DEV_NULL: &CStr = c"/dev/null";

/// `posix_spawn_file_actions_t`, destroyed on drop.
struct FileActions(libc::posix_spawn_file_actions_t);

impl FileActions {
    fn new() -> Result<FileActions, Errno> {
        // SAFETY: an all-zero value is a valid bit pattern for this C struct;
        // it is initialised by the call below before any other use.
        let mut fa = FileActions(unsafe { std::mem::zeroed() });
        // SAFETY: `fa.0` is valid for writes.
        check(unsafe { libc::posix_spawn_file_actions_init(&mut fa.0) })?;
        Ok(fa)
    }
}

impl Drop for FileActions {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, destroyed once.
        unsafe { libc::posix_spawn_file_actions_destroy(&mut self.0) };
    }
}

/// `posix_spawnattr_t`, destroyed on drop.
struct Attr(libc::posix_spawnattr_t);

impl Attr {
    fn new() -> Result<Attr, Errno> {
        // SAFETY: as for `FileActions::new`.
        let mut attr = Attr(unsafe { std::mem::zeroed() });
        // SAFETY: `attr.0` is valid for writes.
        check(unsafe { libc::posix_spawnattr_init(&mut attr.0) })?;
        Ok(attr)
    }
}

impl Drop for Attr {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, destroyed once.
        unsafe { libc::posix_spawnattr_destroy(&mut self.0) };
    }
}

/// `posix_spawn*` functions return the error number instead of setting
/// `errno`.
fn check(ret: libc::c_int) -> Result<(), Errno> {
    if ret == 0 {
        Ok(())
    } else {
        Err(Errno::from_raw(ret))
    }
}

/// `POSIX_SPAWN_SETSID`: 0x80 in glibc's and musl's `<spawn.h>`.
const SETSID: libc::c_int = libc::POSIX_SPAWN_SETSID as libc::c_int;

fn posix_spawn(
    path: &CStr,
    argv: &CStrArray,
    envp: &CStrArray,
    cwd: Option<&CStr>,
    stdio: &StdioPlan,
) -> Result<Pid, Failure> {
    let mut fa = FileActions::new().map_err(Failure::Spawn)?;
    let mut attr = Attr::new().map_err(Failure::Spawn)?;
    // SAFETY: every pointer passed below is valid for the duration of the
    // call; `fa` and `attr` are initialised; posix_spawn(3) copies what it
    // needs before returning.
    unsafe {
        for (target, action) in stdio.targets() {
            let r = match action {
                Action::Inherit => 0,
                Action::Null => {
                    let flags = if target == 0 {
                        libc::O_RDONLY
                    } else {
                        libc::O_WRONLY
                    };
                    libc::posix_spawn_file_actions_addopen(
                        &mut fa.0,
                        target,
                        DEV_NULL.as_ptr(),
                        flags,
                        0,
                    )
                }
                Action::Dup(src) => libc::posix_spawn_file_actions_adddup2(&mut fa.0, src, target),
            };
            check(r).map_err(Failure::Spawn)?;
        }
        if let Some(dir) = cwd {
            check(libc::posix_spawn_file_actions_addchdir_np(
                &mut fa.0,
                dir.as_ptr(),
            ))
            .map_err(Failure::Spawn)?;
        }
        #[cfg(target_env = "gnu")]
        check(libc::posix_spawn_file_actions_addclosefrom_np(&mut fa.0, 3))
            .map_err(Failure::Spawn)?;

        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        // Every bit set by hand: sigfillset(3) leaves out the C library's
        // internal signals (32 and 33 for glibc, 32 to 34 for musl), and
        // glibc's child would then set those to SIG_IGN, which survives
        // execve(2). A set sigset_t bit is all both libraries check.
        let mut full: libc::sigset_t = std::mem::zeroed();
        std::ptr::write_bytes(&mut full, 0xff, 1);
        let flags = libc::POSIX_SPAWN_SETSIGMASK | libc::POSIX_SPAWN_SETSIGDEF | SETSID;
        // The flags fit in a c_short (0x8c).
        check(libc::posix_spawnattr_setflags(
            &mut attr.0,
            flags as libc::c_short,
        ))
        .map_err(Failure::Spawn)?;
        check(libc::posix_spawnattr_setsigmask(&mut attr.0, &empty)).map_err(Failure::Spawn)?;
        check(libc::posix_spawnattr_setsigdefault(&mut attr.0, &full)).map_err(Failure::Spawn)?;

        let mut pid: libc::pid_t = 0;
        check(libc::posix_spawn(
            &mut pid,
            path.as_ptr(),
            &fa.0,
            &attr.0,
            argv.as_ptr(),
            envp.as_ptr(),
        ))
        .map_err(Failure::Spawn)?;
        Ok(pid)
    }
}

/// A step of the forked child, reported with its errno.
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

/// Everything the forked child needs, prepared in the parent.
struct ChildPlan<'a> {
    path: &'a CStr,
    argv: &'a CStrArray,
    envp: &'a CStrArray,
    cwd: Option<&'a CStr>,
    stdio: &'a StdioPlan,
    null: RawFd,
    uid: Option<libc::uid_t>,
    gid: Option<libc::gid_t>,
    groups: Option<&'a [libc::gid_t]>,
    report: RawFd,
}

fn fork_exec(
    path: &CStr,
    argv: &CStrArray,
    envp: &CStrArray,
    cwd: Option<&CStr>,
    stdio: &StdioPlan,
    creds: &Credentials,
) -> Result<Pid, Failure> {
    let null = if stdio.needs_null() {
        let fd = nix::fcntl::open(
            DEV_NULL,
            nix::fcntl::OFlag::O_RDWR | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
        .map_err(Failure::Spawn)?;
        Some(fd)
    } else {
        None
    };
    let (report_rd, report_wr) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(Failure::Spawn)?;
    let plan = ChildPlan {
        path,
        argv,
        envp,
        cwd,
        stdio,
        null: null.as_ref().map_or(-1, AsRawFd::as_raw_fd),
        uid: creds.uid,
        gid: creds.gid,
        groups: creds.groups.as_deref(),
        report: report_wr.as_raw_fd(),
    };
    // SAFETY: the init has a single thread, so the child may run any
    // async-signal-safe code; `child` runs only such code and never returns.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(Failure::Spawn(Errno::last()));
    }
    if pid == 0 {
        // SAFETY: in the child, right after fork(2).
        unsafe { child(&plan) }
    }
    drop(report_wr);
    drop(null);
    // EOF means the child exec'd (the pipe is close-on-exec) or died; eight
    // bytes are a failure report. The wait is as long as the child's set-up.
    let mut msg = [0u8; 8];
    let mut got = 0;
    while let Some(rest) = msg.get_mut(got..) {
        if rest.is_empty() {
            break;
        }
        match nix::unistd::read(&report_rd, rest) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(Errno::EINTR) => {}
            Err(_) => break,
        }
    }
    if got < msg.len() {
        return Ok(pid);
    }
    let (step, errno) = msg.split_at(4);
    let step = Step::from_u32(u32::from_ne_bytes(step.try_into().unwrap_or_default()));
    let errno = Errno::from_raw(i32::from_ne_bytes(errno.try_into().unwrap_or_default()));
    // The child is at `_exit(127)`: reap it so that the loop never sees it.
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) on our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r >= 0 || Errno::last() != Errno::EINTR {
            break;
        }
    }
    Err(Failure::Child(step, errno))
}

/// The forked child. Only async-signal-safe calls (`signal-safety(7)`), no
/// allocation, no panic, never returns.
unsafe fn child(p: &ChildPlan<'_>) -> ! {
    if libc::setsid() < 0 {
        fail(p.report, Step::Setsid);
    }
    if let Some(groups) = p.groups {
        if libc::setgroups(groups.len(), groups.as_ptr()) < 0 {
            fail(p.report, Step::Setgroups);
        }
    }
    // setgroups and setgid need the privilege that setuid gives up.
    if let Some(gid) = p.gid {
        if libc::setgid(gid) < 0 {
            fail(p.report, Step::Setgid);
        }
    }
    if let Some(uid) = p.uid {
        if libc::setuid(uid) < 0 {
            fail(p.report, Step::Setuid);
        }
    }
    for (target, action) in p.stdio.targets() {
        let src = match action {
            Action::Inherit => continue,
            Action::Null => p.null,
            Action::Dup(src) => src,
        };
        // Sources are all above 2, so dup2 never clobbers a later source
        // and always clears close-on-exec on the target.
        if libc::dup2(src, target) < 0 {
            fail(p.report, Step::dup2(target));
        }
    }
    // After setuid: the unit's user must be able to enter its directory.
    if let Some(dir) = p.cwd {
        if libc::chdir(dir.as_ptr()) < 0 {
            fail(p.report, Step::Chdir);
        }
    }
    // Everything from 3 up becomes close-on-exec (close_range(2), Linux
    // 5.11); the report pipe already is. Failure (older kernel) is ignored:
    // the init's own descriptors are close-on-exec anyway.
    libc::syscall(
        libc::SYS_close_range,
        3 as libc::c_uint,
        libc::c_uint::MAX,
        libc::CLOSE_RANGE_CLOEXEC,
    );
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
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    libc::execve(
        p.path.as_ptr(),
        p.argv.as_ptr().cast(),
        p.envp.as_ptr().cast(),
    );
    fail(p.report, Step::Execve)
}

/// `sizeof(sigset_t)` as the kernel counts it (`_NSIG / 8`).
const KERNEL_SIGSET_SIZE: libc::size_t = if cfg!(any(target_arch = "mips", target_arch = "mips64"))
{
    16
} else {
    8
};

/// Reports `step` and `errno` to the parent and exits 127.
unsafe fn fail(report: RawFd, step: Step) -> ! {
    let errno = Errno::last_raw();
    let mut msg = [0u8; 8];
    let (a, b) = msg.split_at_mut(4);
    a.copy_from_slice(&(step as u32).to_ne_bytes());
    b.copy_from_slice(&errno.to_ne_bytes());
    // A pipe write of 8 bytes is atomic (pipe(7), PIPE_BUF).
    libc::write(report, msg.as_ptr().cast(), msg.len());
    libc::_exit(127)
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// For each of stdin, stdout, stderr: the source descriptor of a `Dup`
    /// and whether it is a copy made by the plan.
    pub(crate) fn plan(req: &SpawnRequest<'_>) -> Result<[(Option<RawFd>, bool); 3], Errno> {
        let p = StdioPlan::new(req)?;
        let one = |i: usize| {
            let a = p.actions.get(i).copied().unwrap_or(Action::Inherit);
            let src = if let Action::Dup(fd) = a {
                Some(fd)
            } else {
                None
            };
            (src, p._copies.get(i).is_some_and(Option::is_some))
        };
        Ok([one(0), one(1), one(2)])
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
            Step::Chdir,
            Step::Execve,
        ] {
            assert_eq!(Step::from_u32(s as u32), s);
        }
        assert_eq!(Step::dup2(1), Step::Dup2Stdout);
    }
}
