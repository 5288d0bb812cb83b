//! Tests of the fake itself: what it records and how it answers.

use super::*;
use crate::sys::{Credentials, Env, MountRequest, MsFlags, RebootCmd, SpawnRequest, Stdio};

#[test]
fn records_spawns_with_their_context() {
    let sys = FakeSys::new();
    let argv = vec!["/bin/svc".to_string(), "-f".to_string()];
    let mut env = Env::new();
    env.set("NOTIFY_SOCKET", "/run/init/notify/svc").unwrap();
    let creds = Credentials {
        uid: Some(1000),
        gid: Some(1000),
        groups: None,
    };
    let req = SpawnRequest::new(&argv, &env)
        .cwd(Path::new("/srv"))
        .credentials(&creds)
        .stdout(Stdio::Inherit);
    let pid = sys.spawn(&req).unwrap();
    assert_eq!(pid, 1000);
    let spawns = sys.spawns();
    let s = spawns.first().unwrap();
    assert_eq!(s.argv, argv);
    assert_eq!(
        s.env_var("NOTIFY_SOCKET").as_deref(),
        Some("/run/init/notify/svc")
    );
    assert_eq!(s.cwd.as_deref(), Some(Path::new("/srv")));
    assert_eq!(s.credentials.as_ref(), Some(&creds));
    assert_eq!(
        (s.stdin, s.stdout, s.stderr),
        (StdioRecord::Null, StdioRecord::Inherit, StdioRecord::Null)
    );
    assert!(sys.is_live(pid));
}

#[test]
fn scripted_failures_come_in_order() {
    let sys = FakeSys::new();
    let argv = vec!["x".to_string()];
    let env = Env::new();
    let err = SysError::NoProgram {
        program: "x".into(),
        reason: "not found in PATH".into(),
    };
    sys.fail_next(Op::Spawn, err.clone());
    assert_eq!(sys.spawn(&SpawnRequest::new(&argv, &env)), Err(err));
    assert_eq!(sys.spawn(&SpawnRequest::new(&argv, &env)), Ok(1000));
    assert_eq!(
        sys.spawn(&SpawnRequest::new(&[], &env)),
        Err(SysError::EmptyCommand)
    );
    assert_eq!(sys.spawns().len(), 1);
    assert_eq!(sys.calls().len(), 3);

    let kill_err = SysError::Kill {
        target: "pid 5".into(),
        signal: 15,
        errno: Os(Errno::ESRCH),
    };
    sys.fail_next(Op::Kill, kill_err.clone());
    assert_eq!(sys.kill(5, 15), Err(kill_err));
    assert_eq!(sys.kill(5, 15), Ok(()));
}

#[test]
fn kill_exits_reap_as_signalled() {
    let sys = FakeSys::new();
    sys.set_kill_exits(true);
    let argv = vec!["/bin/sleep".to_string()];
    let env = Env::new();
    let a = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
    let b = sys.spawn(&SpawnRequest::new(&argv, &env)).unwrap();
    sys.killpg(a, 15).unwrap();
    sys.kill(a, 15).unwrap(); // a second signal does not queue a second exit
    sys.kill(b, 0).unwrap(); // signal 0 only probes
    assert_eq!(
        sys.wait_any().unwrap(),
        Some((
            a,
            ExitStatus::Signaled {
                signal: 15,
                core_dumped: false
            }
        ))
    );
    assert_eq!(sys.wait_any().unwrap(), None);
    assert!(!sys.is_live(a) && sys.is_live(b));
    sys.kill_all(9).unwrap();
    assert_eq!(
        sys.wait_any().unwrap(),
        Some((
            b,
            ExitStatus::Signaled {
                signal: 9,
                core_dumped: false
            }
        ))
    );
}

#[test]
fn clock_moves_only_when_told() {
    let sys = FakeSys::new();
    let w0 = sys.wall_now();
    sys.advance(Duration::from_millis(1500));
    assert_eq!(sys.monotonic_now(), Instant(1_500_000_000));
    assert_eq!(
        sys.wall_now(),
        WallTime {
            secs: w0.secs + 1,
            nanos: 500_000_000
        }
    );
    sys.advance(Duration::from_millis(600));
    assert_eq!(
        sys.wall_now(),
        WallTime {
            secs: w0.secs + 2,
            nanos: 100_000_000
        }
    );
    sys.set_monotonic(Instant(7));
    assert_eq!(sys.monotonic_now(), Instant(7));
    assert_eq!(sys.wall_now().rfc3339(), "2026-11-22T04:00:02.100Z");
}

#[test]
fn files_users_and_mounts() {
    let sys = FakeSys::pid1();
    assert_eq!(sys.getpid(), 1);
    sys.set_file(
        "/proc/self/mountinfo",
        "22 1 0:21 / /proc rw - proc proc rw\n",
    );
    assert!(sys.is_mounted(Path::new("/proc")).unwrap());
    assert!(!sys.is_mounted(Path::new("/sys")).unwrap());
    assert!(matches!(
        sys.read_file_limited(Path::new("/nope"), 10),
        Err(SysError::Read { .. })
    ));
    sys.set_file("/big", vec![b'x'; 11]);
    assert!(matches!(
        sys.read_file_limited(Path::new("/big"), 10),
        Err(SysError::TooLarge { max: 10, .. })
    ));
    assert_eq!(sys.lookup_user("root").unwrap().uid, 0);
    assert_eq!(
        sys.lookup_user("nobody"),
        Err(SysError::NoUser("nobody".into()))
    );
    assert_eq!(sys.lookup_group("42").unwrap(), 42);
    let m = MountRequest {
        source: Some("proc"),
        target: Path::new("/proc"),
        fstype: Some("proc"),
        flags: MsFlags::MS_NOSUID,
        data: None,
    };
    sys.take_calls();
    sys.mount(&m).unwrap();
    sys.sync();
    sys.fail_next(
        Op::Reboot,
        SysError::Call {
            call: "reboot".into(),
            errno: Os(Errno::EPERM),
        },
    );
    assert!(sys.reboot(RebootCmd::PowerOff).is_err());
    assert_eq!(
        sys.take_calls(),
        vec![
            Call::Mount {
                source: Some("proc".into()),
                target: "/proc".into(),
                fstype: Some("proc".into()),
                flags: MsFlags::MS_NOSUID,
                data: None
            },
            Call::Sync,
            Call::Reboot(RebootCmd::PowerOff),
        ]
    );
}
