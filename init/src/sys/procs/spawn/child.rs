//! The child's side of a spawn: the [`Plan`] the parent prepares, and
//! [`child`], which runs on its own stack in the init's memory until
//! `execve`. Only async-signal-safe system calls here (see the parent
//! module's documentation for why and how).

use super::*;
/// Whether the child may try `close_range(2)` (tests turn it off to run
/// the fall-back).
#[cfg(not(test))]
pub(super) fn close_range_allowed() -> bool {
    true
}

#[cfg(test)]
pub(super) fn close_range_allowed() -> bool {
    !tests_support::WITHOUT_CLOSE_RANGE.load(Ordering::Relaxed)
}

/// `rt_sigprocmask(2)` itself: the C library's wrappers leave out its
/// internal signals.
pub(super) unsafe fn sigprocmask(how: c_int, set: *const u64, old: *mut u64) {
    libc::syscall(libc::SYS_rt_sigprocmask, how, set, old, KERNEL_SIGSET_SIZE);
}

/// `sizeof(sigset_t)` as the kernel counts it (`_NSIG / 8`).
pub(super) const KERNEL_SIGSET_SIZE: libc::size_t =
    if cfg!(any(target_arch = "mips", target_arch = "mips64")) {
        16
    } else {
        8
    };

/// Identity system calls taking 32-bit IDs (the plain numbers take 16-bit
/// ones on these architectures).
#[cfg(any(target_arch = "x86", target_arch = "arm"))]
pub(super) mod nr {
    pub(crate) const SETGROUPS: libc::c_long = libc::SYS_setgroups32;
    pub(crate) const SETRESGID: libc::c_long = libc::SYS_setresgid32;
    pub(crate) const SETRESUID: libc::c_long = libc::SYS_setresuid32;
}

#[cfg(not(any(target_arch = "x86", target_arch = "arm")))]
pub(super) mod nr {
    pub(crate) const SETGROUPS: libc::c_long = libc::SYS_setgroups;
    pub(crate) const SETRESGID: libc::c_long = libc::SYS_setresgid;
    pub(crate) const SETRESUID: libc::c_long = libc::SYS_setresuid;
}

/// The most descriptors a child is handed as 3, 4, … (the parent refuses
/// more): a socket unit's and a descriptor store's (journald's holds up to
/// 4224, Debian's `FileDescriptorStoreMax=`).
pub(crate) const MAX_LISTEN_FDS: usize = 8192;

/// Where the step codes of a context's steps start: step `n` of the
/// context reports `CONTEXT_STEPS + n`.
pub(super) const CONTEXT_STEPS: u32 = 1 << 16;

/// A step, reported with its errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
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
    HandOff,
    ListenFds,
    Report,
    /// The foreground command's own process group (`init -- CMD` on a
    /// terminal), where every other child gets a session.
    Setpgid,
}

impl Step {
    /// Every step, for reading a reported code back.
    pub(super) const ALL: [Step; 15] = [
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
        Step::HandOff,
        Step::ListenFds,
        Step::Report,
        Step::Setpgid,
    ];

    pub(super) fn from_u32(v: u32) -> Step {
        Step::ALL
            .into_iter()
            .find(|s| *s as u32 == v)
            .unwrap_or(Step::Execve)
    }

    pub(super) fn name(self) -> &'static str {
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
            Step::HandOff => "hand the child off",
            Step::ListenFds => "hand over the sockets",
            Step::Report => "keep the descriptor that reports to the init",
            Step::Setpgid => "setpgid",
        }
    }

    /// The exit status of a handed-off child that failed this step:
    /// systemd's for the same failure (`EXIT_EXEC`, `EXIT_USER` …).
    pub(super) fn exit_status(self) -> u8 {
        match self {
            Step::Chdir => 200,
            Step::Execve => 203,
            Step::Dup2Stdin | Step::OpenNull => 208,
            Step::Dup2Stdout => 209,
            Step::Dup2Stderr => 222,
            Step::Setgroups | Step::Setgid => 216,
            Step::Setuid => 217,
            Step::Setsid | Step::Setpgid => 220,
            Step::Unshare | Step::HandOff | Step::Report => 127,
            Step::ListenFds => 214,
        }
    }

    pub(super) fn dup2(target: RawFd) -> Step {
        match target {
            0 => Step::Dup2Stdin,
            1 => Step::Dup2Stdout,
            _ => Step::Dup2Stderr,
        }
    }
}

/// Everything the child reads, prepared in the parent, and where it
/// reports a failure. Lives in the parent's frame; a `CLONE_VM` child
/// sees it through the memory they share, a forked one (`forked`) has
/// its own copy and reports through the pipe instead, as does the
/// process a `CLONE_VM` child hands off to when `report` is set.
pub(super) struct Plan {
    pub(super) path: *const c_char,
    pub(super) argv: *const *mut c_char,
    pub(super) envp: *const *mut c_char,
    /// NULL: no `chdir`.
    pub(super) cwd: *const c_char,
    /// A `chdir` that fails is no failure (systemd's `WorkingDirectory=-`).
    pub(super) cwd_optional: bool,
    /// `SpawnRequest::foreground`.
    pub(super) foreground: bool,
    /// The slot to `dup2` onto 0, 1, 2, or -1 to inherit.
    pub(super) stdio: [RawFd; 3],
    /// K.
    pub(super) limit: c_uint,
    /// The signals to set back to `SIG_DFL` (`Spawner::altered`).
    pub(super) reset: u64,
    /// The lowest descriptor the child closes as it unshares the table: K,
    /// or above the highest descriptor it is handed.
    pub(super) keep_below: c_uint,
    /// The descriptors handed as 3, 4, … (and how many).
    pub(super) listen_fds: (*const RawFd, usize),
    /// Room for as many descriptors, in the parent's memory (the child's
    /// stack is too small for a descriptor store's thousands).
    pub(super) listen_copies: *mut c_int,
    /// Where `LISTEN_PID`'s value lies in `envp` (and its length): the
    /// child writes its own PID there.
    pub(super) listen_pid: (*mut u8, usize),
    pub(super) close_range: bool,
    pub(super) groups: Option<(*const libc::gid_t, usize)>,
    pub(super) gid: Option<libc::gid_t>,
    pub(super) uid: Option<libc::uid_t>,
    /// The request's context (NULL: none): see `context.rs`.
    pub(super) context: *const ChildContext,
    /// The journal's stream to put on the output (NULL: none):
    /// `journal.rs`.
    pub(super) journal: *const JournalStream,
    /// Where `JOURNAL_STREAM`'s value lies in `envp` (and its length): the
    /// child writes the stream's `dev:ino` there, or empties it.
    pub(super) journal_env: (*mut u8, usize),
    /// Set by the child right before `execve`: a child that ends without
    /// it and without a step was killed on the way.
    pub(super) execing: AtomicBool,
    /// The failed [`Step`] (0: none; from [`CONTEXT_STEPS`] up, a step of
    /// the context).
    pub(super) step: AtomicU32,
    pub(super) errno: AtomicI32,
    /// Set by a child that handed off (in the init's memory): the PID of
    /// the process that goes on in its place.
    pub(super) handed: AtomicI32,
    /// Set in the handed-off process (in its own copy of the memory): it
    /// reports through the pipe when there is one (a spawn that did not
    /// wait), else by its exit status and a line on its standard error,
    /// since the parent no longer waits for it.
    pub(super) detached: AtomicBool,
    /// The write end of the report pipe (close-on-exec, so that the
    /// parent reads end of file at `execve`), where a forked child, or
    /// the process a `CLONE_VM` child hands off to, writes the messages
    /// `watch.rs` reads; -1 for a `CLONE_VM` child that reports in this
    /// plan only. The writer moves it (in its own copy) above every
    /// descriptor it keeps or is handed.
    pub(super) report: AtomicI32,
    /// The child is forked (its own copy of this plan and of the table
    /// from its start), else a `CLONE_VM` child.
    pub(super) forked: bool,
}

/// Whether `p`'s process reports through the pipe: a forked child, or
/// one handed off to by a `CLONE_VM` child of a spawn that did not wait.
/// Before the hand-off, the `CLONE_VM` child reports in the plan, which
/// the parent reads when it wakes.
unsafe fn reports_by_pipe(p: &Plan) -> bool {
    p.report.load(Ordering::Relaxed) >= 0 && (p.forked || p.detached.load(Ordering::Relaxed))
}

/// The child's entry point on its own stack.
pub(super) extern "C" fn child_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the parent's `Plan`, alive until clone(2) returns,
    // which is after this child has exec'd or exited.
    unsafe { child(&*arg.cast::<Plan>()) }
}

/// The child. Only async-signal-safe system calls (`signal-safety(7)`), no
/// allocation, no lock, no panic; never returns. All signals are blocked
/// on entry (the parent's doing) until the last step before `execve`.
pub(super) unsafe fn child(p: &Plan) -> ! {
    let forked = p.forked;
    let ranged = if forked {
        // A forked child's table is already its own (a copy): what it
        // does not keep is closed here, on its own core, not the init's.
        let report = keep_report(p);
        p.close_range && close_except(p.keep_below, c_uint::MAX, report)
    } else {
        // A table of our own before anything else touches a descriptor:
        // until then it is the init's.
        let ranged = p.close_range
            && libc::syscall(
                libc::SYS_close_range,
                libc::c_ulong::from(p.keep_below),
                libc::c_ulong::from(c_uint::MAX),
                libc::c_ulong::from(libc::CLOSE_RANGE_UNSHARE),
            ) == 0;
        if !ranged && libc::unshare(libc::CLONE_FILES) < 0 {
            fail(p, Step::Unshare);
        }
        ranged
    };
    let context = p.context.as_ref();
    if context.is_some_and(ChildContext::detaches) {
        hand_off(p);
        if p.report.load(Ordering::Relaxed) >= 0 {
            let report = keep_report(p);
            // What the table kept for the report's sake (the init's
            // descriptors from K up to its place) goes now, before steps
            // that may wait on a disk, so that this process holds no more
            // of the init's than a hand-off without a report; unless the
            // handed descriptors lie among them (closed once moved).
            if ranged && p.listen_fds.1 == 0 {
                close_except(p.limit, p.keep_below.saturating_sub(1), report);
            }
        }
    }
    if p.foreground {
        // As in `flight.rs`: signals are blocked, a missing terminal
        // (ENOTTY) leaves nothing to take.
        if libc::setpgid(0, 0) < 0 {
            fail(p, Step::Setpgid);
        }
        libc::tcsetpgrp(0, libc::getpid());
    } else if libc::setsid() < 0 {
        fail(p, Step::Setsid);
    }
    // With the init's identity and mounts, before any of the context's
    // namespaces.
    let journal = p.journal.as_ref();
    let journal_fd = journal.map_or(-1, |j| j.connect());
    // Raw system calls: the C library's wrappers would apply the change to
    // every thread of the init (see the module documentation). setgroups
    // and setresgid need the privilege that setresuid gives up; setgroups
    // comes before the context's steps, whose user namespace
    // (`PrivateUsers=`) denies it, and which as root do not depend on it.
    if let Some((list, len)) = p.groups {
        if libc::syscall(nr::SETGROUPS, len, list) < 0 {
            fail(p, Step::Setgroups);
        }
    }
    // The context's directories, output files, cgroup, limits, namespaces
    // and mounts, while the child still has the init's privileges.
    if let Some(Err((n, errno))) = context.map(|c| c.before_identity()) {
        fail_context(p, n, errno);
    }
    // A handed-off child's skipped steps cannot reach the parent's
    // memory: without a report pipe, they go to its standard error, in
    // the unit's log.
    if let Some(c) = context.filter(|_| p.detached.load(Ordering::Relaxed) && !reports_by_pipe(p)) {
        let denied = c.denied();
        for i in 0..64usize {
            if denied & (1u64 << i) != 0 {
                report(p, b"flotilla: not applied: ", c.step_label(i), libc::EPERM);
            }
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
    // Before the handed descriptors move to 3, 4, …, where it may lie.
    if let Some(j) = journal {
        let id = j.attach(journal_fd);
        write_journal_stream(p.journal_env, id);
    }
    // The handed descriptors to 3, 4, …; then what is left above them:
    // the slots and whatever else of the init's lay below K.
    let (first, top) = hand_listen_fds(p);
    let report = p.report.load(Ordering::Relaxed);
    if !ranged || !close_except(first, top.saturating_sub(1), report) {
        for fd in first..top {
            if fd as c_int != report {
                libc::close(fd as c_int);
            }
        }
    }
    // After the identity change: the unit's user must be able to enter its
    // directory.
    if !p.cwd.is_null() && libc::chdir(p.cwd) < 0 && !p.cwd_optional {
        fail(p, Step::Chdir);
    }
    // Default dispositions first, then the empty mask, so that a pending
    // signal cannot run an inherited handler: those the init has other
    // than the default (`execve` keeps ignored signals). The raw
    // rt_sigaction(2): the C library's sigaction(3) refuses its internal
    // signals (32, 33, …), which may have been inherited ignored. An
    // all-zero kernel `struct sigaction` is SIG_DFL, no flags, empty mask,
    // whatever the architecture's field order.
    let dfl = [0u64; 4];
    for sig in (1..=64).filter(|s| p.reset & (1 << (s - 1)) != 0) {
        libc::syscall(
            libc::SYS_rt_sigaction,
            sig,
            dfl.as_ptr(),
            std::ptr::null_mut::<u64>(),
            KERNEL_SIGSET_SIZE,
        );
    }
    // SIGPIPE ignored, as systemd starts services (`IgnoreSIGPIPE=yes`,
    // its default; a context step sets it back for `no`): a daemon that
    // writes to a closed socket gets EPIPE rather than dying.
    libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    let empty = [0u64; 2];
    sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), std::ptr::null_mut());
    // Last: no-new-privileges and the seccomp filter, which the child's
    // own steps must not run under.
    if let Some(Err((n, errno))) = context.map(|c| c.before_exec()) {
        fail_context(p, n, errno);
    }
    p.execing.store(true, Ordering::Relaxed);
    if reports_by_pipe(p) {
        // The steps skipped as denied, which the parent's copy of the
        // context does not see.
        let denied = context.map_or(0, ChildContext::denied);
        send(p, b'E', &denied.to_le_bytes());
    }
    libc::execve(p.path, p.argv.cast(), p.envp.cast());
    fail(p, Step::Execve)
}

/// The report descriptor of a child that reports by pipe (a forked
/// one, or the process handed off to), moved (if it is not already)
/// above everything the child keeps (below `keep_below`) and every
/// target of the handed descriptors (3, 4, …), so that no `dup2` and no
/// close of the child's own steps reaches it. A child that cannot move
/// it cannot report, so it exits with the errno as its status, which
/// the parent reads as a failure of [`Step::Report`].
unsafe fn keep_report(p: &Plan) -> c_int {
    let fd = p.report.load(Ordering::Relaxed);
    let handed = 3 + p.listen_fds.1.min(MAX_LISTEN_FDS) as c_uint;
    let base = p.keep_below.max(handed);
    if fd as c_uint >= base {
        return fd;
    }
    let moved = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, base as c_int);
    if moved < 0 {
        libc::_exit(Errno::last_raw().clamp(1, 126));
    }
    libc::close(fd);
    p.report.store(moved, Ordering::Relaxed);
    moved
}

/// `close_range(2)` over `[first, last]` but for `keep`; whether it
/// worked (an empty range does).
unsafe fn close_except(first: c_uint, last: c_uint, keep: c_int) -> bool {
    let range = |lo: c_uint, hi: c_uint| {
        lo > hi
            || libc::syscall(
                libc::SYS_close_range,
                libc::c_ulong::from(lo),
                libc::c_ulong::from(hi),
                0 as libc::c_ulong,
            ) == 0
    };
    match c_uint::try_from(keep) {
        Ok(k) if (first..=last).contains(&k) => {
            (k == first || range(first, k - 1)) && (k == last || range(k + 1, last))
        }
        _ => range(first, last),
    }
}

/// Writes one message to the child's report pipe: its kind, then
/// `body` (`watch.rs` reads it). One `write(2)` of fewer than `PIPE_BUF`
/// bytes to a pipe that holds at most another such message: whole, and
/// never blocking.
unsafe fn send(p: &Plan, kind: u8, body: &[u8; 8]) {
    let mut msg = [kind; 9];
    for (to, from) in msg.iter_mut().skip(1).zip(body) {
        *to = *from;
    }
    libc::write(
        p.report.load(Ordering::Relaxed),
        msg.as_ptr().cast(),
        msg.len(),
    );
}

/// A failure as [`send`] writes it: the step's code and the errno.
unsafe fn send_failure(p: &Plan, code: u32, errno: c_int) -> ! {
    let [a, b, c, d] = code.to_le_bytes();
    let [e, f, g, h] = errno.to_le_bytes();
    send(p, b'F', &[a, b, c, d, e, f, g, h]);
    libc::_exit(127)
}

/// Moves the handed descriptors to 3, 4, … (each first copied above every
/// target, so that no move overwrites a later source; `dup2` clears
/// close-on-exec on the target) and writes the child's PID into
/// `LISTEN_PID`. Returns the first descriptor left to close and one past
/// the last: the slots, the copies, and what else the table kept.
unsafe fn hand_listen_fds(p: &Plan) -> (c_uint, c_uint) {
    let (fds, n) = p.listen_fds;
    if n == 0 || fds.is_null() || p.listen_copies.is_null() {
        return (3, p.limit);
    }
    let n = n.min(MAX_LISTEN_FDS);
    let first = 3 + n as c_uint;
    let base = p.keep_below.max(first);
    let mut top = base;
    // All copied first: a source may lie where an earlier one goes.
    let copies = p.listen_copies;
    for i in 0..n {
        let copy = libc::fcntl(*fds.add(i), libc::F_DUPFD, base as c_int);
        if copy < 0 {
            fail(p, Step::ListenFds);
        }
        top = top.max(copy as c_uint + 1);
        *copies.add(i) = copy;
    }
    for i in 0..n {
        if libc::dup2(*copies.add(i), 3 + i as c_int) < 0 {
            fail(p, Step::ListenFds);
        }
    }
    write_pid(p.listen_pid);
    (first, top.max(p.keep_below))
}

/// Writes this process's PID in decimal at `at` (a value of `len` bytes in
/// `envp`), ending it there; left alone if it does not fit.
unsafe fn write_pid((at, len): (*mut u8, usize)) {
    if at.is_null() {
        return;
    }
    let pid = libc::syscall(libc::SYS_getpid) as u64;
    if let Some(end) = write_decimal(at, len, pid) {
        *at.add(end) = 0;
    }
}

/// Writes `JOURNAL_STREAM`'s value, systemd's `DEV:INO` of the stream
/// on the output, at `at` (a value of `len` bytes in `envp`); with no
/// stream, or if it does not fit, an empty value (which no program takes
/// for a stream).
unsafe fn write_journal_stream((at, len): (*mut u8, usize), id: Option<(u64, u64)>) {
    if at.is_null() || len == 0 {
        return;
    }
    let end = id.and_then(|(dev, ino)| {
        let colon = write_decimal(at, len, dev)?;
        if colon + 1 >= len {
            return None;
        }
        *at.add(colon) = b':';
        let rest = at.add(colon + 1);
        write_decimal(rest, len - colon - 1, ino).map(|n| colon + 1 + n)
    });
    *at.add(end.unwrap_or(0)) = 0;
}

/// `value` in decimal at `at`, if it fits in `len` bytes with room for a
/// byte after it; the number of digits.
unsafe fn write_decimal(at: *mut u8, len: usize, value: u64) -> Option<usize> {
    let mut width = 1;
    while width < 20 && value / 10u64.pow(width as u32) > 0 {
        width += 1;
    }
    if width >= len {
        return None;
    }
    let mut rest = value;
    for j in (0..width).rev() {
        *at.add(j) = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    Some(width)
}

/// Hands the child off: a process of the init's own (`CLONE_PARENT`,
/// without `CLONE_VM`: a copy of this memory) goes on with the spawn, and
/// this one tells the parent its PID and exits, so that the parent, held by
/// `CLONE_VFORK` until then, is back at once while the new process makes
/// the unit's directories and opens its files, which may wait on a disk
/// (`dirs.rs`). The copy costs the init's page tables, for the units that
/// have such steps only.
unsafe fn hand_off(p: &Plan) {
    let pid = libc::syscall(
        libc::SYS_clone,
        libc::c_ulong::from(libc::CLONE_PARENT as c_uint | libc::SIGCHLD as c_uint),
        0 as libc::c_ulong,
        0 as libc::c_ulong,
        0 as libc::c_ulong,
        0 as libc::c_ulong,
    );
    match pid {
        0 => p.detached.store(true, Ordering::Relaxed),
        pid if pid < 0 => fail(p, Step::HandOff),
        pid => {
            p.handed.store(pid as i32, Ordering::Relaxed);
            libc::_exit(0)
        }
    }
}

/// Reports `step` and `errno` to the parent and exits 127 (a handed-off
/// child: says so on its standard error and exits with the step's status).
pub(super) unsafe fn fail(p: &Plan, step: Step) -> ! {
    let errno = Errno::last_raw();
    if reports_by_pipe(p) {
        send_failure(p, step as u32, errno);
    }
    if p.detached.load(Ordering::Relaxed) {
        report(
            p,
            b"flotilla: cannot start: ",
            step.name().as_bytes(),
            errno,
        );
        libc::_exit(c_int::from(step.exit_status()))
    }
    p.errno.store(errno, Ordering::Relaxed);
    p.step.store(step as u32, Ordering::Relaxed);
    libc::_exit(127)
}

/// Reports step `n` of the context and `errno` to the parent and exits
/// 127 (a handed-off child: as [`fail`] says).
pub(super) unsafe fn fail_context(p: &Plan, n: usize, errno: c_int) -> ! {
    let code = u32::try_from(n).map_or(u32::MAX, |n| CONTEXT_STEPS.saturating_add(n));
    if reports_by_pipe(p) {
        send_failure(p, code, errno);
    }
    if p.detached.load(Ordering::Relaxed) {
        let ctx = p.context.as_ref();
        report(
            p,
            b"flotilla: cannot start: ",
            ctx.map_or(b"a context step", |c| c.step_label(n)),
            errno,
        );
        libc::_exit(c_int::from(ctx.map_or(127, |c| c.exit_status(n))))
    }
    p.errno.store(errno, Ordering::Relaxed);
    p.step.store(code, Ordering::Relaxed);
    libc::_exit(127)
}

/// Writes `PREFIX WHAT: ERROR` (`flotilla: cannot start: …`) to the handed-off child's
/// standard error: its stderr slot while that is open, else descriptor 2
/// (set up by then, or the init's own). With a buffer on the stack: no
/// allocation in the child.
unsafe fn report(p: &Plan, prefix: &[u8], what: &[u8], errno: c_int) {
    let desc = Errno::from_raw(errno).desc().as_bytes();
    let mut buf = [0u8; 512];
    let mut len = 0;
    for part in [prefix, what, b": ", desc, b"\n"] {
        for &b in part {
            if let Some(slot) = buf.get_mut(len) {
                *slot = b;
                len += 1;
            }
        }
    }
    let slot = p.stdio[2];
    let fd = if slot >= 0 && libc::fcntl(slot, libc::F_GETFD) >= 0 {
        slot
    } else {
        2
    };
    libc::write(fd, buf.as_ptr().cast(), len);
}
