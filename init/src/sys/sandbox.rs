//! The steps a spawned child takes to enter its service's context, and
//! how it takes each with raw system calls.
//!
//! [`super::context::prepare`] turns a unit's context into a list of
//! [`Op`]s in the parent: every path a C string, every number computed,
//! every seccomp program compiled. The child (`spawn/`, a `CLONE_VM`
//! child sharing the init's memory) runs them at three points — before it
//! changes its identity, right after, and just before `execve(2)` — with
//! plain system calls only: it allocates nothing, takes no lock, cannot
//! panic (no indexing, no overflowing arithmetic), and reports a failure
//! as the failing op's index and `errno`.
//!
//! # The mount namespace
//!
//! The child unshares its mount namespace and makes every mount a slave of
//! the init's (mounts made later on the host still reach it; none of its
//! own leak out). Then, with the new mount API (Linux 5.12, checked by the
//! parent): [`Op::Snapshot`] copies a tree as it is now
//! (`open_tree(OPEN_TREE_CLONE | AT_RECURSIVE)`) for [`Op::Restore`] to put
//! on top later (`move_mount`), which is how a path keeps its state under a
//! read-only parent and how a private `/tmp` is bound; [`Op::ReadOnly`]
//! binds a path onto itself and sets `MOUNT_ATTR_RDONLY` on it and
//! everything below in one `mount_setattr(AT_RECURSIVE)`;
//! [`Op::Inaccessible`] covers a directory with an empty read-only tmpfs of
//! mode 000 and anything else with a bind of the init's empty mode-000
//! file (`/run/flotilla/inaccessible/file`, as systemd's
//! `/run/systemd/inaccessible/reg`); [`Op::PrivateDev`] copies the basic
//! device nodes, attaches a new tmpfs over `/dev` and puts the copies and
//! the host's `pts`, `shm` and `mqueue` in it. Nothing is ever mounted onto,
//! or copied out of, a detached tree: kernels before 6.15 refuse both.

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

use seccompiler::BpfProgram;

/// One step of the child.
#[derive(Debug)]
pub(crate) enum Op {
    /// Makes one of the unit's directories (`dirs.rs`); `status` is the
    /// exit status that says which kind failed.
    MakeDir {
        parents: Vec<CString>,
        path: CString,
        mode: libc::mode_t,
        owner: Option<(libc::uid_t, libc::gid_t)>,
        status: u8,
    },
    /// Opens an output file onto standard output and/or error (`dirs.rs`).
    OpenOutput {
        path: CString,
        flags: c_int,
        stdout: bool,
        stderr: bool,
    },
    /// Opens a file onto standard input, and onto output and error when
    /// they follow it (`terminal.rs`).
    OpenInput {
        path: CString,
        stdout: bool,
        stderr: bool,
    },
    /// Prepares a terminal and opens it onto the standard streams
    /// `targets` says; `mode`: taken as the controlling terminal, as
    /// `StandardInput=tty…` says (`terminal.rs`).
    OpenTty {
        path: CString,
        mode: Option<flotilla_units::context::input::TtyMode>,
        prepare: super::terminal::Prepare,
        targets: [bool; 3],
    },
    /// Makes a new detached tmpfs for the unit's credentials
    /// (`credentials.rs`), kept in `fd`; `total` counts what is written.
    CredentialsBegin {
        base: CString,
        fd: AtomicI32,
        total: AtomicU64,
    },
    /// Writes one credential into the tmpfs of op `begin`
    /// (`credentials.rs`).
    Credential {
        begin: usize,
        id: CString,
        sources: Vec<CString>,
        fallback: Option<Vec<u8>>,
        required: bool,
        owner: Option<(libc::uid_t, libc::gid_t)>,
    },
    /// Puts the tmpfs of op `begin`, read-only, on `dir`
    /// (`credentials.rs`).
    CredentialsEnd {
        begin: usize,
        dir: CString,
        owner: Option<(libc::uid_t, libc::gid_t)>,
    },
    /// Writes `0` to this `cgroup.procs`: the child joins its cgroup.
    JoinCgroup(CString),
    /// Writes this text to `/proc/self/oom_score_adj`.
    OomScoreAdj(Vec<u8>),
    /// `setpriority(PRIO_PROCESS, 0, n)`.
    Nice(c_int),
    /// `sched_setscheduler(0, policy, {priority})`.
    Scheduler { policy: c_int, priority: c_int },
    /// `ioprio_set(IOPRIO_WHO_PROCESS, 0, value)`.
    IoPrio(c_int),
    /// `prlimit(0, resource, {soft, hard})`.
    Rlimit {
        resource: c_uint,
        soft: u64,
        hard: u64,
    },
    /// `unshare(flags)`.
    Unshare(c_int),
    /// A user namespace of its own with these maps (`userns.rs`).
    PrivateUsers { uid_map: Vec<u8>, gid_map: Vec<u8> },
    /// Brings the loopback interface of a new network namespace up.
    LoopbackUp,
    /// Every mount a slave: nothing made here propagates back.
    MakeSlave,
    /// A copy of the tree at `source` as it is now, kept for a `Restore`
    /// (the descriptor lives in the child's table; -1 when none).
    Snapshot { source: CString, fd: AtomicI32 },
    /// Puts the snapshot taken by op `snapshot` on top of `target`.
    Restore { snapshot: usize, target: CString },
    /// `path` and everything below it read-only (`path` is `/` itself, or
    /// is bound onto itself first).
    ReadOnly(CString),
    /// `path` and everything below it not executable (`noexec`) or
    /// executable again (`path` is `/` itself, or is bound onto itself
    /// first).
    Exec { path: CString, noexec: bool },
    /// `path` covered by an empty, mode-000, read-only node; `file` is the
    /// init's empty file, for paths that are not directories.
    Inaccessible { path: CString, file: CString },
    /// An empty read-only tmpfs with these options on `path`.
    EmptyTmpfs { path: CString, options: CString },
    /// A new `/dev`; the ops listed hold snapshots of the host's `pts`,
    /// `shm`, `mqueue` (taken before anything was made read-only).
    PrivateDev { dirs: Vec<(&'static CStr, usize)> },
    /// A new procfs instance at `path` with `options` (`hidepid=`,
    /// `subset=pid`).
    Proc { path: CString, options: CString },
    /// `umask(mask)`.
    Umask(libc::mode_t),
    /// `SIGPIPE` back to its default disposition (`IgnoreSIGPIPE=no`; the
    /// child ignores it otherwise, as systemd's services do).
    DefaultSigpipe,
    /// Drops from the bounding set every capability up to `last` that is
    /// not in `keep`.
    DropBounding { keep: u64, last: u32 },
    /// `prctl(PR_SET_KEEPCAPS, 1)`: the permitted set survives the switch
    /// to a non-root user (for ambient capabilities).
    KeepCaps,
    /// After the identity change: these capabilities permitted, effective,
    /// inheritable and ambient (`non_root`: only they remain).
    Ambient { caps: u64, non_root: bool },
    /// `prctl(PR_SET_NO_NEW_PRIVS, 1)`.
    NoNewPrivs,
    /// Installs a seccomp program.
    Seccomp(BpfProgram),
}

impl Op {
    /// Whether the op works on the file system outside the init's own
    /// tmpfs, where a call may wait on a disk, or on a terminal, where it
    /// may wait for a carrier or another session: a spawn with such an op
    /// hands its child off (`spawn/child.rs`) so that the init does not
    /// wait with it.
    pub(crate) fn may_wait_on_disk(&self) -> bool {
        matches!(
            self,
            Op::MakeDir { .. }
                | Op::OpenOutput { .. }
                | Op::OpenInput { .. }
                | Op::OpenTty { .. }
                | Op::CredentialsBegin { .. }
                | Op::Credential { .. }
                | Op::CredentialsEnd { .. }
        )
    }

    /// The exit status of a handed-off child that failed this op: systemd's
    /// for the same failure where it has one, else 127.
    pub(crate) fn exit_status(&self) -> u8 {
        match self {
            Op::MakeDir { status, .. } => *status,
            Op::OpenOutput { .. } => super::dirs::EXIT_OUTPUT,
            Op::OpenInput { .. } => super::terminal::EXIT_STDIN,
            Op::OpenTty { mode: Some(_), .. } => super::terminal::EXIT_STDIN,
            Op::OpenTty { mode: None, .. } => super::dirs::EXIT_OUTPUT,
            Op::CredentialsBegin { .. } | Op::Credential { .. } | Op::CredentialsEnd { .. } => {
                super::credentials::EXIT_CREDENTIALS
            }
            _ => 127,
        }
    }
}

/// Where a failed op stands: skip it, or fail the spawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnError {
    /// Fail the spawn.
    Fail,
    /// A missing path (`ENOENT`) is skipped (systemd's `-`).
    SkipMissing,
    /// A refusal (`EPERM`, `EACCES`) is skipped and recorded in
    /// [`Scratch::denied`], as systemd skips `OOMScoreAdjust=` in a
    /// container (`degrade.rs`).
    SkipDenied,
}

/// An op and what a failure of it means.
#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) op: Op,
    pub(crate) on_error: OnError,
}

/// Constants of `linux/mount.h`, `linux/capability.h`, `linux/prctl.h`.
pub(crate) mod k {
    use std::ffi::{c_int, c_uint, c_ulong};

    pub(crate) const OPEN_TREE_CLONE: u32 = 1;
    pub(crate) const OPEN_TREE_CLOEXEC: u32 = libc::O_CLOEXEC as u32;
    pub(crate) const AT_RECURSIVE: u32 = 0x8000;
    pub(crate) const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;
    pub(crate) const FSOPEN_CLOEXEC: u32 = 1;
    pub(crate) const FSCONFIG_SET_STRING: u32 = 1;
    pub(crate) const FSCONFIG_CMD_CREATE: u32 = 6;
    pub(crate) const FSMOUNT_CLOEXEC: u32 = 1;
    pub(crate) const MOUNT_ATTR_RDONLY: u64 = 0x1;
    pub(crate) const MOUNT_ATTR_NOSUID: u64 = 0x2;
    pub(crate) const MOUNT_ATTR_NODEV: u64 = 0x4;
    pub(crate) const MOUNT_ATTR_NOEXEC: u64 = 0x8;
    pub(crate) const PR_SET_KEEPCAPS: c_int = 8;
    pub(crate) const PR_CAPBSET_DROP: c_int = 24;
    pub(crate) const PR_SET_NO_NEW_PRIVS: c_int = 38;
    pub(crate) const PR_CAP_AMBIENT: c_int = 47;
    pub(crate) const PR_CAP_AMBIENT_RAISE: c_int = 2;
    pub(crate) const CAP_V3: u32 = 0x2008_0522;
    pub(crate) const SECCOMP_SET_MODE_FILTER: c_uint = 1;
    pub(crate) const SIOCGIFFLAGS: c_ulong = 0x8913;
    pub(crate) const SIOCSIFFLAGS: c_ulong = 0x8914;
}

/// `struct mount_attr`, version 0.
#[repr(C)]
struct MountAttr {
    set: u64,
    clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `struct ifreq` with its flags member.
#[repr(C)]
struct IfReqFlags {
    name: [u8; 16],
    flags: i16,
    _pad: [u8; 22],
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const seccompiler::sock_filter,
}

/// What the parent tells the child at each spawn: whether it was born in
/// its cgroup. Lives in the parent's context, shared with the child.
#[derive(Debug)]
pub(crate) struct Scratch {
    /// The child was created in its cgroup (`CLONE_INTO_CGROUP`), so
    /// [`Op::JoinCgroup`] has nothing to do.
    pub(crate) joined: AtomicBool,
    /// Bit `i`: step `i` was skipped as denied ([`OnError::SkipDenied`]).
    pub(crate) denied: AtomicU64,
}

impl Scratch {
    pub(crate) fn new() -> Scratch {
        Scratch {
            joined: AtomicBool::new(false),
            denied: AtomicU64::new(0),
        }
    }
}

/// The errno of the last failed call.
fn errno() -> c_int {
    nix::errno::Errno::last_raw()
}

/// `r` as a result: `Err(errno)` when negative.
fn check(r: libc::c_long) -> Result<libc::c_long, c_int> {
    if r < 0 {
        Err(errno())
    } else {
        Ok(r)
    }
}

/// Runs `steps[range]`; on the first failure that is not skipped, its
/// index (in `steps`) and `errno`.
///
/// # Safety
///
/// Only in the spawned child: it changes the calling process's namespaces,
/// mounts, limits and credentials.
pub(crate) unsafe fn run(
    steps: &[Step],
    range: std::ops::Range<usize>,
    scratch: &Scratch,
) -> Result<(), (usize, c_int)> {
    let Some(part) = steps.get(range.clone()) else {
        return Ok(());
    };
    for (i, step) in range.zip(part) {
        match apply(&step.op, steps, scratch) {
            Ok(()) => {}
            Err(libc::ENOENT) if step.on_error == OnError::SkipMissing => {}
            Err(libc::EPERM | libc::EACCES) if step.on_error == OnError::SkipDenied => {
                if i < 64 {
                    scratch.denied.fetch_or(1u64 << i, Ordering::Relaxed);
                }
            }
            Err(e) => return Err((i, e)),
        }
    }
    Ok(())
}

unsafe fn apply(op: &Op, steps: &[Step], scratch: &Scratch) -> Result<(), c_int> {
    match op {
        Op::MakeDir {
            parents,
            path,
            mode,
            owner,
            ..
        } => super::dirs::make_dir(parents, path, *mode, *owner),
        Op::OpenOutput {
            path,
            flags,
            stdout,
            stderr,
        } => super::dirs::open_output(path, *flags, *stdout, *stderr),
        Op::OpenInput {
            path,
            stdout,
            stderr,
        } => super::terminal::open_input(path, *stdout, *stderr),
        Op::OpenTty {
            path,
            mode,
            prepare,
            targets,
        } => super::terminal::open_tty(path, *mode, *prepare, *targets),
        Op::CredentialsBegin { base, fd, total } => super::credentials::begin(base, fd, total),
        Op::Credential {
            begin,
            id,
            sources,
            fallback,
            required,
            owner,
        } => {
            let mnt = super::credentials::mount_of(steps, *begin).ok_or(libc::EBADF)?;
            super::credentials::write(mnt, id, sources, fallback.as_deref(), *required, *owner)
        }
        Op::CredentialsEnd { begin, dir, owner } => {
            let (mnt, _) = super::credentials::mount_of(steps, *begin).ok_or(libc::EBADF)?;
            let r = super::credentials::finish(mnt, dir, *owner);
            if let Some(Op::CredentialsBegin { fd, .. }) = steps.get(*begin).map(|s| &s.op) {
                fd.store(-1, Ordering::Relaxed);
            }
            libc::close(mnt);
            r
        }
        Op::JoinCgroup(_) if scratch.joined.load(Ordering::Relaxed) => Ok(()),
        Op::JoinCgroup(path) => write_file(path, b"0"),
        Op::OomScoreAdj(text) => write_file(c"/proc/self/oom_score_adj", text),
        Op::Nice(n) => check(libc::setpriority(libc::PRIO_PROCESS, 0, *n).into()).map(drop),
        Op::Scheduler { policy, priority } => {
            // SAFETY: all-zero is a valid sched_param (musl's has more
            // fields than glibc's).
            let mut param: libc::sched_param = unsafe { std::mem::zeroed() };
            param.sched_priority = *priority;
            // The system call itself: musl's wrapper always fails with
            // ENOSYS (Linux's per-thread policies are not POSIX's).
            check(libc::syscall(
                libc::SYS_sched_setscheduler,
                0,
                *policy,
                std::ptr::from_ref(&param),
            ))
            .map(drop)
        }
        Op::IoPrio(value) => {
            // IOPRIO_WHO_PROCESS; libc has no wrapper.
            check(libc::syscall(libc::SYS_ioprio_set, 1, 0, *value)).map(drop)
        }
        Op::Rlimit {
            resource,
            soft,
            hard,
        } => {
            let lim = [*soft, *hard];
            check(libc::syscall(
                libc::SYS_prlimit64,
                0,
                *resource,
                lim.as_ptr(),
                std::ptr::null_mut::<u64>(),
            ))
            .map(drop)
        }
        Op::Unshare(flags) => check(libc::syscall(libc::SYS_unshare, *flags)).map(drop),
        Op::PrivateUsers { uid_map, gid_map } => super::userns::enter(uid_map, gid_map),
        Op::LoopbackUp => loopback_up(),
        Op::MakeSlave => mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_SLAVE,
            std::ptr::null(),
        ),
        Op::Snapshot { source, fd } => {
            // Unset first: a number left by an earlier child means nothing.
            fd.store(-1, Ordering::Relaxed);
            let flags = k::OPEN_TREE_CLONE | k::OPEN_TREE_CLOEXEC | k::AT_RECURSIVE;
            let t = open_tree(libc::AT_FDCWD, source.as_ptr(), flags)?;
            fd.store(t, Ordering::Relaxed);
            Ok(())
        }
        Op::Restore { snapshot, target } => {
            let fd = match steps.get(*snapshot).map(|s| &s.op) {
                Some(Op::Snapshot { fd, .. }) => fd.swap(-1, Ordering::Relaxed),
                _ => return Err(libc::EINVAL),
            };
            if fd < 0 {
                // Its source was missing, and allowed to be.
                return Ok(());
            }
            let r = move_mount(fd, c"".as_ptr(), libc::AT_FDCWD, target.as_ptr());
            libc::close(fd);
            r
        }
        Op::ReadOnly(path) => {
            if path.to_bytes() != b"/" {
                bind_self(path)?;
            }
            set_attr(
                libc::AT_FDCWD,
                path.as_ptr(),
                k::AT_RECURSIVE,
                k::MOUNT_ATTR_RDONLY,
            )
        }
        Op::Exec { path, noexec } => {
            if path.to_bytes() != b"/" {
                bind_self(path)?;
            }
            let (set, clr) = if *noexec {
                (k::MOUNT_ATTR_NOEXEC, 0)
            } else {
                (0, k::MOUNT_ATTR_NOEXEC)
            };
            change_attr(libc::AT_FDCWD, path.as_ptr(), k::AT_RECURSIVE, set, clr)
        }
        Op::Inaccessible { path, file } => inaccessible(path, file),
        Op::EmptyTmpfs { path, options } => mount(
            c"tmpfs".as_ptr(),
            path.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_STRICTATIME,
            options.as_ptr().cast(),
        ),
        Op::PrivateDev { dirs } => super::private_dev::private_dev(dirs, steps),
        Op::Proc { path, options } => mount(
            c"proc".as_ptr(),
            path.as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            options.as_ptr().cast(),
        ),
        Op::Umask(m) => {
            libc::umask(*m);
            Ok(())
        }
        Op::DefaultSigpipe => {
            if libc::signal(libc::SIGPIPE, libc::SIG_DFL) == libc::SIG_ERR {
                return Err(errno());
            }
            Ok(())
        }
        Op::DropBounding { keep, last } => {
            for cap in 0..=*last {
                let kept = cap < 64 && keep & (1u64 << cap) != 0;
                if !kept
                    && prctl(k::PR_CAPBSET_DROP, c_ulong::from(cap)) < 0
                    && errno() != libc::EINVAL
                {
                    return Err(errno());
                }
            }
            Ok(())
        }
        Op::KeepCaps => check(prctl(k::PR_SET_KEEPCAPS, 1).into()).map(drop),
        Op::Ambient { caps, non_root } => ambient(*caps, *non_root),
        Op::NoNewPrivs => check(prctl(k::PR_SET_NO_NEW_PRIVS, 1).into()).map(drop),
        Op::Seccomp(prog) => {
            let fprog = SockFprog {
                len: u16::try_from(prog.len()).map_err(|_| libc::E2BIG)?,
                filter: prog.as_ptr(),
            };
            check(libc::syscall(
                libc::SYS_seccomp,
                k::SECCOMP_SET_MODE_FILTER,
                0 as c_uint,
                std::ptr::addr_of!(fprog),
            ))
            .map(drop)
        }
    }
}

/// `prctl(option, arg, 0, 0, 0)`, every argument a full `unsigned long`
/// as the kernel reads them.
unsafe fn prctl(option: c_int, arg: c_ulong) -> c_int {
    libc::prctl(option, arg, 0 as c_ulong, 0 as c_ulong, 0 as c_ulong)
}

unsafe fn write_file(path: &CStr, data: &[u8]) -> Result<(), c_int> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(errno());
    }
    let n = libc::write(fd, data.as_ptr().cast(), data.len());
    let e = errno();
    libc::close(fd);
    if n < 0 {
        Err(e)
    } else {
        Ok(())
    }
}

unsafe fn mount(
    src: *const c_char,
    target: *const c_char,
    fstype: *const c_char,
    flags: c_ulong,
    data: *const c_void,
) -> Result<(), c_int> {
    check(libc::syscall(
        libc::SYS_mount,
        src,
        target,
        fstype,
        flags,
        data,
    ))
    .map(drop)
}

unsafe fn bind_self(path: &CStr) -> Result<(), c_int> {
    mount(
        path.as_ptr(),
        path.as_ptr(),
        std::ptr::null(),
        libc::MS_BIND | libc::MS_REC,
        std::ptr::null(),
    )
}

unsafe fn set_attr(dfd: c_int, path: *const c_char, flags: u32, set: u64) -> Result<(), c_int> {
    change_attr(dfd, path, flags, set, 0)
}

unsafe fn change_attr(
    dfd: c_int,
    path: *const c_char,
    flags: u32,
    set: u64,
    clr: u64,
) -> Result<(), c_int> {
    let attr = MountAttr {
        set,
        clr,
        propagation: 0,
        userns_fd: 0,
    };
    check(libc::syscall(
        libc::SYS_mount_setattr,
        dfd,
        path,
        flags,
        std::ptr::addr_of!(attr),
        std::mem::size_of::<MountAttr>(),
    ))
    .map(drop)
}

pub(crate) unsafe fn open_tree(
    dfd: c_int,
    path: *const c_char,
    flags: u32,
) -> Result<c_int, c_int> {
    check(libc::syscall(libc::SYS_open_tree, dfd, path, flags)).map(|fd| fd as c_int)
}

/// Attaches the detached tree `fd` at `to_path` (relative to `to_dfd`).
pub(crate) unsafe fn move_mount(
    fd: c_int,
    empty: *const c_char,
    to_dfd: c_int,
    to_path: *const c_char,
) -> Result<(), c_int> {
    check(libc::syscall(
        libc::SYS_move_mount,
        fd,
        empty,
        to_dfd,
        to_path,
        k::MOVE_MOUNT_F_EMPTY_PATH,
    ))
    .map(drop)
}

/// `MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC`.
pub(crate) const MOUNT_ATTR_NOSUID_NODEV_NOEXEC: u64 =
    k::MOUNT_ATTR_NOSUID | k::MOUNT_ATTR_NODEV | k::MOUNT_ATTR_NOEXEC;

/// `MOUNT_ATTR_RDONLY`.
pub(crate) const MOUNT_ATTR_RDONLY: u64 = k::MOUNT_ATTR_RDONLY;

/// Sets `attrs` on the mount `fd` itself (a detached one too).
pub(crate) unsafe fn set_empty_path_attr(fd: c_int, attrs: u64) -> Result<(), c_int> {
    set_attr(fd, c"".as_ptr(), libc::AT_EMPTY_PATH as u32, attrs)
}

/// Attaches the detached tree `fd` at `path`.
pub(crate) unsafe fn attach(fd: c_int, path: &CStr) -> Result<(), c_int> {
    move_mount(fd, c"".as_ptr(), libc::AT_FDCWD, path.as_ptr())
}

/// A new detached tmpfs of mode `mode` with the mount attributes `attrs`,
/// as a mount descriptor.
pub(crate) unsafe fn detached_tmpfs(mode: &CStr, attrs: u64) -> Result<c_int, c_int> {
    let fs = check(libc::syscall(
        libc::SYS_fsopen,
        c"tmpfs".as_ptr(),
        k::FSOPEN_CLOEXEC,
    ))? as c_int;
    let r = check(libc::syscall(
        libc::SYS_fsconfig,
        fs,
        k::FSCONFIG_SET_STRING,
        c"mode".as_ptr(),
        mode.as_ptr(),
        0,
    ))
    .and_then(|_| {
        check(libc::syscall(
            libc::SYS_fsconfig,
            fs,
            k::FSCONFIG_CMD_CREATE,
            std::ptr::null::<c_char>(),
            std::ptr::null::<c_char>(),
            0,
        ))
    })
    .and_then(|_| {
        check(libc::syscall(
            libc::SYS_fsmount,
            fs,
            k::FSMOUNT_CLOEXEC,
            attrs,
        ))
    });
    libc::close(fs);
    r.map(|fd| fd as c_int)
}

/// Covers `path`: a directory with an empty tmpfs, anything else with a
/// bind of `file`, the init's empty mode-000 file.
unsafe fn inaccessible(path: &CStr, file: &CStr) -> Result<(), c_int> {
    let mut st: libc::stat = std::mem::zeroed();
    if libc::stat(path.as_ptr(), &mut st) < 0 {
        return Err(errno());
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFDIR {
        return mount(
            c"tmpfs".as_ptr(),
            path.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            c"mode=000".as_ptr().cast(),
        );
    }
    mount(
        file.as_ptr(),
        path.as_ptr(),
        std::ptr::null(),
        libc::MS_BIND,
        std::ptr::null(),
    )?;
    let ro =
        k::MOUNT_ATTR_RDONLY | k::MOUNT_ATTR_NOSUID | k::MOUNT_ATTR_NODEV | k::MOUNT_ATTR_NOEXEC;
    set_attr(libc::AT_FDCWD, path.as_ptr(), 0, ro)
}

unsafe fn loopback_up() -> Result<(), c_int> {
    let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if s < 0 {
        return Err(errno());
    }
    let mut req = IfReqFlags {
        name: [0; 16],
        flags: 0,
        _pad: [0; 22],
    };
    req.name[0] = b'l';
    req.name[1] = b'o';
    let mut r = check(libc::ioctl(s, k::SIOCGIFFLAGS as _, std::ptr::addr_of_mut!(req)).into());
    if r.is_ok() {
        req.flags |= (libc::IFF_UP | libc::IFF_RUNNING) as i16;
        r = check(libc::ioctl(s, k::SIOCSIFFLAGS as _, std::ptr::addr_of_mut!(req)).into());
    }
    libc::close(s);
    r.map(drop)
}

unsafe fn ambient(caps: u64, non_root: bool) -> Result<(), c_int> {
    let mut hdr = CapHeader {
        version: k::CAP_V3,
        pid: 0,
    };
    let mut data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    check(libc::syscall(
        libc::SYS_capget,
        std::ptr::addr_of_mut!(hdr),
        data.as_mut_ptr(),
    ))?;
    for (i, d) in data.iter_mut().enumerate() {
        let want = (caps >> (32 * i)) as u32;
        d.inheritable |= want;
        if non_root {
            // Only the ambient capabilities remain (the permitted set was
            // kept across the identity change for this).
            d.permitted &= want;
            d.effective = d.permitted;
            d.inheritable = want;
        }
    }
    check(libc::syscall(
        libc::SYS_capset,
        std::ptr::addr_of_mut!(hdr),
        data.as_ptr(),
    ))?;
    for cap in (0..64u32).filter(|c| caps & (1u64 << c) != 0) {
        if libc::prctl(
            k::PR_CAP_AMBIENT,
            k::PR_CAP_AMBIENT_RAISE as c_ulong,
            c_ulong::from(cap),
            0 as c_ulong,
            0 as c_ulong,
        ) < 0
        {
            return Err(errno());
        }
    }
    Ok(())
}
