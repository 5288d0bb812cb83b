//! Real-process tests of [`RealSys`]: they fork, exec and reap real
//! programs (`/bin/sh`, `/bin/true`, `/bin/sleep`).
//!
//! `waitpid(-1)` reaps any child of the test process, and the test harness
//! runs tests on several threads, so every test here that starts a process
//! holds [`process_lock`] (any other test in this crate that spawns and
//! reaps must hold it too). Exits are awaited on a pidfd
//! (`pidfd_open(2)`), never by sleeping.
//!
//! This file holds that shared set-up and the tests of the trait's calls
//! (spawn and reap, signals, clocks, users, identity changes, a started
//! spawn's report and a forked child's descriptors); the spawn path's own
//! tests are in [`spawn_path`], the event queue's and sockets' in
//! [`descriptors`].

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

use super::real::RealSys;
use super::*;
use crate::outpipe::{Drained, OutPipe, Stream};

mod descriptors;
mod spawn_path;
mod watches;

static PROCESSES: Mutex<()> = Mutex::new(());

/// No context to name a failed step with (an `ExecWatch` of a spawn
/// without one).
fn no_context() -> Option<&'static super::context::ChildContext> {
    None
}

/// Serialises the tests that start and reap processes.
pub(crate) fn process_lock() -> MutexGuard<'static, ()> {
    PROCESSES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Waits (on a pidfd, up to 20 s) for `pid` to terminate, then reaps it.
pub(crate) fn wait_for(sys: &dyn Sys, pid: Pid) -> ExitStatus {
    let fd = super::pidfd::open(pid).unwrap_or_else(|e| panic!("pidfd_open {pid}: {e}"));
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut pfd, 1, 20_000) };
    assert_eq!(n, 1, "pid {pid} did not exit within 20 s");
    loop {
        match sys.wait_any().unwrap() {
            Some((p, status)) if p == pid => return status,
            Some(_) => {}
            None => panic!("pid {pid} exited but could not be reaped"),
        }
    }
}

fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn base_env() -> Env {
    let mut env = Env::new();
    env.set("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").unwrap();
    env
}

/// Output of a finished child: stdout lines and stderr lines.
struct Output {
    status: ExitStatus,
    stdout: Vec<String>,
    stderr: Vec<String>,
}

/// Runs `argv` with stdout and stderr captured through two [`OutPipe`]s
/// driven by a `mio` loop, as the init does, then reaps it.
fn run(
    sys: &RealSys,
    argv: &[&str],
    env: &Env,
    cwd: Option<&Path>,
    creds: Option<&Credentials>,
) -> Output {
    run_as(sys, argv, env, cwd, creds, false)
}

/// [`run`], the child started by [`started_and_execed`] when `started`.
fn run_as(
    sys: &RealSys,
    argv: &[&str],
    env: &Env,
    cwd: Option<&Path>,
    creds: Option<&Credentials>,
    started: bool,
) -> Output {
    let argv = args(argv);
    let mut out = OutPipe::new(Stream::Stdout).unwrap();
    let mut err = OutPipe::new(Stream::Stderr).unwrap();
    let mut req = SpawnRequest::new(&argv, env)
        .stdout(out.stdio())
        .stderr(err.stdio());
    req.cwd = cwd;
    req.credentials = creds;
    let pid = if started {
        started_and_execed(sys, &req)
    } else {
        sys.spawn(&req).unwrap()
    };
    out.close_writer();
    err.close_writer();

    let mut poll = Poll::new().unwrap();
    poll.registry()
        .register(
            &mut SourceFd(&out.as_raw_fd()),
            Token(1),
            Interest::READABLE,
        )
        .unwrap();
    poll.registry()
        .register(
            &mut SourceFd(&err.as_raw_fd()),
            Token(2),
            Interest::READABLE,
        )
        .unwrap();
    let mut lines: HashMap<Stream, Vec<String>> = HashMap::new();
    let mut open = 2;
    let mut events = Events::with_capacity(8);
    while open > 0 {
        poll.poll(&mut events, Some(Duration::from_secs(20)))
            .unwrap();
        assert!(!events.is_empty(), "no output event within 20 s");
        for ev in &events {
            let pipe = if ev.token() == Token(1) {
                &mut out
            } else {
                &mut err
            };
            loop {
                let d = pipe
                    .drain(|l| {
                        lines
                            .entry(l.stream)
                            .or_default()
                            .push(String::from_utf8_lossy(l.text).into_owned());
                    })
                    .unwrap();
                match d {
                    Drained::More => continue,
                    Drained::WouldBlock => break,
                    Drained::Closed => {
                        open -= 1;
                        break;
                    }
                }
            }
        }
    }
    let status = wait_for(sys, pid);
    Output {
        status,
        stdout: lines.remove(&Stream::Stdout).unwrap_or_default(),
        stderr: lines.remove(&Stream::Stderr).unwrap_or_default(),
    }
}

#[test]
fn spawns_true_and_reaps_it() {
    let _g = process_lock();
    let sys = RealSys::new();
    let argv = args(&["/bin/true"]);
    let env = base_env();
    let pid = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
    assert!(pid > 1);
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
    assert_eq!(sys.wait_any().unwrap(), None);
}

#[test]
fn captures_both_streams_and_the_exit_status() {
    let _g = process_lock();
    let o = run(
        &RealSys,
        &[
            "/bin/sh",
            "-c",
            "echo hi; echo err >&2; printf tail; exit 3",
        ],
        &base_env(),
        None,
        None,
    );
    assert_eq!(o.status, ExitStatus::Exited(3));
    assert_eq!(o.stdout, ["hi", "tail"]);
    assert_eq!(o.stderr, ["err"]);
    assert_eq!(o.status.to_string(), "exited with status 3");
}

#[test]
fn a_bare_name_is_found_in_path() {
    let _g = process_lock();
    let o = run(
        &RealSys,
        &["sh", "-c", "echo found"],
        &base_env(),
        None,
        None,
    );
    assert_eq!(
        (o.status, o.stdout),
        (ExitStatus::Exited(0), vec!["found".to_string()])
    );
}

/// `req` started with [`Sys::spawn_started`] (a plain request's child
/// flies: `spawn/flight.rs`), its report read to the end: it exec'd, with
/// nothing denied.
fn started_and_execed(sys: &RealSys, req: &SpawnRequest<'_>) -> Pid {
    let (pid, watch) = sys.spawn_started(req).unwrap();
    let outcome = watch.expect("a plain spawn is started").wait(no_context);
    assert!(
        matches!(outcome, ExecOutcome::Execed { denied: 0 }),
        "{outcome:?}"
    );
    pid
}

/// `SigBlk` and `SigIgn` of a child, from its `/proc/self/status`.
fn child_signals(creds: Option<&Credentials>) -> Vec<String> {
    child_signals_as(creds, false)
}

/// [`child_signals`], the child started as [`run_as`] says.
fn child_signals_as(creds: Option<&Credentials>, started: bool) -> Vec<String> {
    // Block SIGUSR1 and SIGTERM in this thread (as the init blocks signals
    // for signalfd); Rust already ignores SIGPIPE process-wide.
    let mut set = nix::sys::signal::SigSet::empty();
    set.add(nix::sys::signal::Signal::SIGUSR1);
    set.add(nix::sys::signal::Signal::SIGTERM);
    let mut old = nix::sys::signal::SigSet::empty();
    nix::sys::signal::pthread_sigmask(
        nix::sys::signal::SigmaskHow::SIG_BLOCK,
        Some(&set),
        Some(&mut old),
    )
    .unwrap();
    let o = run_as(
        &RealSys,
        &[
            "/bin/sh",
            "-c",
            "exec grep -E '^Sig(Blk|Ign)' /proc/self/status",
        ],
        &base_env(),
        None,
        creds,
        started,
    );
    nix::sys::signal::pthread_sigmask(nix::sys::signal::SigmaskHow::SIG_SETMASK, Some(&old), None)
        .unwrap();
    assert_eq!(o.status, ExitStatus::Exited(0), "{:?}", o.stderr);
    o.stdout
}

/// A child's ignored signals: `SIGPIPE` alone (bit 13 - 1), as systemd
/// starts services (`IgnoreSIGPIPE=yes`).
const SIGPIPE_ONLY_IGNORED: &str = "SigIgn:\t0000000000001000";

#[test]
fn child_signal_mask_and_dispositions_are_reset() {
    let _g = process_lock();
    assert_eq!(
        child_signals(None),
        ["SigBlk:\t0000000000000000", SIGPIPE_ONLY_IGNORED]
    );
}

#[test]
fn child_is_a_session_and_group_leader() {
    let _g = process_lock();
    let sys = RealSys::new();
    let argv = args(&["/bin/sleep", "30"]);
    let env = base_env();
    let pid = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
    let (pgrp, session) = pgrp_and_session(pid);
    assert_eq!((pgrp, session), (pid, pid));
    sys.killpg(pid, libc::SIGTERM).unwrap();
    let status = wait_for(&sys, pid);
    assert_eq!(
        status,
        ExitStatus::Signaled {
            signal: libc::SIGTERM,
            core_dumped: false
        }
    );
    assert_eq!(status.to_string(), "killed by SIGTERM");
}

/// Fields 5 and 6 of `/proc/<pid>/stat` (`proc_pid_stat(5)`).
fn pgrp_and_session(pid: Pid) -> (Pid, Pid) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    (f[2].parse().unwrap(), f[3].parse().unwrap())
}

#[test]
fn cwd_and_environment_are_applied() {
    let _g = process_lock();
    let dir = tempfile::tempdir().unwrap();
    let mut env = base_env();
    env.set("FOO", "bar baz").unwrap();
    env.set("NOTIFY_SOCKET", "/run/init/notify/u").unwrap();
    let o = run(
        &RealSys,
        &[
            "/bin/sh",
            "-c",
            "pwd; echo \"$FOO\"; echo \"$NOTIFY_SOCKET\"; env | wc -l",
        ],
        &env,
        Some(dir.path()),
        None,
    );
    let canonical = dir.path().canonicalize().unwrap();
    // sh adds PWD (and maybe SHLVL, _) to what it passes on.
    assert_eq!(
        o.stdout[..3],
        [canonical.to_str().unwrap(), "bar baz", "/run/init/notify/u"]
    );
    let n: usize = o.stdout[3].trim().parse().unwrap();
    assert!((3..=6).contains(&n), "{n} variables");
}

#[test]
fn a_missing_program_fails_before_any_fork() {
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    let argv = args(&["/usr/bin/flotilla-no-such-program", "x"]);
    let err = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/usr/bin/flotilla-no-such-program: no such file"
    );
    let argv = args(&["flotilla-no-such-program"]);
    let err = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "flotilla-no-such-program: not found in PATH"
    );
    assert_eq!(
        sys.spawn(&SpawnRequest::new(&[], &env)).unwrap_err(),
        SysError::EmptyCommand
    );
    let argv = args(&["/bin/true", "a\0b"]);
    assert!(matches!(
        sys.spawn(&SpawnRequest::new(&argv, &env)),
        Err(SysError::Nul { .. })
    ));
    // No child was created.
    assert_eq!(sys.wait_any().unwrap(), None);
}

#[test]
fn a_missing_working_directory_is_reported_and_leaves_no_child() {
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    let argv = args(&["/bin/true"]);
    let req = SpawnRequest::new(&argv, &env).cwd(Path::new("/flotilla/no/such/dir"));
    let err = sys.spawn(&req).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/bin/true: chdir /flotilla/no/such/dir: no such file or directory"
    );
    assert_eq!(sys.wait_any().unwrap(), None);
}

#[test]
fn init_descriptors_do_not_leak_into_children() {
    let _g = process_lock();
    // A descriptor without close-on-exec, as one inherited from whoever
    // started the init would be.
    let file = std::fs::File::open("/proc/self/status").unwrap();
    // SAFETY: fcntl(2) on a descriptor we own; the copy is ours.
    let leaky = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD, 100) };
    assert!(leaky >= 100);
    // SAFETY: fresh descriptor.
    let leaky = unsafe { OwnedFd::from_raw_fd(leaky) };
    let script = "ls /proc/self/fd";
    let o = run(
        &RealSys,
        &["/bin/sh", "-c", script],
        &base_env(),
        None,
        None,
    );
    // 0, 1, 2 and the directory ls reads; nothing else.
    assert_eq!(
        o.stdout,
        ["0", "1", "2", "3"],
        "fd {} leaked?",
        leaky.as_raw_fd()
    );
    if nix::unistd::geteuid().is_root() {
        let creds = Credentials {
            uid: Some(0),
            gid: None,
            groups: None,
        };
        let o = run(
            &RealSys,
            &["/bin/sh", "-c", script],
            &base_env(),
            None,
            Some(&creds),
        );
        assert_eq!(o.stdout, ["0", "1", "2", "3"]);
    }
}

#[test]
fn stdio_null_and_inherit() {
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    // stdin is /dev/null: `read` hits EOF at once and exits 1.
    let argv = args(&["/bin/sh", "-c", "read x; exit $?"]);
    let pid = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(1));
    // Writing to /dev/null succeeds.
    let argv = args(&["/bin/sh", "-c", "echo to-null && echo err-null >&2"]);
    let pid = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
}

#[test]
fn the_same_pipe_can_take_both_streams() {
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    let mut pipe = OutPipe::new(Stream::Stdout).unwrap();
    let argv = args(&["/bin/sh", "-c", "echo a; echo b >&2"]);
    let req = SpawnRequest::new(&argv, &env)
        .stdout(pipe.stdio())
        .stderr(pipe.stdio());
    let pid = sys.spawn(&req).unwrap();
    pipe.close_writer();
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
    let mut got = Vec::new();
    let d = pipe
        .drain(|l| got.push(String::from_utf8_lossy(l.text).into_owned()))
        .unwrap();
    assert_eq!(d, Drained::Closed);
    assert_eq!(got, ["a", "b"]);
}

#[test]
fn kill_refuses_process_groups_and_everyone() {
    let sys = RealSys::new();
    assert!(matches!(
        sys.kill(0, libc::SIGTERM),
        Err(SysError::Kill { .. })
    ));
    assert!(matches!(
        sys.kill(-1, libc::SIGTERM),
        Err(SysError::Kill { .. })
    ));
    assert!(matches!(
        sys.killpg(0, libc::SIGTERM),
        Err(SysError::Kill { .. })
    ));
    let err = sys.kill(i32::MAX, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("kill pid {} signal 0: no such process", i32::MAX)
    );
}

#[test]
fn clocks_and_identity() {
    let sys = RealSys::new();
    let a = sys.monotonic_now();
    let b = sys.monotonic_now();
    assert!(b >= a && a.0 > 0);
    let wall = sys.wall_now();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    assert!((now.as_secs() as i64 - wall.secs).abs() <= 2);
    assert_eq!(sys.getpid(), std::process::id() as Pid);
}

#[test]
fn reads_proc_files_and_mount_points() {
    let sys = RealSys::new();
    let text = sys
        .read_file_limited(Path::new("/proc/self/mountinfo"), MOUNTINFO_MAX)
        .unwrap();
    assert!(!text.is_empty());
    assert!(sys.is_mounted(Path::new("/proc")).unwrap());
    assert!(!sys.is_mounted(Path::new("/flotilla-not-a-mount")).unwrap());
    let err = sys
        .read_file_limited(Path::new("/proc/self/mountinfo"), 10)
        .unwrap_err();
    assert!(matches!(err, SysError::TooLarge { max: 10, .. }));
    let err = sys
        .read_file_limited(Path::new("/flotilla/missing"), 10)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "/flotilla/missing: no such file or directory"
    );
}

#[test]
fn looks_up_users_and_groups() {
    let sys = RealSys::new();
    let root = sys.lookup_user("root").unwrap();
    assert_eq!((root.uid, root.gid), (0, 0));
    assert!(root.groups.contains(&0));
    assert_eq!(sys.lookup_user("0").unwrap().name, "root");
    let anon = sys.lookup_user("4000000").unwrap();
    assert_eq!(
        (anon.uid, anon.gid, anon.groups),
        (4_000_000, 4_000_000, vec![4_000_000])
    );
    assert_eq!(
        sys.lookup_user("flotilla-nobody-xyz")
            .unwrap_err()
            .to_string(),
        "user flotilla-nobody-xyz: no such user"
    );
    assert_eq!(sys.lookup_group("root").unwrap(), 0);
    assert_eq!(sys.lookup_group("77").unwrap(), 77);
    assert!(matches!(
        sys.lookup_group("flotilla-nogroup-xyz"),
        Err(SysError::NoGroup(_))
    ));
    assert_eq!(
        root.credentials(Some(5)),
        Credentials {
            uid: Some(0),
            gid: Some(5),
            groups: Some(root.groups.clone())
        }
    );
}

#[test]
fn subreaper_adopts_orphans() {
    let _g = process_lock();
    let sys = RealSys::new();
    sys.set_child_subreaper().unwrap();
    // sh starts a grandchild and exits at once; the grandchild is
    // re-parented to this process and reaped here.
    let o = run(
        &sys,
        &["/bin/sh", "-c", "/bin/sleep 0.1 & echo $!"],
        &base_env(),
        None,
        None,
    );
    assert_eq!(o.status, ExitStatus::Exited(0));
    let orphan: Pid = o.stdout[0].parse().unwrap();
    assert_eq!(wait_for(&sys, orphan), ExitStatus::Exited(0));
}

// ---- identity changes: these need root (CI runs as root) ----

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

#[test]
fn switches_user_group_and_groups() {
    assert!(
        is_root(),
        "needs root (the README's test command runs as root)"
    );
    let _g = process_lock();
    let creds = Credentials {
        uid: Some(65534),
        gid: Some(65533),
        groups: Some(vec![65533, 4242]),
    };
    let o = run(
        &RealSys,
        &["/bin/sh", "-c", "id -u; id -g; id -G; pwd"],
        &base_env(),
        Some(Path::new("/")),
        Some(&creds),
    );
    assert_eq!(o.status, ExitStatus::Exited(0), "{:?}", o.stderr);
    assert_eq!(o.stdout, ["65534", "65533", "65533 4242", "/"]);
}

#[test]
fn with_credentials_signals_are_reset_and_a_session_made() {
    assert!(
        is_root(),
        "needs root (the README's test command runs as root)"
    );
    let _g = process_lock();
    let creds = Credentials {
        uid: Some(65534),
        gid: Some(65534),
        groups: Some(vec![]),
    };
    assert_eq!(
        child_signals(Some(&creds)),
        ["SigBlk:\t0000000000000000", SIGPIPE_ONLY_IGNORED]
    );
    let sys = RealSys::new();
    let argv = args(&["/bin/sleep", "30"]);
    let env = base_env();
    let pid = sys
        .spawn(&SpawnRequest::new(&argv, &env).credentials(&creds))
        .unwrap();
    assert_eq!(pgrp_and_session(pid), (pid, pid));
    let status_text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(
        status_text
            .lines()
            .any(|l| l.starts_with("Uid:\t65534\t65534")),
        "{status_text}"
    );
    sys.kill(pid, libc::SIGKILL).unwrap();
    assert_eq!(
        wait_for(&sys, pid),
        ExitStatus::Signaled {
            signal: libc::SIGKILL,
            core_dumped: false
        }
    );
}

#[test]
fn with_credentials_failures_are_errors_and_the_child_is_reaped() {
    assert!(
        is_root(),
        "needs root (the README's test command runs as root)"
    );
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    // A directory only root may enter: chdir after setuid fails.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let creds = Credentials {
        uid: Some(65534),
        gid: Some(65534),
        groups: Some(vec![]),
    };
    let argv = args(&["/bin/true"]);
    let err = sys
        .spawn(
            &SpawnRequest::new(&argv, &env)
                .cwd(dir.path())
                .credentials(&creds),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "/bin/true: chdir {}: permission denied",
            dir.path().display()
        )
    );
    // A program the user may not execute: execve fails in the child.
    let prog = dir.path().join("prog");
    std::fs::copy("/bin/true", &prog).unwrap();
    let argv = args(&[prog.to_str().unwrap()]);
    let err = sys
        .spawn(&SpawnRequest::new(&argv, &env).credentials(&creds))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: execve: permission denied", prog.display())
    );
    assert_eq!(sys.wait_any().unwrap(), None);
}

/// The target of `/proc/<pid>/fd/<fd>`.
fn fd_target(pid: &str, fd: RawFd) -> String {
    std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Asserts that every reserved slot holds /dev/null again.
fn assert_slots_hold_null() {
    let (slots, limit) = spawn::tests_support::slots();
    for fd in slots {
        assert_eq!(fd_target("self", fd), "/dev/null", "slot {fd}");
    }
    assert!(slots.iter().all(|&fd| fd > 2 && fd < limit));
    assert_eq!(slots.iter().max().map(|m| m + 1), Some(limit));
}

/// [`Sys::spawn_started`] returns at once; the report, read when its
/// descriptor is ready or once the child is reaped, says what
/// [`Sys::spawn`] would have returned, and a child that failed is reaped
/// by the reading (the loop never sees it). Both ways: a child in flight
/// (`CLONE_VM`, a plain request) and a forked one (a request with handed
/// descriptors).
#[test]
fn a_started_spawn_reports_its_exec_or_the_same_error_as_a_spawn() {
    let _g = process_lock();
    let sys = RealSys::new();
    let mut env = base_env();
    env.set("LISTEN_PID", "0000000000").unwrap();
    let null = std::fs::File::open("/dev/null").unwrap();
    let handed = [null.as_raw_fd()];
    for fds in [&[][..], &handed[..]] {
        let started = |req: SpawnRequest<'_>| {
            let req = req.listen_fds(fds);
            let (pid, watch) = sys.spawn_started(&req).unwrap();
            let watch = watch.expect("a spawn without journal or hand-off is started");
            assert_eq!(watch.pid(), pid);
            (pid, watch)
        };
        let expect_failed = |outcome: ExecOutcome, expected: &SysError| match outcome {
            ExecOutcome::Failed(e) => assert_eq!(&e, expected),
            other => panic!("{other:?}, not {expected:?}"),
        };

        // Exec'd: read on the pipe, then after the reap.
        let truth = args(&["/bin/true"]);
        let (pid, mut watch) = started(SpawnRequest::new(&truth, &env));
        let outcome = watch.wait(no_context);
        assert!(
            matches!(outcome, ExecOutcome::Execed { denied: 0 }),
            "{outcome:?}"
        );
        assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
        let (pid, mut watch) = started(SpawnRequest::new(&truth, &env));
        let status = wait_for(&sys, pid);
        let outcome = watch.read(Some(&status), no_context);
        assert!(
            matches!(outcome, ExecOutcome::Execed { denied: 0 }),
            "{outcome:?}"
        );

        // A step that fails: the chdir.
        let dir = Path::new("/flotilla/no/such/dir");
        let expected = sys
            .spawn(&SpawnRequest::new(&truth, &env).cwd(dir).listen_fds(fds))
            .unwrap_err();
        assert_eq!(
            expected.to_string(),
            "/bin/true: chdir /flotilla/no/such/dir: no such file or directory"
        );
        let (_, mut watch) = started(SpawnRequest::new(&truth, &env).cwd(dir));
        expect_failed(watch.wait(no_context), &expected);
        assert_eq!(sys.wait_any().unwrap(), None);

        // execve itself, read on the pipe and after the reap.
        let tmp = tempfile::tempdir().unwrap();
        let prog = tmp.path().join("garbage");
        std::fs::write(&prog, [0u8, 1, 2, 3, 4, 5, 6, 7]).unwrap();
        std::fs::set_permissions(&prog, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let garbage = args(&[prog.to_str().unwrap()]);
        let expected = sys
            .spawn(&SpawnRequest::new(&garbage, &env).listen_fds(fds))
            .unwrap_err();
        assert_eq!(
            expected,
            SysError::ChildSetup {
                program: prog.display().to_string(),
                step: "execve".into(),
                errno: Os(Errno::ENOEXEC),
                status: 203,
            }
        );
        let (_, mut watch) = started(SpawnRequest::new(&garbage, &env));
        expect_failed(watch.wait(no_context), &expected);
        assert_eq!(sys.wait_any().unwrap(), None);
        let (pid, mut watch) = started(SpawnRequest::new(&garbage, &env));
        let status = wait_for(&sys, pid);
        assert_eq!(status, ExitStatus::Exited(127));
        expect_failed(watch.read(Some(&status), no_context), &expected);
        assert_eq!(sys.wait_any().unwrap(), None);
    }
}

/// A forked child (handed descriptors) gets them as 3, 4, … and its own
/// PID as `LISTEN_PID`, its report descriptor kept out of their way.
#[test]
fn a_forked_child_gets_its_handed_descriptors() {
    let _g = process_lock();
    let sys = RealSys::new();
    let mut env = base_env();
    env.set("LISTEN_PID", "0000000000").unwrap();
    let mut handed = OutPipe::new(Stream::Stdout).unwrap();
    let mut out = OutPipe::new(Stream::Stdout).unwrap();
    let fds = [handed.writer().unwrap().as_raw_fd()];
    let argv = args(&[
        "/bin/sh",
        "-c",
        "echo handed >&3; echo \"$LISTEN_PID $$\"; ls /proc/self/fd | wc -l",
    ]);
    let req = SpawnRequest::new(&argv, &env)
        .stdout(out.stdio())
        .listen_fds(&fds);
    let (pid, watch) = sys.spawn_started(&req).unwrap();
    handed.close_writer();
    out.close_writer();
    let outcome = watch.expect("started").wait(no_context);
    assert!(matches!(outcome, ExecOutcome::Execed { .. }), "{outcome:?}");
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
    let read_all = |pipe: &mut OutPipe| {
        let mut lines = Vec::new();
        loop {
            let d = pipe
                .drain(|l| lines.push(String::from_utf8_lossy(l.text).into_owned()))
                .unwrap();
            if matches!(d, Drained::Closed) {
                return lines;
            }
        }
    };
    assert_eq!(read_all(&mut handed), ["handed"]);
    // `ls` sees 0, 1, 2, 3 and the directory it reads.
    assert_eq!(
        read_all(&mut out),
        [format!("{pid} {pid}"), "5".to_string()]
    );
}

/// systemd's `flags_fds()`: a handed socket reaches the child blocking
/// unless `NonBlocking=yes` asks for `O_NONBLOCK`, and a socket on a
/// standard stream alone is blocking whatever the request says. The
/// child's own view: the `flags:` of its `/proc/self/fdinfo`.
#[test]
fn handed_sockets_are_blocking_unless_non_blocking_is_asked() {
    let _g = process_lock();
    let sys = RealSys::new();
    let mut env = base_env();
    env.set("LISTEN_PID", "0000000000").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let argv = args(&[
        "/bin/sh",
        "-c",
        "for f in \"$@\"; do sed -n 's/^flags:[[:space:]]*//p' /proc/self/fdinfo/$f; done",
        "sh",
    ]);
    // The flags of the child's descriptors `fds`, in octal.
    let child_flags = |req: SpawnRequest<'_>, fds: &[&str]| -> Vec<libc::c_int> {
        let mut argv = argv.clone();
        argv.extend(fds.iter().map(|f| f.to_string()));
        let mut out = OutPipe::new(Stream::Stdout).unwrap();
        let req = SpawnRequest { argv: &argv, ..req }.stdout(out.stdio());
        let pid = sys.spawn(&req).unwrap();
        out.close_writer();
        assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
        let mut lines = Vec::new();
        while !matches!(
            out.drain(|l| lines.push(String::from_utf8_lossy(l.text).into_owned()))
                .unwrap(),
            Drained::Closed
        ) {}
        lines
            .iter()
            .map(|l| libc::c_int::from_str_radix(l.trim(), 8).unwrap())
            .collect()
    };
    let nonblocking = |f: libc::c_int| f & libc::O_NONBLOCK != 0;
    let listener = |name: &str, nonblocking: bool| {
        let l = std::os::unix::net::UnixListener::bind(dir.path().join(name)).unwrap();
        l.set_nonblocking(nonblocking).unwrap();
        l
    };

    // The default: the init's non-blocking socket is handed blocking.
    let l = listener("a", true);
    let fds = [l.as_raw_fd()];
    let req = SpawnRequest::new(&argv, &env).listen_fds(&fds);
    let flags = child_flags(req, &["3"]);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert!(!nonblocking(flags[0]), "fd 3 flags {:o}", flags[0]);

    // NonBlocking=yes: a blocking socket is handed non-blocking.
    let l = listener("b", false);
    let fds = [l.as_raw_fd()];
    let req = SpawnRequest::new(&argv, &env)
        .listen_fds(&fds)
        .listen_nonblocking(true);
    let flags = child_flags(req, &["3"]);
    assert!(nonblocking(flags[0]), "fd 3 flags {:o}", flags[0]);

    // A socket on standard input alone (`StandardInput=socket`): blocking,
    // whatever `NonBlocking=` says.
    let l = listener("c", true);
    let req = SpawnRequest::new(&argv, &env)
        .stdin(Stdio::Socket(l.as_raw_fd()))
        .listen_nonblocking(true);
    let flags = child_flags(req, &["0"]);
    assert!(!nonblocking(flags[0]), "fd 0 flags {:o}", flags[0]);
}

/// Forked children write their output to the pipes they were given, and
/// the init's slots hold `/dev/null` again after each spawn.
#[test]
fn a_forked_child_gets_its_streams() {
    let _g = process_lock();
    let sys = RealSys::new();
    let env = base_env();
    let argv = args(&["/bin/sh", "-c", "echo out; echo err >&2"]);
    let mut out = OutPipe::new(Stream::Stdout).unwrap();
    let mut err = OutPipe::new(Stream::Stderr).unwrap();
    let req = SpawnRequest::new(&argv, &env)
        .stdout(out.stdio())
        .stderr(err.stdio());
    let (pid, watch) = sys.spawn_started(&req).unwrap();
    out.close_writer();
    err.close_writer();
    assert_slots_hold_null();
    let outcome = watch.expect("forked").wait(no_context);
    assert!(matches!(outcome, ExecOutcome::Execed { .. }), "{outcome:?}");
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(0));
    let read_all = |pipe: &mut OutPipe| {
        let mut lines = Vec::new();
        loop {
            let d = pipe
                .drain(|l| lines.push(String::from_utf8_lossy(l.text).into_owned()))
                .unwrap();
            if matches!(d, Drained::Closed) {
                return lines;
            }
        }
    };
    assert_eq!(read_all(&mut out), ["out"]);
    assert_eq!(read_all(&mut err), ["err"]);
}
