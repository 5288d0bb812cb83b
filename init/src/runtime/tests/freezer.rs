//! The `freeze` request's refusals on the loop (the fake system gives a
//! unit no cgroup, so nothing can be frozen; the real freeze is
//! `sys/cgroups/freezer.rs`'s test and `tests/tests/dbus_systemctl/freezer.rs`):
//! each says why, and the unit runs on as it was.

use super::{fake_with, Harness, UNITS};
use flotilla_units::protocol::{ErrorCode, Reply, Request};
use flotilla_units::state::UnitState;

/// The final reply's refusal.
fn refused(replies: &[Reply]) -> (ErrorCode, String) {
    match replies.last() {
        Some(Reply::Error { code, message, .. }) => (*code, message.clone()),
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_freeze_the_unit_cannot_take_is_refused_naming_why() {
    let sys = fake_with(&[]);
    sys.set_file(
        format!("{UNITS}/svc.service"),
        "[Service]\nExecStart=/bin/svc\n",
    );
    sys.set_file(
        format!("{UNITS}/off.service"),
        "[Service]\nExecStart=/bin/off\n",
    );
    let mut h = Harness::start(sys, "svc.service");
    assert_eq!(h.state("svc.service"), UnitState::Running);
    let ask = |h: &mut Harness, unit: &str, thaw: bool| {
        refused(&h.request(Request::Freeze {
            unit: unit.to_string(),
            thaw,
        }))
    };
    let (code, why) = ask(&mut h, "svc.service", false);
    assert_eq!(code, ErrorCode::NotPossible);
    assert!(why.contains("no cgroup of its own"), "{why}");
    let (code, why) = ask(&mut h, "off.service", true);
    assert_eq!(code, ErrorCode::NotPossible);
    assert_eq!(why, "Unit off.service is inactive.");
    let (code, _) = ask(&mut h, "nothing.service", false);
    assert_eq!(code, ErrorCode::UnknownUnit);
    let (code, why) = ask(&mut h, "bar.slice", false);
    assert_eq!(code, ErrorCode::NotPossible);
    assert!(why.contains("no unit runs in the slice"), "{why}");
    // A slice without a directory is no unit the init answers for.
    let r = h.request(Request::Status {
        name: Some("bar.slice".to_string()),
    });
    assert_eq!(refused(&r).0, ErrorCode::UnknownUnit);
    let r = h.request(Request::Status {
        name: Some("svc.service".to_string()),
    });
    let Some(Reply::Unit(st)) = r.last() else {
        panic!("svc.service's status");
    };
    assert!(st.freezer.is_running() && !st.can_freeze, "{st:?}");
    assert_eq!(h.state("svc.service"), UnitState::Running);
}
