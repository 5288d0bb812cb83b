//! `runtime-max-sec` on the loop (the rule is the planner's,
//! `lifecycle/runtime.rs`): the loop sleeps until the limit, no longer;
//! then the unit's `exec-stop` runs, its main process gets the kill
//! signal, and it ends failed with `timeout`; a restart counts the limit
//! again; a unit stopped earlier leaves no timer behind.

use super::{fake_with, spawned_pid, waits, Harness};
use crate::sys::{ExitStatus, Sys};
use flotilla_units::protocol::{Reply, Request};
use flotilla_units::state::{FailureKind, UnitState};
use std::time::Duration;

const SVC: &str = "unit: svc\nexec-start: /bin/svc\nexec-stop: /bin/stop\n\
                   runtime-max-sec: 5s\nrestart: on-failure\nrestart-delay: 1s\n";
const DEFAULT: &str = "unit: default\ntype: virtual\n";

/// The failure of unit `name`, and its status text.
fn failure(h: &Harness, name: &str) -> (Option<FailureKind>, String) {
    let p = &h.rt.planner;
    let v = p.graph().unit(name).and_then(|id| p.view(id));
    let v = v.unwrap_or_else(|| panic!("{name} has no view"));
    (v.failure.map(|f| f.0), v.status)
}

#[test]
fn the_limit_stops_the_unit_which_fails_with_timeout_and_restarts() {
    // The clock held until the unit is up: the start settles before the
    // limit comes.
    let sys = fake_with(&[("svc", SVC)]);
    sys.hold_clock(true);
    let mut h = Harness::start(sys, "svc");
    let first = h.pid("svc");
    h.sys().hold_clock(false);
    h.sys().set_kill_exits(true);
    h.sys().take_calls();
    let t0 = h.sys().monotonic_now();
    h.turn_until("svc stopping", |h| h.state("svc") == UnitState::Stopping);
    // One sleep of the whole limit, then the stop command.
    assert_eq!(h.sys().monotonic_now().since(t0), Duration::from_secs(5));
    assert!(
        waits(&h.sys().calls()).contains(&Some(Duration::from_secs(5))),
        "{:?}",
        waits(&h.sys().calls())
    );
    assert!(h.sys().is_live(first), "exec-stop runs before the kill");
    let stop = spawned_pid(h.sys(), "/bin/stop");
    h.sys().exit(stop, ExitStatus::Exited(0));
    h.turn_until("svc failed", |h| h.state("svc") == UnitState::Failed);
    assert!(!h.sys().is_live(first), "the kill signal after exec-stop");
    let (kind, status) = failure(&h, "svc");
    assert_eq!(kind, Some(FailureKind::Timeout));
    assert_eq!(
        status,
        "runtime limit reached (runtime-max-sec); restart in 1.0s"
    );
    // `restart: on-failure` restarts after a timeout, and the new run
    // has the whole limit again.
    h.turn_until("svc restarted", |h| h.state("svc") == UnitState::Running);
    let second = h.pid("svc");
    assert_ne!(second, first);
    let t1 = h.sys().monotonic_now();
    h.turn_until("svc stopping again", |h| {
        h.state("svc") == UnitState::Stopping
    });
    assert_eq!(h.sys().monotonic_now().since(t1), Duration::from_secs(5));
}

/// Stopped by hand before its limit (`systemctl stop`), the unit ends as
/// any stop ends it: no failure, and the loop sleeps with no time-out.
#[test]
fn a_unit_stopped_before_its_limit_is_not_stopped_again() {
    let mut h = Harness::start(fake_with(&[("svc", SVC), ("default", DEFAULT)]), "default");
    let want = h.request(Request::Want { unit: "svc".into() });
    assert!(
        matches!(want.last(), Some(Reply::Accepted { .. })),
        "{want:?}"
    );
    h.turn_until("svc running", |h| h.state("svc") == UnitState::Running);
    h.sys().set_kill_exits(true);
    h.sys().advance(Duration::from_secs(2));
    let unwant = h.request(Request::Unwant { unit: "svc".into() });
    assert!(
        matches!(unwant.last(), Some(Reply::Accepted { .. })),
        "{unwant:?}"
    );
    h.turn_until("svc's stop command", |h| {
        h.sys().spawns().iter().any(|s| s.argv == ["/bin/stop"])
    });
    let stop = spawned_pid(h.sys(), "/bin/stop");
    h.sys().exit(stop, ExitStatus::Exited(0));
    h.turn_until("svc stopped", |h| h.state("svc") == UnitState::Disabled);
    h.sys().take_calls();
    h.settle();
    assert!(h.sys().idle(), "no timer left");
    assert_eq!(waits(&h.sys().calls()).last(), Some(&None));
    assert_eq!(failure(&h, "svc").0, None);
}
