//! The `attach` request's refusals on the loop (the fake system gives a
//! unit no cgroup, so nothing can be moved; the real move is
//! `tests/tests/dbus_systemctl/attach.rs`'s): systemd's words and the
//! protocol's codes, in systemd's order, and the unit runs on as it was.

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
fn an_attach_the_unit_cannot_take_is_refused_in_systemds_words() {
    let sys = fake_with(&[]);
    sys.set_file(
        format!("{UNITS}/deleg.service"),
        "[Service]\nDelegate=yes\nExecStart=/bin/deleg\n",
    );
    sys.set_file(
        format!("{UNITS}/plain.service"),
        "[Service]\nExecStart=/bin/plain\n",
    );
    sys.set_file(
        format!("{UNITS}/off.service"),
        "[Service]\nDelegate=yes\nExecStart=/bin/off\n",
    );
    let mut h = Harness::start(sys, "deleg.service");
    assert_eq!(h.state("deleg.service"), UnitState::Running);
    let ask = |h: &mut Harness, unit: &str, sub: &str, pid: u32| {
        refused(&h.request(Request::Attach {
            unit: unit.to_string(),
            subcgroup: sub.to_string(),
            pids: vec![pid],
            uid: 0,
        }))
    };
    assert_eq!(
        ask(&mut h, "nothing.service", "", 812),
        (
            ErrorCode::UnknownUnit,
            "Unit nothing.service not loaded.".to_string()
        )
    );
    // The subcgroup is looked at first, then the delegation (plain is
    // inactive too), then the state.
    assert_eq!(
        ask(&mut h, "plain.service", "sub", 812),
        (
            ErrorCode::Invalid,
            "Control group path is not absolute: sub".to_string()
        )
    );
    assert_eq!(
        ask(&mut h, "plain.service", "", 812),
        (
            ErrorCode::Invalid,
            "Process migration not available on non-delegated units.".to_string()
        )
    );
    assert_eq!(
        ask(&mut h, "off.service", "", 812),
        (
            ErrorCode::Invalid,
            "Unit is not active, refusing.".to_string()
        )
    );
    let (code, why) = ask(&mut h, "deleg.service", "/sub", 812);
    assert_eq!(code, ErrorCode::Failed);
    assert!(why.contains("no cgroup of its own"), "{why}");
    assert_eq!(h.state("deleg.service"), UnitState::Running);
}
