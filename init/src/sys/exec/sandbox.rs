//! The steps a spawned child takes to enter its service's context, and
//! how it takes each with raw system calls.
//!
//! [`crate::sys::context::prepare`] turns a unit's context into a list of
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
//! read-only parent and how a private `/tmp` and the paths of `BindPaths=`
//! are bound (a missing mount point made first); [`Op::ReadOnly`]
//! binds a path onto itself and sets `MOUNT_ATTR_RDONLY` on it and
//! everything below in one `mount_setattr(AT_RECURSIVE)`;
//! [`Op::Inaccessible`] covers a directory with an empty read-only tmpfs of
//! mode 000 and anything else with a bind of the init's empty mode-000
//! file (`/run/flotilla/inaccessible/file`, as systemd's
//! `/run/systemd/inaccessible/reg`); [`Op::PrivateDev`] copies the basic
//! device nodes, attaches a new tmpfs over `/dev` and puts the copies and
//! the host's `pts`, `shm` and `mqueue` in it. Nothing is ever mounted onto,
//! or copied out of, a detached tree: kernels before 6.15 refuse both.

use std::ffi::{c_int, c_uint, c_ulong, CStr};
use std::sync::atomic::Ordering;

use crate::sys::kernel::{check, errno, k, CapData, CapHeader, IfReqFlags, SockFprog};
use crate::sys::mount_api::{
    attach_tree, bind_self, change_attr, clone_tree, inaccessible, mount, set_attr,
};
use crate::sys::steps::{OnError, Op, Scratch, Step};

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
            Err(_) if step.on_error == OnError::Ignore => {}
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
            link,
            private_copy,
            ..
        } => crate::sys::dirs::make_dir(
            parents,
            path,
            (*mode, *owner),
            link.as_ref(),
            private_copy.as_deref(),
        ),
        Op::MakeLink { link, .. } => crate::sys::dirs::make_link(link),
        Op::OpenOutput {
            path,
            flags,
            stdout,
            stderr,
        } => crate::sys::dirs::open_output(path, *flags, *stdout, *stderr),
        Op::OpenInput {
            path,
            stdout,
            stderr,
        } => crate::sys::terminal::open_input(path, *stdout, *stderr),
        Op::OpenTty {
            path,
            mode,
            prepare,
            targets,
        } => crate::sys::terminal::open_tty(path, *mode, *prepare, *targets),
        Op::CredentialsBegin {
            base,
            plain,
            fd,
            total,
        } => crate::sys::credentials::begin(base, plain.as_deref(), fd, total),
        Op::Credential {
            begin,
            id,
            sources,
            fallback,
            required,
            owner,
        } => {
            let mnt = crate::sys::credentials::mount_of(steps, *begin).ok_or(libc::EBADF)?;
            crate::sys::credentials::write(mnt, id, sources, fallback.as_deref(), *required, *owner)
        }
        Op::ImportCredentials {
            begin,
            import,
            dirs,
            owner,
        } => {
            let mnt = crate::sys::credentials::mount_of(steps, *begin).ok_or(libc::EBADF)?;
            crate::sys::credentials::import(mnt, import, dirs, *owner)
        }
        Op::CredentialsEnd { begin, dir, owner } => {
            let (mnt, _) = crate::sys::credentials::mount_of(steps, *begin).ok_or(libc::EBADF)?;
            let plain = crate::sys::credentials::is_plain(steps, *begin);
            let r = crate::sys::credentials::finish(mnt, dir, *owner, plain);
            if let Some(Op::CredentialsBegin { fd, .. }) = steps.get(*begin).map(|s| &s.op) {
                fd.store(-1, Ordering::Relaxed);
            }
            libc::close(mnt);
            r
        }
        Op::JoinCgroup(_) if scratch.joined.load(Ordering::Relaxed) => Ok(()),
        Op::JoinCgroup(path) => write_file(path, b"0"),
        Op::OomScoreAdj(text) => write_file(c"/proc/self/oom_score_adj", text),
        // The per-module file first (Linux 5.8), as libapparmor does.
        Op::AppArmorExec(request) => match write_file(c"/proc/self/attr/apparmor/exec", request) {
            Err(libc::ENOENT) => write_file(c"/proc/self/attr/exec", request),
            r => r,
        },
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
        Op::CpuAffinity(words) => crate::sys::procs::placement::set_affinity(words),
        Op::MemPolicy(request) => crate::sys::procs::placement::set_mempolicy(request).map(drop),
        Op::Rlimit {
            resource,
            soft,
            hard,
        } => crate::sys::rlimits::set_closest(*resource, *soft, *hard),
        Op::Unshare(flags) => check(libc::syscall(libc::SYS_unshare, *flags)).map(drop),
        Op::PrivateUsers { uid_map, gid_map } => crate::sys::userns::enter(uid_map, gid_map),
        Op::LoopbackUp => loopback_up(),
        Op::MakeSlave => mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_SLAVE,
            std::ptr::null(),
        ),
        Op::Snapshot {
            source,
            recursive,
            fd,
        } => {
            // Unset first: a number left by an earlier child means nothing.
            fd.store(-1, Ordering::Relaxed);
            let t = clone_tree(source, *recursive)?;
            fd.store(t, Ordering::Relaxed);
            Ok(())
        }
        Op::Restore {
            snapshot,
            target,
            read_only,
            mount_point,
        } => {
            let fd = match steps.get(*snapshot).map(|s| &s.op) {
                Some(Op::Snapshot { fd, .. }) => fd.swap(-1, Ordering::Relaxed),
                _ => return Err(libc::EINVAL),
            };
            if fd < 0 {
                // Its source was missing, and allowed to be.
                return Ok(());
            }
            let r = attach_tree(fd, target, *read_only, mount_point.as_deref());
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
        Op::Tmpfs {
            path,
            flags,
            data,
            dirs,
            links,
            read_only,
        } => {
            if dirs.is_empty() && links.is_empty() {
                let ro = if *read_only { libc::MS_RDONLY } else { 0 };
                return mount(
                    c"tmpfs".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    flags | ro,
                    data.as_ptr().cast(),
                );
            }
            // Writable until its mount points and links are made, then
            // read-only (this mount alone: nothing is below it yet).
            mount(
                c"tmpfs".as_ptr(),
                path.as_ptr(),
                c"tmpfs".as_ptr(),
                *flags,
                data.as_ptr().cast(),
            )?;
            for d in dirs {
                if libc::mkdir(d.as_ptr(), 0o755) < 0 && errno() != libc::EEXIST {
                    return Err(errno());
                }
            }
            for l in links {
                crate::sys::dirs::make_link(l)?;
            }
            if !*read_only {
                return Ok(());
            }
            set_attr(libc::AT_FDCWD, path.as_ptr(), 0, k::MOUNT_ATTR_RDONLY)
        }
        Op::PrivateDev { dirs } => crate::sys::private_dev::private_dev(dirs, steps),
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
