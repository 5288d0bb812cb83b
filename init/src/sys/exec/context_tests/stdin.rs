//! Standard input opened by the unit's own process (`terminal.rs`): a file,
//! and a terminal (a pseudo-terminal the test makes) taken as the
//! controlling terminal as `tty`, `tty-force` and `tty-fail` say, reset
//! and hung up first when asked.

use std::ffi::CStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::time::{Duration, Instant};

use super::{argv, child_context, ctx, env, pipe, run};
use crate::sys::real::RealSys;
use crate::sys::tests::{process_lock, wait_for};
use crate::sys::*;

/// A pseudo-terminal: its master and the path of its slave.
fn pty() -> (OwnedFd, String) {
    // SAFETY: posix_openpt(3) and friends on the descriptor they return;
    // ptsname_r(3) into a buffer of the size given.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(m >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let mut buf = [0 as libc::c_char; 64];
        assert_eq!(libc::ptsname_r(m, buf.as_mut_ptr(), buf.len()), 0);
        let name = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
        (OwnedFd::from_raw_fd(m), name)
    }
}

/// Spawns `cmd` with the context of `pairs`, stdin left to the context,
/// stdout and stderr into a pipe (unless the context puts them on the
/// terminal); its PID and the pipe's read end.
fn spawn(cmd: &[&str], pairs: &[(&str, &str)]) -> (Pid, OwnedFd) {
    let c = ctx(pairs);
    let cc = child_context(&c, &Default::default());
    assert!(cc.detaches(), "a terminal or file is opened off the loop");
    let (r, w) = pipe();
    let a = argv(cmd);
    let e = env();
    let on_tty = c.tty_streams().map_or([false; 3], |(_, on)| on);
    let out = |on: bool| {
        if on {
            Stdio::Inherit
        } else {
            Stdio::Fd(w.as_fd())
        }
    };
    let req = SpawnRequest::new(&a, &e)
        .stdin(Stdio::Inherit)
        .stdout(out(on_tty[1]))
        .stderr(out(on_tty[2]))
        .context(&cc);
    let pid = RealSys::new().spawn(&req).unwrap();
    (pid, r)
}

fn read_all(r: OwnedFd) -> String {
    let mut out = String::new();
    std::fs::File::from(r).read_to_string(&mut out).unwrap();
    out
}

/// What the master end reads until `want` shows (the terminal echoes).
fn read_until(master: &OwnedFd, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = Vec::new();
    let mut m = std::fs::File::from(master.try_clone().unwrap());
    // SAFETY: fcntl(2) on our descriptor.
    unsafe { libc::fcntl(m.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    while !String::from_utf8_lossy(&seen).contains(want) {
        assert!(
            Instant::now() < deadline,
            "no {want:?} on the terminal: {:?}",
            String::from_utf8_lossy(&seen)
        );
        let mut p = libc::pollfd {
            fd: m.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one valid pollfd.
        unsafe { libc::poll(&mut p, 1, 1000) };
        let mut buf = [0u8; 256];
        if let Ok(n) = m.read(&mut buf) {
            seen.extend_from_slice(&buf[..n]);
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// The controlling terminal of `pid` (`tty_nr` of `/proc/PID/stat`).
fn tty_nr(pid: Pid) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').nth(4).unwrap().parse().unwrap()
}

#[test]
fn a_file_is_standard_input() {
    let _g = process_lock();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("in.txt");
    std::fs::write(&f, "from the file\n").unwrap();
    let (pid, r) = spawn(
        &["cat"],
        &[("StandardInput", &format!("file:{}", f.display()))],
    );
    assert_eq!(read_all(r), "from the file\n");
    assert!(wait_for(&RealSys::new(), pid).success());
    // A file that is not there: systemd's EXIT_STDIN, and why.
    let missing = format!("file:{}/none", dir.path().display());
    let cc = child_context(&ctx(&[("StandardInput", &missing)]), &Default::default());
    let (status, out) = run(&["cat"], &cc, None);
    assert_eq!(status, ExitStatus::Exited(208), "{out}");
    assert!(
        out.ends_with(&format!(
            "StandardInput= open {}/none: No such file or directory\n",
            dir.path().display()
        )),
        "{out}"
    );
}

#[test]
fn a_terminal_is_taken_as_the_controlling_terminal_reset_first() {
    let _g = process_lock();
    let (master, path) = pty();
    let rdev = std::fs::metadata(&path).unwrap().rdev();
    let open = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&path)
            .unwrap()
    };
    // Raw mode left behind by an earlier user of the terminal, who still
    // has it open (the hang-up cuts it off).
    let earlier = open();
    // SAFETY: termios calls on our descriptor.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        libc::tcgetattr(earlier.as_raw_fd(), &mut t);
        libc::cfmakeraw(&mut t);
        assert_eq!(libc::tcsetattr(earlier.as_raw_fd(), libc::TCSANOW, &t), 0);
    }
    // All three streams on the terminal, as serial-getty@.service has it.
    let (pid, _r) = spawn(
        &["sh", "-c", "read line; echo \"got $line\"; tty"],
        &[
            ("StandardInput", "tty"),
            ("StandardOutput", "tty"),
            ("TTYPath", &path),
            ("TTYReset", "yes"),
            ("TTYVHangup", "yes"),
        ],
    );
    // The reset gave back canonical mode and echo before sh reads.
    let deadline = Instant::now() + Duration::from_secs(20);
    while tty_nr(pid) == 0 {
        assert!(Instant::now() < deadline, "no controlling terminal");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(tty_nr(pid), rdev);
    let now = open();
    // SAFETY: tcgetattr(3) on our descriptors.
    let (lflag, hung_up) = unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(now.as_raw_fd(), &mut t), 0);
        let mut old: libc::termios = std::mem::zeroed();
        (
            t.c_lflag,
            libc::tcgetattr(earlier.as_raw_fd(), &mut old) < 0,
        )
    };
    assert_eq!(
        lflag & (libc::ICANON | libc::ECHO),
        libc::ICANON | libc::ECHO
    );
    assert!(
        hung_up,
        "TTYVHangup= left the earlier opener's descriptor working"
    );
    std::fs::File::from(master.try_clone().unwrap())
        .write_all(b"hello\n")
        .unwrap();
    let seen = read_until(&master, &path);
    assert!(seen.contains("got hello"), "{seen:?}");
    assert!(wait_for(&RealSys::new(), pid).success());
}

#[test]
fn tty_fail_fails_tty_force_takes_and_tty_waits_for_another_session() {
    let _g = process_lock();
    let (_master, path) = pty();
    let sys = RealSys::new();
    let tty = |mode: &'static str| -> Vec<(&'static str, String)> {
        vec![
            ("StandardInput", mode.to_string()),
            ("TTYPath", path.clone()),
            ("StandardOutput", "journal".into()),
        ]
    };
    fn pairs<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
        v.iter().map(|(k, v)| (*k, v.as_str())).collect()
    }
    // A session holds the terminal.
    let (holder, _) = spawn(&["sleep", "60"], &pairs(&tty("tty-force")));
    let deadline = Instant::now() + Duration::from_secs(20);
    while tty_nr(holder) == 0 {
        assert!(Instant::now() < deadline, "the holder has no terminal");
        std::thread::sleep(Duration::from_millis(20));
    }
    // tty-fail: EXIT_STDIN, and why.
    let (pid, r) = spawn(&["true"], &pairs(&tty("tty-fail")));
    assert_eq!(wait_for(&sys, pid), ExitStatus::Exited(208));
    let out = read_all(r);
    assert!(
        out.contains(&format!(
            "StandardInput= take (or fail) the terminal {path}: Operation not permitted"
        )),
        "{out}"
    );
    // tty: waits while the holder has it; runs once it is gone.
    let (waiter, r) = spawn(&["sh", "-c", "tty"], &pairs(&tty("tty")));
    // It waits: the terminal open, an inotify watch on it, no program run.
    let fds = |pid: Pid| -> Vec<String> {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|d| {
                d.flatten()
                    .filter_map(|e| std::fs::read_link(e.path()).ok())
                    .map(|l| l.to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(fds(waiter).iter().any(|l| l == "anon_inode:inotify") && fds(waiter).contains(&path)) {
        assert!(
            Instant::now() < deadline,
            "the waiter does not wait: {:?}",
            fds(waiter)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(tty_nr(waiter), 0, "the waiter took the terminal");
    let _ = sys.kill(holder, libc::SIGKILL);
    wait_for(&sys, holder);
    assert!(wait_for(&sys, waiter).success());
    assert_eq!(read_all(r), format!("{path}\n"));
    // tty-force: taken from a holder.
    let (holder, _) = spawn(&["sleep", "60"], &pairs(&tty("tty-force")));
    let (pid, r) = spawn(&["sh", "-c", "tty"], &pairs(&tty("tty-force")));
    assert!(wait_for(&sys, pid).success());
    assert_eq!(read_all(r), format!("{path}\n"));
    let _ = sys.kill(holder, libc::SIGKILL);
    wait_for(&sys, holder);
}
