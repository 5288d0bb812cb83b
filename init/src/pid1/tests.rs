//! Unit tests of PID 1's duties with the recording fake: no mount, kill or
//! reboot reaches the host.

use super::*;
use crate::sys::fake::{Call, FakeSys, Op};
use crate::sys::ExitStatus;

/// The time-outs of the waits made so far.
fn waits(sys: &FakeSys) -> Vec<Option<Duration>> {
    sys.calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::Wait(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// The directories made so far.
fn mkdirs(sys: &FakeSys) -> Vec<PathBuf> {
    sys.calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::CreateDir(p) => Some(p),
            _ => None,
        })
        .collect()
}

fn mounts(calls: &[Call]) -> Vec<(String, String)> {
    calls
        .iter()
        .filter_map(|c| match c {
            Call::Mount { target, fstype, .. } => Some((
                target.display().to_string(),
                fstype.clone().unwrap_or_default(),
            )),
            _ => None,
        })
        .collect()
}

fn spawn(sys: &FakeSys, name: &str) -> Pid {
    let argv = vec![name.to_string()];
    let env = Env::new();
    sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap()
}

const MOUNTINFO: &str = "\
22 1 0:21 / /proc rw - proc proc rw
23 1 0:22 / /sys rw - sysfs sysfs rw
1 0 0:1 / / rw - rootfs rootfs rw
";

#[test]
fn the_place_comes_from_reboot_cad_off() {
    assert_eq!(detect_place(&Ok(())).0, Place::Machine);
    let err = |e| SysError::Call {
        call: "reboot(RB_DISABLE_CAD)".into(),
        errno: Os(e),
    };
    assert_eq!(detect_place(&Err(err(Errno::EINVAL))).0, Place::Container);
    assert_eq!(detect_place(&Err(err(Errno::EPERM))).0, Place::Container);
    // Anything unexpected: a machine, whose PID 1 never exits.
    assert_eq!(detect_place(&Err(err(Errno::EIO))).0, Place::Machine);
    assert_eq!(detect_place(&Err(SysError::EmptyCommand)).0, Place::Machine);
}

#[test]
fn mounts_only_what_is_missing_in_order() {
    let sys = FakeSys::pid1();
    sys.set_file("/proc/self/mountinfo", MOUNTINFO);
    let lines = mount_missing(&sys, Place::Machine);
    assert_eq!(
        mounts(&sys.calls()),
        [
            ("/sys/fs/cgroup", "cgroup2"),
            ("/dev", "devtmpfs"),
            ("/dev/pts", "devpts"),
            ("/dev/shm", "tmpfs"),
            ("/run", "tmpfs")
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert_eq!(
        mkdirs(&sys),
        ["/sys/fs/cgroup", "/dev", "/dev/pts", "/dev/shm", "/run"].map(PathBuf::from)
    );
    assert_eq!(lines[0], "init: mounted /sys/fs/cgroup (cgroup2)");
    assert_eq!(lines[1], "init: mounted /dev (devtmpfs)");
    let dev = sys
        .calls()
        .into_iter()
        .find(|c| matches!(c, Call::Mount { target, .. } if target == Path::new("/dev")))
        .unwrap();
    assert!(matches!(dev, Call::Mount { flags, data: Some(d), .. }
        if flags == MsFlags::MS_NOSUID && d == "mode=0755"));
}

#[test]
fn without_proc_nothing_else_is_mounted_blindly() {
    let sys = FakeSys::pid1();
    sys.fail_next(
        Op::Mount,
        SysError::Mount {
            op: "mount",
            target: "/proc".into(),
            errno: Os(Errno::EPERM),
        },
    );
    sys.set_link("/proc/self", "1");
    let lines = mount_missing(&sys, Place::Container);
    // /proc failed: nothing else can be told apart, nothing else mounted.
    assert_eq!(
        mounts(&sys.calls()),
        [("/proc".to_string(), "proc".to_string())]
    );
    assert_eq!(lines[0], "init: mount /proc: operation not permitted");
    assert_eq!(lines.len(), 7, "{lines:?}");
    assert!(
        lines[1].starts_with("init: /sys: not mounted: "),
        "{lines:?}"
    );
}

#[test]
fn a_container_sharing_the_parents_proc_mounts_nothing() {
    let sys = FakeSys::pid1();
    sys.set_link("/proc/self", "31337");
    let lines = mount_missing(&sys, Place::Container);
    assert!(mounts(&sys.calls()).is_empty());
    assert!(lines[0].contains("mounting nothing"), "{lines:?}");
    // On a machine /proc/self is never consulted.
    sys.set_file("/proc/self/mountinfo", MOUNTINFO);
    let lines = mount_missing(&sys, Place::Machine);
    assert_eq!(mounts(&sys.calls()).len(), 5, "{lines:?}");
}

#[test]
fn hostname_file() {
    assert_eq!(hostname_of(b"vm1\n"), Some("vm1".into()));
    assert_eq!(
        hostname_of(b"# the name\n\n  box.example  # here\n"),
        Some("box.example".into())
    );
    assert_eq!(hostname_of(b"\n# nothing\n"), None);
    assert_eq!(hostname_of(&[b'x'; 65]), None);
}

#[test]
fn boot_on_a_machine() {
    let sys = FakeSys::pid1();
    sys.set_file("/proc/self/mountinfo", MOUNTINFO);
    sys.set_file("/etc/hostname", "flotilla-vm\n");
    sys.set_stdio_open([false, false, false]);
    sys.set_console_ok(false);
    let place = boot(&sys);
    assert_eq!(place, Place::Machine);
    let calls = sys.calls();
    // Tried before the mounts and again after devtmpfs.
    assert_eq!(calls[0], Call::OpenConsole);
    assert_eq!(calls[1], Call::SetCadDisabled);
    assert_eq!(calls.iter().filter(|c| **c == Call::OpenConsole).count(), 2);
    assert!(calls.contains(&Call::Sethostname("flotilla-vm".into())));
    assert_eq!(calls.last(), Some(&Call::SetDefaultPath(true)));
}

/// `/dev/fd` and the standard streams' links are made after devtmpfs, as
/// systemd's `dev_setup` makes them (bash's `<(…)` opens `/dev/fd/63`);
/// `/dev/core` only with `/proc/kcore`; one already there is left alone.
#[test]
fn boot_makes_the_dev_links() {
    let sys = FakeSys::pid1();
    sys.set_file("/proc/self/mountinfo", MOUNTINFO);
    sys.set_file("/dev/stderr", "");
    boot(&sys);
    let links: Vec<(PathBuf, PathBuf)> = sys
        .calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::Symlink { target, link } => Some((link, target)),
            _ => None,
        })
        .collect();
    let want: Vec<(PathBuf, PathBuf)> = DEV_LINKS[..3]
        .iter()
        .map(|(l, t)| (PathBuf::from(l), PathBuf::from(t)))
        .collect();
    assert_eq!(links, want);
    let sys = FakeSys::pid1();
    sys.set_file("/proc/self/mountinfo", MOUNTINFO);
    sys.set_file("/proc/kcore", "");
    boot(&sys);
    assert!(sys.calls().contains(&Call::Symlink {
        target: "/proc/kcore".into(),
        link: "/dev/core".into()
    }));
}

/// The unix datagram queue is raised to systemd's 512 before any socket
/// is made, never lowered, and left when `/proc` does not say.
#[test]
fn boot_raises_the_unix_datagram_queue() {
    let qlen = "/proc/sys/net/unix/max_dgram_qlen";
    let sys = FakeSys::pid1();
    sys.set_file("/proc/self/mountinfo", MOUNTINFO);
    sys.set_file(qlen, "10\n");
    boot(&sys);
    let want = Call::WriteSysctl(qlen.into(), "512\n".into());
    assert!(sys.calls().contains(&want), "{:?}", sys.calls());
    assert_eq!(raised_dgram_qlen(b"10\n"), Some(512));
    assert_eq!(raised_dgram_qlen(b"512"), None);
    assert_eq!(raised_dgram_qlen(b"4096\n"), None);
    assert_eq!(raised_dgram_qlen(b"x"), None);
    let sys = FakeSys::pid1();
    sys.set_file("/proc/self/mountinfo", MOUNTINFO);
    sys.set_file(qlen, "1024\n");
    boot(&sys);
    assert!(!sys
        .calls()
        .iter()
        .any(|c| matches!(c, Call::WriteSysctl(..))));
}

#[test]
fn boot_in_a_container_leaves_the_hostname() {
    let sys = FakeSys::pid1();
    sys.set_file("/proc/self/mountinfo", MOUNTINFO);
    sys.set_file("/etc/hostname", "other\n");
    sys.fail_next(
        Op::SetCadDisabled,
        SysError::Call {
            call: "reboot(RB_DISABLE_CAD)".into(),
            errno: Os(Errno::EINVAL),
        },
    );
    sys.set_link("/proc/self", "1");
    assert_eq!(boot(&sys), Place::Container);
    assert!(!sys.calls().contains(&Call::OpenConsole), "stdio was there");
    assert!(!sys
        .calls()
        .iter()
        .any(|c| matches!(c, Call::Sethostname(_))));
}

#[test]
fn container_exit_statuses() {
    use ShutdownKind::*;
    assert_eq!(container_exit_status(Poweroff, false), 0);
    assert_eq!(container_exit_status(Halt, false), 0);
    assert_eq!(container_exit_status(Poweroff, true), 1);
    assert_eq!(container_exit_status(Halt, true), 1);
    assert_eq!(container_exit_status(Reboot, false), 133);
    assert_eq!(container_exit_status(Reboot, true), 133);
    assert_eq!(sigint_kind(Place::Machine), Reboot);
    assert_eq!(sigint_kind(Place::Container), Poweroff);
}

#[test]
fn container_end_kills_and_stops_there() {
    let sys = FakeSys::pid1();
    let a = spawn(&sys, "a");
    let b = spawn(&sys, "b");
    sys.set_kill_exits(true);
    let r = final_sequence(&sys, ShutdownKind::Poweroff, Place::Container, GRACE);
    assert_eq!(r, Ok(()));
    let calls = sys.calls();
    let tail: Vec<_> = calls
        .iter()
        .filter(|c| !matches!(c, Call::Spawn(_)))
        .cloned()
        .collect();
    assert_eq!(
        tail,
        [
            Call::KillAll {
                signal: libc::SIGTERM
            },
            Call::KillAll {
                signal: libc::SIGCONT
            }
        ]
    );
    assert!(!sys.is_live(a) && !sys.is_live(b));
    assert!(waits(&sys).is_empty(), "they were gone at the first look");
}

#[test]
fn machine_end_waits_for_sigchld_then_syncs_unmounts_and_powers_off() {
    let sys = FakeSys::pid1();
    sys.set_file(
        "/proc/self/mountinfo",
        "\
1 0 0:1 / / rw - rootfs rootfs rw
22 1 0:21 / /proc rw - proc proc rw
24 1 0:5 / /dev rw - devtmpfs devtmpfs rw
25 24 0:23 / /dev/pts rw - devpts devpts rw
30 1 0:30 / /run rw - tmpfs tmpfs rw
31 1 8:1 / /data rw - ext4 /dev/sda1 rw
32 31 8:2 / /data/busy rw - ext4 /dev/sda2 rw
",
    );
    sys.fail_next(
        Op::Umount,
        SysError::Mount {
            op: "umount",
            target: "/data/busy".into(),
            errno: Os(Errno::EBUSY),
        },
    );
    let slow = spawn(&sys, "slow");
    // The process exits 300 ms after SIGTERM: the wait wakes on SIGCHLD.
    sys.on_wait(Box::new(move |s: &FakeSys, _| {
        s.advance(Duration::from_millis(300));
        s.exit(slow, ExitStatus::Exited(0));
    }));
    let r = final_sequence(&sys, ShutdownKind::Poweroff, Place::Machine, GRACE);
    assert_eq!(r, Ok(()), "the fake reboot returns");
    let w = waits(&sys);
    assert_eq!(w.len(), 1);
    assert!(w[0].unwrap() <= GRACE);
    let calls: Vec<Call> = sys
        .calls()
        .into_iter()
        .filter(|c| {
            !matches!(
                c,
                Call::Spawn(_) | Call::ReadFile { .. } | Call::Wait(_) | Call::OpenEvents
            )
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            Call::KillAll {
                signal: libc::SIGTERM
            },
            Call::KillAll {
                signal: libc::SIGCONT
            },
            Call::Sync,
            Call::Umount("/data/busy".into()),
            Call::RemountReadonly("/data/busy".into()),
            Call::Umount("/data".into()),
            Call::Umount("/run".into()),
            Call::RemountReadonly("/".into()),
            Call::Sync,
            Call::Reboot(RebootCmd::PowerOff),
        ]
    );
}

#[test]
fn a_process_that_ignores_sigterm_gets_sigkill_after_the_grace_period() {
    let sys = FakeSys::pid1();
    let stubborn = spawn(&sys, "stubborn");
    sys.on_wait(Box::new(move |s: &FakeSys, t| {
        let killed = s.calls().contains(&Call::KillAll {
            signal: libc::SIGKILL,
        });
        if killed {
            s.exit(
                stubborn,
                ExitStatus::Signaled {
                    signal: libc::SIGKILL,
                    core_dumped: false,
                },
            );
        } else {
            s.advance(t.unwrap());
        }
    }));
    let r = final_sequence(&sys, ShutdownKind::Reboot, Place::Machine, GRACE);
    assert_eq!(r, Ok(()));
    let calls = sys.calls();
    let pos = |c: &Call| calls.iter().position(|x| x == c).unwrap();
    assert!(
        pos(&Call::KillAll {
            signal: libc::SIGTERM
        }) < pos(&Call::KillAll {
            signal: libc::SIGKILL
        })
    );
    assert_eq!(sys.monotonic_now().as_millis(), 2000, "exactly the grace");
    assert_eq!(calls.last(), Some(&Call::Reboot(RebootCmd::Restart)));
}

#[test]
fn halt_and_a_failed_reboot_is_returned() {
    let sys = FakeSys::pid1();
    sys.fail_next(
        Op::Reboot,
        SysError::Call {
            call: "reboot(RB_HALT_SYSTEM)".into(),
            errno: Os(Errno::EPERM),
        },
    );
    let r = final_sequence(&sys, ShutdownKind::Halt, Place::Machine, GRACE);
    assert!(r.is_err());
    assert_eq!(sys.calls().last(), Some(&Call::Reboot(RebootCmd::Halt)));
    // No child at all: no kill.
    assert!(!sys
        .calls()
        .iter()
        .any(|c| matches!(c, Call::KillAll { .. })));
}

#[test]
fn a_container_without_a_terminal_gets_no_emergency_shell() {
    assert!(shell_possible(Place::Machine, false));
    assert!(shell_possible(Place::Machine, true));
    assert!(shell_possible(Place::Container, true));
    assert!(!shell_possible(Place::Container, false));
}

#[test]
fn emergency_shell_restarts_with_back_off_and_signals_end_it() {
    let sys = FakeSys::pid1();
    let mut em = Emergency::new(&sys, "/bin/sh");
    assert_eq!(em.step(&sys, Place::Machine, &[]), Step::Wait(None));
    let shell = em.shell().unwrap();
    let rec = &sys.spawns()[0];
    assert_eq!(rec.argv, ["/bin/sh"]);
    assert_eq!(
        (rec.stdin, rec.stdout, rec.stderr),
        (
            crate::sys::fake::StdioRecord::Inherit,
            crate::sys::fake::StdioRecord::Inherit,
            crate::sys::fake::StdioRecord::Inherit
        )
    );
    assert_eq!(rec.env_var("PS1").as_deref(), Some("(emergency) # "));
    // An orphan and the shell die at once: both reaped, the shell waits 1 s.
    sys.push_exit(77_777, ExitStatus::Exited(0));
    sys.push_exit(shell, ExitStatus::Exited(0));
    assert_eq!(
        em.step(&sys, Place::Machine, &[libc::SIGCHLD]),
        Step::Wait(Some(Duration::from_secs(1)))
    );
    assert_eq!(em.shell(), None);
    sys.advance(Duration::from_secs(1));
    assert_eq!(em.step(&sys, Place::Machine, &[]), Step::Wait(None));
    let second = em.shell().unwrap();
    assert_ne!(second, shell);
    // Dies at once again: the delay doubles.
    sys.push_exit(second, ExitStatus::Exited(1));
    assert_eq!(
        em.step(&sys, Place::Machine, &[libc::SIGCHLD]),
        Step::Wait(Some(Duration::from_secs(2)))
    );
    // Ignored signals do nothing; the shutdown signals end the mode.
    assert!(matches!(
        em.step(&sys, Place::Machine, &[libc::SIGUSR1, libc::SIGHUP]),
        Step::Wait(Some(_))
    ));
    assert_eq!(
        em.step(&sys, Place::Machine, &[libc::SIGTERM]),
        Step::Shutdown(ShutdownKind::Poweroff)
    );
    assert_eq!(
        em.step(&sys, Place::Machine, &[libc::SIGPWR]),
        Step::Shutdown(ShutdownKind::Poweroff)
    );
    assert_eq!(
        em.step(&sys, Place::Machine, &[libc::SIGINT]),
        Step::Shutdown(ShutdownKind::Reboot)
    );
    assert_eq!(
        em.step(&sys, Place::Container, &[libc::SIGINT]),
        Step::Shutdown(ShutdownKind::Poweroff)
    );
}

#[test]
fn emergency_without_a_shell_keeps_trying_and_reaping() {
    let sys = FakeSys::pid1();
    sys.fail_next(
        Op::Spawn,
        SysError::NoProgram {
            program: "/bin/sh".into(),
            reason: "no such file".into(),
        },
    );
    let mut em = Emergency::new(&sys, "/bin/sh");
    assert_eq!(
        em.step(&sys, Place::Container, &[]),
        Step::Wait(Some(Duration::from_secs(1)))
    );
    assert_eq!(em.shell(), None);
    sys.push_exit(4321, ExitStatus::Exited(0));
    sys.advance(Duration::from_millis(500));
    // Reaped while waiting; the next attempt still 500 ms away.
    assert_eq!(
        em.step(&sys, Place::Container, &[libc::SIGCHLD]),
        Step::Wait(Some(Duration::from_millis(500)))
    );
    assert_eq!(sys.wait_any(), Ok(None));
    sys.advance(Duration::from_millis(500));
    assert_eq!(em.step(&sys, Place::Container, &[]), Step::Wait(None));
    assert!(em.shell().is_some());
}
