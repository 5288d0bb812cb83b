//! Masks and transient units through the loop: the state files written
//! and read through `Sys`, a masked unit never spawned, `initctl run`'s
//! unit spawned and stopped.

use super::*;
use flotilla_units::protocol::ErrorCode;
use std::path::Path;

const SVC: &str = "unit: svc\nexec-start: /bin/svc\n";
const OLD: &str = "unit: old\nexec-start: /bin/old\n";
const DEFAULT: &str = "unit: default\ntype: virtual\nwaits-for: [svc, old]\n";

fn spawned(sys: &FakeSys, argv0: &str) -> bool {
    sys.spawns()
        .iter()
        .any(|s| s.argv.first().map(String::as_str) == Some(argv0))
}

fn with_state_dir(sys: FakeSys) -> Harness {
    let mut s = settings("default");
    s.state_dir = Some(PathBuf::from("/etc/init"));
    let rt = Runtime::new(sys, s, false).unwrap_or_else(|e| panic!("{e}"));
    let mut h = Harness { rt };
    h.settle();
    h
}

#[test]
fn mask_needs_a_state_dir() {
    let sys = fake_with(&[("svc", SVC), ("old", OLD), ("default", DEFAULT)]);
    let mut h = Harness::start(sys, "default");
    let r = h.request(Request::Mask { unit: "svc".into() });
    match r.last() {
        Some(Reply::Error { code, message, .. }) => {
            assert_eq!(*code, ErrorCode::NotPossible);
            assert!(message.contains("--config FILE"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(h.state("svc"), UnitState::Running);
}

#[test]
fn a_mask_file_keeps_a_unit_down_and_mask_writes_one() {
    let sys = fake_with(&[("svc", SVC), ("old", OLD), ("default", DEFAULT)]);
    sys.set_file("/etc/init/masked/old", "");
    let mut h = with_state_dir(sys);
    assert_eq!(h.state("svc"), UnitState::Running);
    assert_eq!(h.state("old"), UnitState::Disabled);
    assert!(!spawned(h.sys(), "/bin/old"));

    let r = h.request(Request::Mask { unit: "svc".into() });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    assert!(h
        .sys()
        .read_file_limited(Path::new("/etc/init/masked/svc"), 100)
        .is_ok());
    h.exit(
        "svc",
        ExitStatus::Signaled {
            signal: libc::SIGTERM,
            core_dumped: false,
        },
    );
    h.settle();
    assert_eq!(h.state("svc"), UnitState::Disabled);

    let r = h.request(Request::Unmask { unit: "old".into() });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    assert!(h
        .sys()
        .read_file_limited(Path::new("/etc/init/masked/old"), 100)
        .is_err());
    assert_eq!(h.state("old"), UnitState::Running);
}

#[test]
fn a_transient_add_is_spawned_and_stop_transient_stops_it() {
    let sys = fake_with(&[("svc", SVC), ("old", OLD), ("default", DEFAULT)]);
    let mut h = Harness::start(sys, "default");
    let r = h.request(add_tool("", Vec::new()));
    match r.last() {
        Some(Reply::Applied(a)) => assert_eq!(a.added, ["run-1"]),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.state("run-1"), UnitState::Running);
    assert!(spawned(h.sys(), "/bin/tool"));
    let r = h.request(Request::StopTransient {
        name: "run-1".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    // Out of the set but still stopping: found by name, so that a stop
    // job waiting on it (systemctl stop through the bus) is not done yet.
    let status = |h: &mut Harness| {
        h.request(Request::Status {
            name: Some("run-1".into()),
        })
        .pop()
    };
    match status(&mut h) {
        Some(Reply::Unit(u)) => assert_eq!(u.state, UnitState::Stopping),
        other => panic!("{other:?}"),
    }
    h.exit(
        "run-1",
        ExitStatus::Signaled {
            signal: libc::SIGTERM,
            core_dumped: false,
        },
    );
    h.settle();
    assert!(h
        .rt
        .planner
        .graph()
        .unit("run-1")
        .is_none_or(|i| h.rt.planner.graph().node(i).ghost));
    match status(&mut h) {
        Some(Reply::Error { code, .. }) => assert_eq!(code, ErrorCode::UnknownUnit),
        other => panic!("{other:?}"),
    }
}
