//! The spawner: what every spawn shares for the life of the process (the
//! reserved slots, `/dev/null`, the child's stack, the lanes) and the clone
//! itself, the steps 1 and 2 of the module documentation of `mod.rs`.

use std::ffi::{c_int, c_uint, c_void, CStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::Mutex;

use super::child::{self, child_entry, close_range_allowed, sigprocmask, Plan, Step};
use super::clone3::{self, NotHere};
use super::slots::{
    above_stdio, dup_above_stdio, fill_slots, open_null, restore_slots, Holds, Slot,
};
use super::stack::{Stack, STACK_SIZE};
use super::{
    lanes, CStrArray, ChildContext, Credentials, Errno, Failure, JournalStream, Pid, Stdio,
};

/// One spawn, prepared in the parent.
pub(super) struct Exec<'a> {
    pub(super) path: &'a CStr,
    pub(super) argv: &'a CStrArray,
    pub(super) envp: &'a CStrArray,
    pub(super) cwd: Option<&'a CStr>,
    pub(super) cwd_optional: bool,
    pub(super) foreground: bool,
    /// stdin, stdout, stderr.
    pub(super) stdio: [Stdio<'a>; 3],
    pub(super) credentials: Option<&'a Credentials>,
    pub(super) context: Option<&'a ChildContext>,
    /// Handed as 3, 4, ….
    pub(super) listen_fds: &'a [RawFd],
    /// Room for as many descriptors, the child's to write.
    pub(super) listen_copies: *mut c_int,
    /// The value of `LISTEN_PID` in `envp`, overwritten by the child.
    pub(super) listen_pid: Option<(*mut u8, usize)>,
    pub(super) journal: Option<&'a JournalStream>,
    /// The value of `JOURNAL_STREAM` in `envp`, written by the child.
    pub(super) journal_env: (*mut u8, usize),
}

/// Whether `clone3(2)` with `CLONE_INTO_CGROUP` works here; cleared the
/// first time the kernel says it does not.
pub(super) static CLONE3: AtomicBool = AtomicBool::new(true);

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
pub(super) static SPAWNER: Mutex<Option<Spawner>> = Mutex::new(None);

#[derive(Debug)]
pub(super) struct Spawner {
    /// For stdin, stdout and stderr: each above 2, close-on-exec.
    pub(super) slots: [Slot; 3],
    /// K: one more than the highest slot. The child keeps only the
    /// descriptors below it when it unshares the table.
    pub(super) limit: c_uint,
    /// An `O_PATH` descriptor of `/`: what a slot holds while `/dev/null`
    /// cannot be opened (PID 1 before devtmpfs is mounted).
    pub(super) placeholder: OwnedFd,
    /// `/dev/null`, read-write, once it could be opened.
    pub(super) null: Option<OwnedFd>,
    /// While `/dev/null` cannot be opened: a descriptor below every lane
    /// that it takes once it can. A child in flight keeps only what lies
    /// below its lane, and its stdin, when null, is this one.
    pub(super) null_place: Option<OwnedFd>,
    pub(super) stack: Stack,
    /// The signals whose disposition is not `SIG_DFL` in the init (bit
    /// `n - 1` for signal `n`): the only ones a child sets back before it
    /// unblocks signals, rather than all 64 (a system call each, a
    /// quarter of the child's own work before `execve`). The init never
    /// changes a disposition once it runs: these are what it inherited and
    /// what Rust set at its start (`SIGPIPE` ignored, the stack guard's
    /// `SIGSEGV` and `SIGBUS` handlers), read when the spawner is made.
    pub(super) altered: u64,
    /// For children in flight that share the table (`lanes.rs`).
    pub(super) lanes: lanes::Lanes,
}

impl Spawner {
    pub(super) fn new() -> Result<Spawner, Errno> {
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
        let lanes = lanes::Lanes::reserve(&placeholder);
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
    pub(super) fn open_null(&mut self) -> Result<(), Errno> {
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
    pub(super) fn spawn(
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
    pub(super) fn fill_slots(&mut self, stdio: &[Stdio<'_>; 3]) -> Result<[RawFd; 3], Failure> {
        let null = self.null.as_ref().map(AsRawFd::as_raw_fd);
        let [a, b, c] = &mut self.slots;
        fill_slots([Some(a), Some(b), Some(c)], null, stdio)
    }

    /// Gives every slot that holds a caller's descriptor (or the
    /// placeholder, once `/dev/null` is open) `/dev/null` back, so that the
    /// init keeps no reference to a child's pipe.
    pub(super) fn restore(&mut self) {
        let (src, holds) = self.filler();
        restore_slots(self.slots.iter_mut(), src, holds);
    }

    /// What a free slot holds: `/dev/null`, or the placeholder until it
    /// can be opened.
    pub(super) fn filler(&self) -> (RawFd, Holds) {
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
/// cannot be; the child then joins the cgroup itself). `O_PATH` is all
/// clone3(2) needs (it takes the descriptor as a path), and the cheapest
/// to open and to close; `openat(2)`, as the C library's `open(3)` may
/// follow an `O_CLOEXEC` open with an `fcntl(2)` setting it again.
pub(super) fn open_dir(dir: &CStr) -> Option<OwnedFd> {
    // SAFETY: `dir` is a C string; the descriptor returned is ours.
    let fd = unsafe {
        libc::openat(
            libc::AT_FDCWD,
            dir.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    // SAFETY: a descriptor openat(2) just returned, owned by nothing else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The signals whose disposition is not `SIG_DFL` in this process, as a
/// mask (bit `n - 1` for signal `n`). The raw `rt_sigaction(2)`: the C
/// library's `sigaction(3)` refuses its internal signals (32, 33, …).
pub(super) fn altered_dispositions() -> u64 {
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
