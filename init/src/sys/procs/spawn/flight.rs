//! A child in flight: `clone3(CLONE_VM)` without `CLONE_VFORK`, for the
//! spawns with nothing to do between the clone and `execve` but the basics
//! (no context step once born in the cgroup, no journal stream, no handed
//! sockets): the parent goes on at once, and neither copies its page
//! tables (as a fork does, then faulting on every page it writes while
//! the child has not exec'd) nor waits for the child (as a `CLONE_VFORK`
//! child makes it).
//!
//! # What the child touches, and for how long
//!
//! The child runs in the init's memory beside it, so it touches only what
//! the parent set aside for it and leaves alone until the child is done:
//! the [`Flight`], one allocation owning the plan, the program's path,
//! argv, envp, the directory, the groups, and the child's own stack. The
//! [`ExecWatch`] owns the flight, and lets it go only once the child has
//! left the init's memory: the flight holds a word the kernel clears (and
//! wakes as a futex) when the child releases that memory, at its `execve`
//! (`exec_mmap`, before the new program runs and before close-on-exec
//! descriptors are closed) or its exit (`exit_mm`, before the
//! descriptors): `CLONE_CHILD_CLEARTID`. The report pipe cannot say when:
//! its end of file comes only once every copy of the write end is closed,
//! and another child that copied the table (or this child's lane, below)
//! may hold one a little longer. The watch reads the word before the
//! pipe, so that a cleared word means the whole report is in the pipe.
//! Dropping a watch whose child has not landed waits on the word.
//!
//! # The descriptor table
//!
//! A child that finds a free lane (`lanes.rs`) shares the init's table
//! too (`CLONE_FILES`), and its first call unshares it keeping only what
//! lies below its lane: the init's table is not copied, whatever it holds.
//! Its streams and its report's write end are in the lane, which the
//! parent leaves alone until the child's first message (written once its
//! table is its own) or its end; the lane's report slot is the parent's
//! last reference to the write end until then. With no lane free, the
//! child gets a copy of the table (`CLONE_FILES` not set: O(descriptors
//! held)), its streams in the spawner's slots, its report's write end the
//! pipe's own (the parent closes its end at once), and closes what it
//! does not keep.
//!
//! The child shares the parent's thread-local storage too, `errno`
//! included, which the parent is using meanwhile: it makes **raw system
//! calls** only (inline `syscall`, x86_64), never a C library function,
//! and keeps every value in its own stack frame. It writes nothing shared:
//! the report goes through the pipe, as `watch.rs` reads it.

use std::ffi::{c_char, c_int, c_long, c_uint, c_void, CString};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

use super::child::{Step, KERNEL_SIGSET_SIZE};
use super::clone3::{self, NotHere};
use super::stack::{Stack, STACK_SIZE};
use super::{lanes, open_dir, slots, CStrArray, ExecWatch, Failure, Spawner, SPAWNER};
use super::{ChildContext, Errno, Os, Pid, SpawnRequest, SysError};

/// Whether `req` can be flown: nothing for the child to do but the basics.
pub(super) fn eligible(req: &SpawnRequest<'_>) -> bool {
    cfg!(target_arch = "x86_64")
        && req.listen_fds.is_empty()
        && req.journal.is_none()
        && req.context.is_none_or(ChildContext::only_joins_cgroup)
}

/// What the child reads, all of it owned by its [`Flight`].
struct Plan {
    path: *const c_char,
    argv: *const *mut c_char,
    envp: *const *mut c_char,
    /// NULL: no `chdir`.
    cwd: *const c_char,
    cwd_optional: bool,
    /// `SpawnRequest::foreground`.
    foreground: bool,
    /// The slot to `dup2` onto 0, 1, 2, or -1 to inherit.
    stdio: [RawFd; 3],
    /// K: the child keeps the descriptors below it until its streams are
    /// in place. With `share`, what it keeps as it unshares
    /// (`lanes::keep_below`).
    limit: c_uint,
    /// The signals to set back to `SIG_DFL` (`Spawner::altered`).
    reset: u64,
    /// The child shares the init's table (`CLONE_FILES`) and unshares it
    /// first, keeping what lies below `limit`: its lane (`lanes.rs`).
    share: bool,
    /// `close_range(2)` may be used to unshare (else `unshare(2)`: a copy
    /// of the whole table).
    ranged: bool,
    /// The write end of the report pipe (its number in the child's copy of
    /// the table).
    report: c_int,
    groups: Option<(*const libc::gid_t, usize)>,
    gid: Option<libc::gid_t>,
    uid: Option<libc::uid_t>,
}

/// What a spawn prepared and the child reads until it has exec'd.
pub(super) struct Owned {
    pub(super) path: CString,
    pub(super) argv: CStrArray,
    pub(super) envp: CStrArray,
    pub(super) cwd: Option<CString>,
}

/// A child's memory: its plan, what the plan points to, its stack. Boxed,
/// so that it stays where the child sees it while the watch moves.
pub struct Flight {
    plan: Plan,
    owned: Owned,
    groups: Option<Vec<libc::gid_t>>,
    stack: Pooled,
    /// 1 from before the clone; the kernel writes 0 (and wakes its futex)
    /// once the child has left the init's memory, at its `execve` or its
    /// exit (`CLONE_CHILD_CLEARTID`). Nothing else holds this word, as any
    /// process may hold a copy of the report's write end.
    aboard: AtomicU32,
}

// SAFETY: the raw pointers of the plan point into `owned` and `groups`,
// which move with it (their buffers are on the heap, and never touched
// by the parent while the child runs).
unsafe impl Send for Flight {}

impl std::fmt::Debug for Flight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Flight")
    }
}

/// A child's stack, back in the pool when dropped.
struct Pooled(Option<Stack>);

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(stack) = self.0.take() {
            let mut pool = STACKS.lock().unwrap_or_else(PoisonError::into_inner);
            if pool.len() < POOL {
                pool.push(stack);
            }
        }
    }
}

/// The stacks kept for the next flights: a layer of units in flight at
/// once needs as many, and a stack made and unmapped per spawn cost the
/// init a tenth of its time over a launch (the unmapping flushes the TLB of
/// every core a child in flight runs on). Each kept stack costs the pages
/// its children touched: [`trim_stacks`] gives them back when the loop has
/// settled.
const POOL: usize = 128;
/// What [`trim_stacks`] keeps.
const KEPT: usize = 4;
static STACKS: Mutex<Vec<Stack>> = Mutex::new(Vec::new());

/// Unmaps the pooled stacks beyond a few.
pub(crate) fn trim_stacks() {
    let extra = {
        let mut pool = STACKS.lock().unwrap_or_else(PoisonError::into_inner);
        let keep = pool.len().min(KEPT);
        pool.split_off(keep)
    };
    drop(extra);
}

fn take_stack() -> Result<Stack, Errno> {
    let pooled = STACKS.lock().unwrap_or_else(PoisonError::into_inner).pop();
    match pooled {
        Some(s) => Ok(s),
        None => Stack::new(),
    }
}

/// A spawn's result: the child and its watch, or the error.
pub(super) type Started = Result<(Pid, Option<ExecWatch>), SysError>;

/// Starts `req`'s child in flight. `Err(owned)`: it cannot be here after
/// all (no `clone3`, or the cgroup cannot be opened): spawn it another
/// way with what is handed back.
pub(super) fn fly(
    owned: Owned,
    req: &SpawnRequest<'_>,
    program: &str,
) -> Result<Started, Box<Owned>> {
    let error = |errno| SysError::Spawn {
        program: program.to_owned(),
        errno: Os(errno),
    };
    let cgroup = match req.context.and_then(ChildContext::cgroup_dir) {
        Some(dir) => match open_dir(dir) {
            Some(fd) => Some(fd),
            // The child would have to join it itself.
            None => return Err(Box::new(owned)),
        },
        None => None,
    };
    let (read, write) =
        match nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK) {
            Ok(p) => p,
            Err(errno) => return Ok(Err(error(errno))),
        };
    let stack = match take_stack() {
        Ok(s) => s,
        Err(errno) => return Ok(Err(error(errno))),
    };
    let creds = req.credentials;
    let groups = creds.and_then(|c| c.groups.clone());
    let mut flight = Box::new(Flight {
        plan: Plan {
            path: owned.path.as_ptr(),
            argv: owned.argv.as_ptr(),
            envp: owned.envp.as_ptr(),
            cwd: owned
                .cwd
                .as_deref()
                .map_or(std::ptr::null(), |c| c.as_ptr()),
            cwd_optional: req.cwd_optional,
            foreground: req.foreground,
            stdio: [-1; 3],
            limit: 0,
            reset: 0,
            share: false,
            ranged: super::close_range_allowed(),
            report: write.as_raw_fd(),
            groups: None,
            gid: creds.and_then(|c| c.gid),
            uid: creds.and_then(|c| c.uid),
        },
        groups,
        owned,
        stack: Pooled(Some(stack)),
        aboard: AtomicU32::new(1),
    });
    flight.plan.groups = flight.groups.as_deref().map(|g| (g.as_ptr(), g.len()));
    let mut spawner = SPAWNER.lock().unwrap_or_else(PoisonError::into_inner);
    if spawner.is_none() {
        match Spawner::new() {
            Ok(s) => *spawner = Some(s),
            Err(errno) => return Ok(Err(error(errno))),
        }
    }
    let Some(s) = spawner.as_mut() else {
        return Ok(Err(error(Errno::EAGAIN)));
    };
    let stdio = [req.stdin, req.stdout, req.stderr];
    if stdio.iter().any(|x| matches!(x, super::Stdio::Null)) {
        if let Err(errno) = s.open_null() {
            let f = Failure::Child(Step::OpenNull, errno);
            return Ok(Err(f.into_error(program, req.cwd, req.context)));
        }
    }
    // The lowest free lane: the child shares the table and copies only
    // what lies below the lane (`lanes.rs`); with none free, it copies
    // the table, its streams in the spawner's slots.
    let null = s.null.as_ref().map(AsRawFd::as_raw_fd);
    let laned = matches!(req.stdin, super::Stdio::Null | super::Stdio::Inherit);
    let taken = match laned {
        true => s.lanes.take(),
        false => None,
    };
    let (lane, filled) = match taken {
        Some((i, lane)) => {
            let [out, err] = &mut lane.slots;
            let slots = [None, Some(out), Some(err)];
            let filled = slots::fill_slots(slots, null, &stdio).and_then(|fds| {
                let slot = lane.report.fd.as_raw_fd();
                // SAFETY: dup3(2) onto a descriptor the spawner owns, from
                // the report's write end, open.
                if unsafe { libc::dup3(write.as_raw_fd(), slot, libc::O_CLOEXEC) } < 0 {
                    return Err(Failure::Child(Step::Report, Errno::last()));
                }
                lane.report.holds = slots::Holds::Handed;
                Ok((fds, slot, lanes::keep_below(fds, slot), true))
            });
            (Some(i), filled)
        }
        None => {
            let filled = s.fill_slots(&stdio);
            (
                None,
                filled.map(|fds| (fds, write.as_raw_fd(), s.limit, false)),
            )
        }
    };
    let born = filled.map(|(fds, report, limit, share)| {
        flight.plan.stdio = fds;
        flight.plan.limit = limit;
        flight.plan.report = report;
        flight.plan.share = share;
        let flags = match share {
            true => libc::CLONE_VM | libc::CLONE_FILES | libc::SIGCHLD,
            false => libc::CLONE_VM | libc::SIGCHLD,
        };
        flight.plan.reset = s.altered;
        let plan: *mut c_void = std::ptr::addr_of!(flight.plan).cast_mut().cast();
        let (bottom, size) = match &flight.stack.0 {
            Some(st) => (
                st.top.cast::<u8>().wrapping_sub(STACK_SIZE).cast(),
                STACK_SIZE,
            ),
            None => (std::ptr::null_mut(), 0),
        };
        let all = [u64::MAX; 2];
        let mut old = [0u64; 2];
        // SAFETY: the masks are valid for KERNEL_SIGSET_SIZE bytes; the
        // stack is the flight's alone; the plan and all it points to live
        // in the flight, which the watch keeps until the child is done
        // with it (the module documentation); `flight_entry` never returns
        // and makes raw system calls only. A child sharing the table finds
        // its lane as it was until the watch gives the lane back, after
        // the child's first message.
        unsafe {
            super::sigprocmask(libc::SIG_SETMASK, all.as_ptr(), old.as_mut_ptr());
            let r = clone3::clone_into(
                flags,
                cgroup.as_ref().map(AsRawFd::as_raw_fd),
                Some(&flight.aboard),
                bottom,
                size,
                flight_entry,
                plan,
            );
            super::sigprocmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut());
            r
        }
    });
    s.restore();
    // No child shares the lane: it is free again at once.
    let lane = match (lane, &born) {
        (Some(i), Ok(Ok(_))) => Some(i),
        (Some(i), _) => {
            s.lanes.give_back(i, s.placeholder.as_raw_fd());
            None
        }
        (None, _) => None,
    };
    drop(spawner);
    // The child has its own copy of the table, or the lane's copy of the
    // write end: end of file at its exec (once the lane is given back).
    drop(write);
    match born {
        Ok(Ok(pid)) => Ok(Ok((
            pid,
            Some(
                ExecWatch::new(read, pid, program, req.cwd)
                    .flying(flight)
                    .in_lane(lane),
            ),
        ))),
        Ok(Err(NotHere::Unsupported)) => {
            super::CLONE3.store(false, std::sync::atomic::Ordering::Relaxed);
            let Flight { owned, .. } = *flight;
            Err(Box::new(owned))
        }
        Ok(Err(NotHere::Failed(e))) => Ok(Err(error(Errno::from_raw(e)))),
        Err(f) => Ok(Err(f.into_error(program, req.cwd, req.context))),
    }
}

impl Flight {
    /// Whether the child has left the init's memory (exec'd or exited):
    /// all it wrote to its report is in the pipe then, and the flight may
    /// go. Read before the pipe.
    pub(super) fn landed(&self) -> bool {
        self.aboard.load(Ordering::Acquire) == 0
    }

    /// Sleeps until the child has left the init's memory (at most until
    /// its `execve` or exit), or a signal comes.
    pub(super) fn wait_landed(&self) {
        // SAFETY: futex(2) FUTEX_WAIT on a word of ours, no timeout: it
        // returns at once if the word is no longer 1. Shared (not
        // FUTEX_PRIVATE_FLAG), as the kernel's wake at the child's
        // release of the memory is.
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.aboard.as_ptr(),
                libc::FUTEX_WAIT,
                1u32,
                std::ptr::null::<libc::timespec>(),
            );
        }
    }
}

extern "C" fn flight_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the flight's plan, alive until the child has exec'd
    // or exited (the module documentation).
    unsafe { child(&*arg.cast::<Plan>()) }
}

/// One raw system call: `-errno` on failure, `errno` untouched.
#[cfg(target_arch = "x86_64")]
unsafe fn sys(nr: c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
    let ret: isize;
    std::arch::asm!(
        "syscall",
        inlateout("rax") nr as isize => ret,
        in("rdi") a,
        in("rsi") b,
        in("rdx") c,
        in("r10") d,
        lateout("rcx") _,
        lateout("r11") _,
        options(nostack),
    );
    ret
}

/// Never called: [`eligible`] is false elsewhere.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn sys(_nr: c_long, _a: usize, _b: usize, _c: usize, _d: usize) -> isize {
    -(libc::ENOSYS as isize)
}

/// Ends the child: `exit(2)` itself (this task only).
unsafe fn exit(code: c_int) -> ! {
    loop {
        sys(libc::SYS_exit, code as usize, 0, 0, 0);
    }
}

/// Writes `kind` and `body` to the report (`watch.rs` reads it).
unsafe fn send(report: c_int, kind: u8, body: [u8; 8]) {
    let [a, b, c, d, e, f, g, h] = body;
    let msg = [kind, a, b, c, d, e, f, g, h];
    sys(
        libc::SYS_write,
        report as usize,
        msg.as_ptr() as usize,
        msg.len(),
        0,
    );
}

/// Reports `step` and the errno of the call that returned `ret`, and exits
/// 127.
unsafe fn fail(report: c_int, step: Step, ret: isize) -> ! {
    let [a, b, c, d] = (step as u32).to_le_bytes();
    let [e, f, g, h] = (-ret as c_int).to_le_bytes();
    send(report, b'F', [a, b, c, d, e, f, g, h]);
    exit(127)
}

/// `close_range(2)` over `[first, last]` but for `keep`.
unsafe fn close_except(first: c_uint, last: c_uint, keep: c_uint) {
    let range = |lo: c_uint, hi: c_uint| {
        if lo <= hi {
            sys(libc::SYS_close_range, lo as usize, hi as usize, 0, 0);
        }
    };
    if (first..=last).contains(&keep) {
        if keep > first {
            range(first, keep - 1);
        }
        if keep < last {
            range(keep + 1, last);
        }
    } else {
        range(first, last);
    }
}

/// The child: what `child.rs` does for a request without context steps,
/// handed sockets or journal, in raw system calls.
unsafe fn child(p: &Plan) -> ! {
    // Sharing the table: unshare it first, keeping the lane (whose report
    // slot no dup2 of a stream and no close of the slots reaches). Else
    // the report above K, where no dup2 of a stream and no close of the
    // slots reaches it; everything from K up but it closed (the table is
    // this child's copy). A kernel without close_range(2) leaves them to
    // close-on-exec, as `child.rs` does.
    let mut report = p.report;
    if p.share {
        // The table is still the init's: keep only what lies below the
        // highest descriptor this child reads, its lane included
        // (`lanes::keep_below`), in a table of its own. Without
        // close_range(2), a copy of the whole table.
        let r = match p.ranged {
            true => sys(
                libc::SYS_close_range,
                p.limit as usize,
                c_uint::MAX as usize,
                libc::CLOSE_RANGE_UNSHARE as usize,
                0,
            ),
            false => -(libc::ENOSYS as isize),
        };
        if r < 0 {
            let r = sys(libc::SYS_unshare, libc::CLONE_FILES as usize, 0, 0, 0);
            if r < 0 {
                fail(report, Step::Unshare, r);
            }
            close_except(p.limit, c_uint::MAX, report as c_uint);
        }
    } else {
        if (report as c_uint) < p.limit {
            let moved = sys(
                libc::SYS_fcntl,
                report as usize,
                libc::F_DUPFD_CLOEXEC as usize,
                p.limit as usize,
                0,
            );
            if moved < 0 {
                // No report: the parent reads the errno as the exit status.
                exit((-moved as c_int).clamp(1, 126));
            }
            sys(libc::SYS_close, report as usize, 0, 0, 0);
            report = moved as c_int;
        }
        close_except(p.limit, c_uint::MAX, report as c_uint);
    }
    // The streams next, and everything else below K closed at once: what
    // this child copied of other children's lanes (their reports' write
    // ends among them) is held no longer than it takes. Slots are above
    // 2: dup2 never overwrites a later source and always clears
    // close-on-exec on the target.
    for (target, src) in (0..).zip(p.stdio) {
        if src >= 0 {
            let r = sys(libc::SYS_dup2, src as usize, target as usize, 0, 0);
            if r < 0 {
                fail(report, Step::dup2(target), r);
            }
        }
    }
    close_except(3, p.limit.saturating_sub(1), report as c_uint);
    if p.foreground {
        // Signals are still blocked: the terminal's SIGTTOU for a
        // background group's TIOCSPGRP does not stop the child. No
        // terminal, or not the session's: nothing to take (ENOTTY).
        let r = sys(libc::SYS_setpgid, 0, 0, 0, 0);
        if r < 0 {
            fail(report, Step::Setpgid, r);
        }
        let pid: libc::pid_t = sys(libc::SYS_getpid, 0, 0, 0, 0) as libc::pid_t;
        sys(
            libc::SYS_ioctl,
            0,
            libc::TIOCSPGRP as usize,
            std::ptr::from_ref(&pid) as usize,
            0,
        );
    } else {
        let r = sys(libc::SYS_setsid, 0, 0, 0, 0);
        if r < 0 {
            fail(report, Step::Setsid, r);
        }
    }
    if let Some((list, len)) = p.groups {
        let r = sys(super::nr::SETGROUPS, len, list as usize, 0, 0);
        if r < 0 {
            fail(report, Step::Setgroups, r);
        }
    }
    if let Some(gid) = p.gid {
        let g = gid as usize;
        let r = sys(super::nr::SETRESGID, g, g, g, 0);
        if r < 0 {
            fail(report, Step::Setgid, r);
        }
    }
    if let Some(uid) = p.uid {
        let u = uid as usize;
        let r = sys(super::nr::SETRESUID, u, u, u, 0);
        if r < 0 {
            fail(report, Step::Setuid, r);
        }
    }
    if !p.cwd.is_null() {
        let r = sys(libc::SYS_chdir, p.cwd as usize, 0, 0, 0);
        if r < 0 && !p.cwd_optional {
            fail(report, Step::Chdir, r);
        }
    }
    // Default dispositions for those the init has other than the default,
    // SIGPIPE ignored (as `child.rs` says why), then the empty mask. Kernel
    // `struct sigaction`s: all zero is SIG_DFL, a handler of 1 SIG_IGN.
    let dfl = [0u64; 4];
    for sig in (1..=64usize).filter(|s| p.reset & (1 << (s - 1)) != 0) {
        sys(
            libc::SYS_rt_sigaction,
            sig,
            dfl.as_ptr() as usize,
            0,
            KERNEL_SIGSET_SIZE,
        );
    }
    let ign = [1u64, 0, 0, 0];
    sys(
        libc::SYS_rt_sigaction,
        libc::SIGPIPE as usize,
        ign.as_ptr() as usize,
        0,
        KERNEL_SIGSET_SIZE,
    );
    let empty = [0u64; 2];
    sys(
        libc::SYS_rt_sigprocmask,
        libc::SIG_SETMASK as usize,
        empty.as_ptr() as usize,
        0,
        KERNEL_SIGSET_SIZE,
    );
    send(report, b'E', [0; 8]);
    let r = sys(
        libc::SYS_execve,
        p.path as usize,
        p.argv as usize,
        p.envp as usize,
        0,
    );
    fail(report, Step::Execve, r)
}
