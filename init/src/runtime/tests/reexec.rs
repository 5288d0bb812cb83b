//! `reexec` on the fake: the snapshot the loop writes (every unit, its
//! processes, its pipes among the descriptors kept) and an `execve` that
//! fails, which changes nothing.

use super::*;
use flotilla_units::protocol::ErrorCode;
use flotilla_units::snapshot::{self, PhaseCarry};

const SVC: &str = "unit: svc\nexec-start: /bin/svc\nrestart: always\n";
const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: [svc]\n";

#[test]
fn a_failed_exec_is_reported_and_changes_nothing() {
    let sys = fake_with(&[("svc", SVC), ("default", DEFAULT)]);
    let mut h = Harness::start(sys, "default");
    let pid = h.pid("svc");
    h.sys().take_calls();
    let replies = h.request(Request::Reexec);
    match replies.as_slice() {
        [Reply::Error { code, message, .. }] => {
            assert_eq!(*code, ErrorCode::NotPossible);
            assert_eq!(
                message,
                "re-exec failed: execve: exec format error; the init goes on as it was"
            );
        }
        other => panic!("{other:?}"),
    }
    let calls = h.sys().take_calls();
    let Some(Call::Reexec { snapshot, keep }) =
        calls.iter().find(|c| matches!(c, Call::Reexec { .. }))
    else {
        panic!("no reexec in {calls:?}");
    };
    // The snapshot names every unit with its process, and the pipes of
    // svc's process are among the descriptors kept (with the listener
    // and the requester's connection).
    let snap = snapshot::decode(snapshot).unwrap();
    assert_eq!(snap.target, "default");
    let svc = snap.units.iter().find(|u| u.name == "svc").unwrap();
    assert_eq!((svc.phase, svc.main_pid), (PhaseCarry::Up, Some(pid)));
    let io = snap.io.iter().find(|i| i.unit == "svc").unwrap();
    assert_eq!(io.pipes.len(), 2);
    assert!(io.pipes.iter().all(|(fd, _)| keep.contains(fd)));
    assert!(keep.contains(&snap.control.listener));
    assert_eq!(keep.len(), 4, "{keep:?}");
    // Nothing changed: svc runs, and is still supervised.
    assert_eq!(h.state("svc"), UnitState::Running);
    assert_eq!(h.pid("svc"), pid);
    h.fail_until_respawned("svc", "/bin/svc");
}

/// `set-environment` and `set-service-watchdogs` (systemd's
/// `SetEnvironment`, `ServiceWatchdogs`): the next spawn gets the
/// variables, a reload keeps them, the status reports both, and the
/// snapshot of a re-exec carries them.
#[test]
fn the_managers_environment_and_watchdogs_hold_across_a_reload_and_are_carried() {
    let sys = fake_with(&[("svc", SVC), ("default", DEFAULT)]);
    let mut h = Harness::start(sys, "default");
    let set = Request::SetEnvironment {
        unset: Vec::new(),
        set: vec!["FOO=BAR".into()],
    };
    assert!(matches!(
        h.request(set).as_slice(),
        [Reply::Accepted { .. }]
    ));
    let bad = Request::SetEnvironment {
        unset: Vec::new(),
        set: vec!["1BAD=x".into()],
    };
    match h.request(bad).as_slice() {
        [Reply::Error { code, .. }] => assert_eq!(*code, ErrorCode::BadRequest),
        other => panic!("{other:?}"),
    }
    let off = Request::SetServiceWatchdogs { on: false };
    assert!(matches!(
        h.request(off).as_slice(),
        [Reply::Accepted { .. }]
    ));
    h.request(Request::Reload {
        keep_running: false,
    });
    h.fail_until_respawned("svc", "/bin/svc");
    let spawns = h.sys().spawns();
    let last = spawns.iter().rev().find(|s| s.argv == ["/bin/svc"]);
    assert_eq!(
        last.and_then(|s| s.env.get("FOO")),
        Some(&b"BAR"[..]),
        "{last:?}"
    );
    match h.request(Request::Status { name: None }).as_slice() {
        [Reply::Status(s)] => {
            assert!(s.environment.iter().any(|l| l == "FOO=BAR"), "{s:?}");
            assert!(!s.environment.iter().any(|l| l.starts_with("1BAD")));
            assert!(!s.service_watchdogs);
        }
        other => panic!("{other:?}"),
    }
    let snap = h.reexec_snapshot();
    let carried: Vec<(&str, &str)> = snap.manager_env.iter().collect();
    assert_eq!(carried, [("FOO", "BAR")]);
    assert!(!snap.service_watchdogs);
}
