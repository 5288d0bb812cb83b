//! Real-process tests of the spawn path itself (`procs/spawn/`): what a
//! child holds and how it is reset, the reserved slots, a failed `execve`,
//! its pipes. The set-up is `tests/mod.rs`'s.

use super::*;

// ---- the spawn path itself (spawn/) ----

/// The descriptors of child `pid` once it has exec'd `/bin/sleep` (before
/// that it shares this process's table, or is between the copy and the
/// close).
fn exec_fds(pid: Pid) -> Vec<RawFd> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    // Once `sleep` sleeps (in nanosleep or clock_nanosleep): right after
    // its exec, its dynamic loader and its locale have a file of their own
    // open for a moment, which is not one the spawn let through.
    let sleeping = || {
        let syscall = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
        std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default() == "sleep\n"
            && matches!(syscall.split(' ').next(), Some("35" | "230"))
    };
    while !sleeping() {
        assert!(
            std::time::Instant::now() < deadline,
            "{pid} never exec'd sleep and slept"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut fds: Vec<RawFd> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_str().unwrap().parse().unwrap())
        .collect();
    fds.sort_unstable();
    fds
}

/// Spawns `sleep 30` with stdout and stderr on a pipe while this process
/// holds 1000 close-on-exec descriptors (and, if `leaky`, one without
/// close-on-exec far up, at 3000), checks that the child has exactly 0, 1 and 2
/// open, on /dev/null and the pipe, then kills and reaps it. `forked`:
/// with [`Sys::spawn_started`], its report read to the end first.
fn check_child_has_only_stdio(creds: Option<&Credentials>, leaky: bool, forked: bool) {
    let sys = RealSys::new();
    // 1000 descriptors and one at 3000, or less under a low limit.
    let limit = i32::try_from(sys.raise_nofile_limit().unwrap()).unwrap_or(i32::MAX);
    let high = 3000.min(limit - 16);
    let null = std::fs::File::open("/dev/null").unwrap();
    let held: Vec<OwnedFd> = (0..1000.min(high / 2))
        .map(|_| null.as_fd().try_clone_to_owned().unwrap())
        .collect();
    let leak = leaky.then(|| {
        // SAFETY: fcntl(2) on a descriptor we own; the copy is ours.
        let fd = unsafe { libc::fcntl(null.as_raw_fd(), libc::F_DUPFD, high) };
        assert!(fd >= high);
        // SAFETY: fresh descriptor.
        unsafe { OwnedFd::from_raw_fd(fd) }
    });
    let mut pipe = OutPipe::new(Stream::Stdout).unwrap();
    let argv = args(&["/bin/sleep", "30"]);
    let env = base_env();
    let mut req = SpawnRequest::new(&argv, &env)
        .stdout(pipe.stdio())
        .stderr(pipe.stdio());
    req.credentials = creds;
    let pid = match forked {
        false => sys.spawn(&req).unwrap(),
        true => started_and_execed(&sys, &req),
    };
    let pipe_name = fd_target("self", pipe.writer().unwrap().as_raw_fd());
    pipe.close_writer();
    let fds = exec_fds(pid);
    if leaky {
        assert_eq!(fds, [0, 1, 2], "{leak:?} leaked?");
    } else {
        // Without close_range(2), descriptors without close-on-exec reach
        // the child (the documented limit of the fall-back): those this
        // process inherited, and those other tests of this binary hold for
        // a moment while this one spawns. None of ours may (all are
        // close-on-exec).
        let ours: Vec<RawFd> = held.iter().map(AsRawFd::as_raw_fd).collect();
        assert_eq!(fds.get(..3), Some(&[0, 1, 2][..]), "{fds:?}");
        let leaked: Vec<&RawFd> = fds.iter().filter(|fd| ours.contains(fd)).collect();
        assert!(
            leaked.is_empty(),
            "close-on-exec descriptors {leaked:?} reached the child"
        );
    }
    let p = pid.to_string();
    assert_eq!(
        [fd_target(&p, 0), fd_target(&p, 1), fd_target(&p, 2)],
        ["/dev/null".to_string(), pipe_name.clone(), pipe_name]
    );
    sys.kill(pid, libc::SIGKILL).unwrap();
    wait_for(&sys, pid);
    drop(held);
}

#[test]
fn the_child_has_exactly_its_stdio_open() {
    let _g = process_lock();
    for forked in [false, true] {
        check_child_has_only_stdio(None, true, forked);
        if is_root() {
            let creds = Credentials {
                uid: Some(65534),
                gid: Some(65534),
                groups: Some(vec![]),
            };
            check_child_has_only_stdio(Some(&creds), true, forked);
        }
    }
}

/// More children in flight at once than the spawner has lanes
/// (`spawn/lanes.rs`), none of their reports read until all are started,
/// while this process holds 1000 descriptors: those in a lane share the
/// table and unshare it, the rest copy it; each exec's with exactly 0, 1
/// and 2, its output on its own pipe. Then a lane given back serves again.
#[test]
fn children_in_flight_beyond_the_lanes_each_have_only_their_stdio() {
    let _g = process_lock();
    let sys = RealSys::new();
    let limit = i32::try_from(sys.raise_nofile_limit().unwrap()).unwrap_or(i32::MAX);
    let null = std::fs::File::open("/dev/null").unwrap();
    let held: Vec<OwnedFd> = (0..1000.min(limit / 4))
        .map(|_| null.as_fd().try_clone_to_owned().unwrap())
        .collect();
    let argv = args(&["/bin/sleep", "30"]);
    let env = base_env();
    let mut started = Vec::new();
    for _ in 0..140 {
        let mut pipe = OutPipe::new(Stream::Stdout).unwrap();
        let req = SpawnRequest::new(&argv, &env)
            .stdout(pipe.stdio())
            .stderr(pipe.stdio());
        let (pid, watch) = sys.spawn_started(&req).unwrap();
        let name = fd_target("self", pipe.writer().unwrap().as_raw_fd());
        pipe.close_writer();
        started.push((pid, watch.expect("a plain spawn is started"), name, pipe));
    }
    for (pid, watch, name, _pipe) in &mut started {
        let outcome = watch.wait(no_context);
        assert!(
            matches!(outcome, ExecOutcome::Execed { denied: 0 }),
            "{outcome:?}"
        );
        assert_eq!(exec_fds(*pid), [0, 1, 2]);
        let p = pid.to_string();
        assert_eq!(
            [fd_target(&p, 0), fd_target(&p, 1), fd_target(&p, 2)],
            ["/dev/null".to_string(), name.clone(), name.clone()]
        );
    }
    for (pid, ..) in &started {
        sys.kill(*pid, libc::SIGKILL).unwrap();
        wait_for(&sys, *pid);
    }
    drop(started);
    // Every lane given back holds the placeholder again: an `O_PATH`
    // descriptor of `/`, the cheapest for the next children to copy and
    // close (`lanes.rs`).
    let lanes = spawn::tests_support::lanes();
    assert!(lanes.len() >= 3 * 96, "{} lane descriptors", lanes.len());
    for fd in lanes {
        assert_eq!(fd_target("self", fd), "/", "lane descriptor {fd}");
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap();
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|f| i32::from_str_radix(f.trim(), 8).ok())
            .unwrap();
        assert_ne!(flags & libc::O_PATH, 0, "lane descriptor {fd}: {info}");
    }
    check_child_has_only_stdio(None, true, true);
    drop(held);
}

/// A process that holds a copy of this process's whole descriptor table
/// (a fork that only waits) until it is dropped: as a child cloned with a
/// copy of the init's table holds the report of a child in flight whose
/// lane it copied.
struct TableHolder {
    pid: Pid,
    release: Option<OwnedFd>,
}

impl TableHolder {
    fn fork() -> TableHolder {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        // SAFETY: the child only reads (until the parent closes the write
        // end, or for at most 30 s) and exits: async-signal-safe calls.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork: {}", Errno::last());
        if pid == 0 {
            let mut pfd = libc::pollfd {
                fd: read.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: its copy of the write end closed (so that the
            // parent's close is end of file), one pollfd, then _exit(2).
            unsafe {
                libc::close(write.as_raw_fd());
                libc::poll(&mut pfd, 1, 30_000);
                libc::_exit(0);
            }
        }
        TableHolder {
            pid,
            release: Some(write),
        }
    }

    /// Whether it still runs (its copy of the table is still held).
    fn holds(&self) -> bool {
        let mut status = 0;
        // SAFETY: waitpid(2) on our own child, not blocking.
        unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) == 0 }
    }
}

impl Drop for TableHolder {
    fn drop(&mut self) {
        drop(self.release.take());
        let mut status = 0;
        // SAFETY: waitpid(2) on our own child, which exits now.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
}

/// A child in flight whose report's write end another process holds a
/// copy of (so end of file does not come at its `execve`) is still known
/// to have exec'd, by the word the kernel clears as it leaves this
/// process's memory (`spawn/flight.rs`): whether the report is waited for
/// or read as its descriptor becomes readable.
#[test]
fn a_report_whose_write_end_another_process_holds_ends_at_the_exec() {
    let _g = process_lock();
    let sys = RealSys::new();
    let argv = args(&["/bin/sleep", "30"]);
    let env = base_env();
    for waited in [true, false] {
        let (pid, watch) = sys.spawn_started(&SpawnRequest::new(&argv, &env)).unwrap();
        let mut watch = watch.expect("a plain spawn is started");
        let holder = TableHolder::fork();
        let outcome = match waited {
            true => watch.wait(no_context),
            false => {
                let deadline = std::time::Instant::now() + Duration::from_secs(20);
                loop {
                    let outcome = watch.read(None, no_context);
                    if !matches!(outcome, ExecOutcome::Pending)
                        || std::time::Instant::now() > deadline
                    {
                        break outcome;
                    }
                    // Readable at the `E`; after it, the word is
                    // looked at again every 50 ms.
                    let mut pfd = libc::pollfd {
                        fd: watch.fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one pollfd.
                    unsafe { libc::poll(&mut pfd, 1, 50) };
                }
            }
        };
        assert!(
            matches!(outcome, ExecOutcome::Execed { denied: 0 }),
            "waited {waited}: {outcome:?}"
        );
        assert!(holder.holds(), "end of file could not have come");
        drop(holder);
        sys.kill(pid, libc::SIGKILL).unwrap();
        wait_for(&sys, pid);
    }
}

/// Runs `f` with the child's `close_range(2)` turned off, as on a kernel
/// older than 5.9 (hold [`process_lock`]).
fn without_close_range(f: impl FnOnce()) {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            spawn::tests_support::WITHOUT_CLOSE_RANGE
                .store(false, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let _reset = Reset;
    spawn::tests_support::WITHOUT_CLOSE_RANGE.store(true, std::sync::atomic::Ordering::Relaxed);
    f();
}

#[test]
fn without_close_range_the_child_unshares_the_whole_table() {
    let _g = process_lock();
    without_close_range(|| {
        // Close-on-exec descriptors only: one without would leak there.
        check_child_has_only_stdio(None, false, false);
        check_child_has_only_stdio(None, false, true);
        let o = run(
            &RealSys::new(),
            &["/bin/sh", "-c", "echo out; echo err >&2"],
            &base_env(),
            None,
            None,
        );
        assert_eq!(
            (o.stdout, o.stderr),
            (vec!["out".into()], vec!["err".into()])
        );
        let sys = RealSys::new();
        let env = base_env();
        let argv = args(&["/bin/true"]);
        let err = sys
            .spawn(&SpawnRequest::new(&argv, &env).cwd(Path::new("/flotilla/no/such/dir")))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "/bin/true: chdir /flotilla/no/such/dir: no such file or directory"
        );
        assert_eq!(sys.wait_any().unwrap(), None);
    });
}

#[test]
fn a_signal_the_parent_ignores_or_catches_is_default_in_the_child() {
    let _g = process_lock();
    extern "C" fn handler(_: libc::c_int) {}
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    let catch = SigAction::new(
        SigHandler::Handler(handler),
        SaFlags::empty(),
        SigSet::empty(),
    );
    // The spawner made first, as in the init, whose dispositions are set
    // before its first spawn.
    spawn::tests_support::slots();
    // SAFETY: no test sends SIGUSR2 or SIGWINCH; both are restored below.
    let (old_usr2, old_winch) = unsafe {
        (
            sigaction(Signal::SIGUSR2, &ignore).unwrap(),
            sigaction(Signal::SIGWINCH, &catch).unwrap(),
        )
    };
    // The spawner reads the dispositions once (the init never changes
    // them after its start): read again after each change here.
    spawn::tests_support::recount_dispositions();
    // A waited-for child (`CLONE_VFORK`) and a flying one.
    let got = [child_signals_as(None, false), child_signals_as(None, true)];
    // SAFETY: as above.
    unsafe {
        sigaction(Signal::SIGUSR2, &old_usr2).unwrap();
        sigaction(Signal::SIGWINCH, &old_winch).unwrap();
    }
    spawn::tests_support::recount_dispositions();
    for g in got {
        assert_eq!(g, ["SigBlk:\t0000000000000000", SIGPIPE_ONLY_IGNORED]);
    }
}

#[test]
fn the_slots_hold_dev_null_again_after_every_spawn() {
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    let mut out = OutPipe::new(Stream::Stdout).unwrap();
    let mut err = OutPipe::new(Stream::Stderr).unwrap();
    // A good spawn.
    let argv = args(&["/bin/true"]);
    let req = SpawnRequest::new(&argv, &env)
        .stdout(out.stdio())
        .stderr(err.stdio());
    let pid = sys.spawn(&req).unwrap();
    assert_slots_hold_null();
    wait_for(&sys, pid);
    // A child that fails before execve.
    let req = req.cwd(Path::new("/flotilla/no/such/dir"));
    assert!(matches!(sys.spawn(&req), Err(SysError::ChildSetup { .. })));
    assert_slots_hold_null();
    // A failed execve.
    let dir = tempfile::tempdir().unwrap();
    let prog = dir.path().join("garbage");
    std::fs::write(&prog, [0u8, 1, 2, 3, 4, 5, 6, 7]).unwrap();
    std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let argv = args(&[prog.to_str().unwrap()]);
    let req = SpawnRequest::new(&argv, &env)
        .stdin(Stdio::Inherit)
        .stdout(out.stdio())
        .stderr(err.stdio());
    assert!(sys.spawn(&req).is_err());
    assert_slots_hold_null();
    // Nothing of the pipes is left in this process but our own ends.
    out.close_writer();
    err.close_writer();
    assert_eq!(out.drain(|_| {}).unwrap(), Drained::Closed);
    assert_eq!(err.drain(|_| {}).unwrap(), Drained::Closed);
    assert_eq!(sys.wait_any().unwrap(), None);
}

#[test]
fn a_failed_execve_is_reported_with_its_errno_and_the_child_reaped() {
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    let dir = tempfile::tempdir().unwrap();
    // Executable, regular, but no format the kernel knows (no #!).
    let prog = dir.path().join("garbage");
    std::fs::write(&prog, [0u8, 1, 2, 3, 4, 5, 6, 7]).unwrap();
    std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let argv = args(&[prog.to_str().unwrap()]);
    let err = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap_err();
    assert_eq!(
        err,
        SysError::ChildSetup {
            program: prog.display().to_string(),
            step: "execve".into(),
            errno: Os(Errno::ENOEXEC),
            status: 203,
        }
    );
    assert_eq!(
        err.to_string(),
        format!("{}: execve: exec format error", prog.display())
    );
    assert_eq!(sys.wait_any().unwrap(), None);
}

#[test]
fn the_pipe_reaches_end_of_file_when_the_child_exits() {
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    let mut pipe = OutPipe::new(Stream::Stdout).unwrap();
    let argv = args(&["/bin/sh", "-c", "echo bye"]);
    let pid = sys
        .spawn(&SpawnRequest::new(&argv, &env).stdout(pipe.stdio()))
        .unwrap();
    pipe.close_writer();
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
    let mut got = Vec::new();
    // The child is gone and this process holds no write end: everything,
    // then end of file, without blocking.
    let d = pipe
        .drain(|l| got.push(String::from_utf8_lossy(l.text).into_owned()))
        .unwrap();
    assert_eq!((d, got), (Drained::Closed, vec!["bye".to_string()]));
}

#[test]
fn a_stdio_source_below_three_reaches_the_child() {
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    // The child's stdout is this process's stderr (descriptor 2), its
    // stderr a pipe.
    let stderr = std::io::stderr();
    let mut pipe = OutPipe::new(Stream::Stderr).unwrap();
    let argv = args(&["/bin/sleep", "30"]);
    let req = SpawnRequest::new(&argv, &env)
        .stdout(Stdio::Fd(stderr.as_fd()))
        .stderr(pipe.stdio());
    let pid = sys.spawn(&req).unwrap();
    let pipe_name = fd_target("self", pipe.writer().unwrap().as_raw_fd());
    pipe.close_writer();
    let p = pid.to_string();
    assert_eq!(
        [fd_target(&p, 1), fd_target(&p, 2)],
        [fd_target("self", 2), pipe_name]
    );
    sys.kill(pid, libc::SIGKILL).unwrap();
    wait_for(&sys, pid);
}

#[test]
fn systemd_notify_reaches_the_notify_socket_with_the_unit_pid() {
    assert!(
        Path::new("/usr/bin/systemd-notify").exists() || Path::new("/bin/systemd-notify").exists(),
        "systemd-notify is not installed (scripts/test installs it)"
    );
    use crate::notify::{NotifyMsg, NotifySocket};
    let _g = process_lock();
    let sys = RealSys::new();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("unit");
    let mut sock = NotifySocket::bind(&sys, &path).unwrap();
    let mut env = base_env();
    env.set_os("NOTIFY_SOCKET", path.as_os_str()).unwrap();
    // systemd-notify sends on behalf of its parent (the unit's main
    // process, here sh), then a BARRIER=1 with a descriptor and waits until
    // the receiver has closed it.
    let argv = args(&[
        "/bin/sh",
        "-c",
        "systemd-notify --ready --status='up and running'; echo $?",
    ]);
    let mut out = OutPipe::new(Stream::Stdout).unwrap();
    let pid = sys
        .spawn(&SpawnRequest::new(&argv, &env).stdout(out.stdio()))
        .unwrap();
    out.close_writer();

    let mut poll = Poll::new().unwrap();
    poll.registry()
        .register(
            &mut SourceFd(&sock.as_raw_fd()),
            Token(1),
            Interest::READABLE,
        )
        .unwrap();
    let mut events = Events::with_capacity(4);
    let mut got = Vec::new();
    while !got
        .iter()
        .any(|(_, m)| matches!(m, NotifyMsg::Unknown { key, .. } if key == "BARRIER"))
    {
        poll.poll(&mut events, Some(Duration::from_secs(20)))
            .unwrap();
        assert!(!events.is_empty(), "no notification within 20 s: {got:?}");
        for d in sock.recv_all().unwrap().datagrams {
            got.extend(d.msgs.into_iter().map(|m| (d.pid, m)));
        }
    }
    assert_eq!(got[0], (Some(pid), NotifyMsg::Ready));
    assert_eq!(
        got[1],
        (Some(pid), NotifyMsg::Status("up and running".into()))
    );
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
    let mut lines = Vec::new();
    out.drain(|l| lines.push(String::from_utf8_lossy(l.text).into_owned()))
        .unwrap();
    assert_eq!(
        lines,
        ["0"],
        "systemd-notify failed: the barrier descriptor was not closed?"
    );
}

#[test]
fn a_relative_program_is_found_from_the_working_directory() {
    let _g = process_lock();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("bin")).unwrap();
    let script = dir.path().join("bin/hello");
    std::fs::write(&script, "#!/bin/sh\necho hello from $(pwd)\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let o = run(
        &RealSys,
        &["bin/hello"],
        &base_env(),
        Some(dir.path()),
        None,
    );
    let canonical = dir.path().canonicalize().unwrap();
    assert_eq!(o.stdout, [format!("hello from {}", canonical.display())]);
    let argv = args(&["bin/missing"]);
    let env = base_env();
    let err = RealSys
        .spawn(&SpawnRequest::new(&argv, &env).cwd(dir.path()))
        .unwrap_err();
    assert_eq!(err.to_string(), "bin/missing: no such file");
}
