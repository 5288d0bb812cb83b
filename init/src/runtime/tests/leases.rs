//! Leases on transient sets (`transient-lease`): the init stops the
//! covered units at the lease's stop time and kills what is left at its
//! kill time, unless it is renewed or cancelled first.

use super::*;
use flotilla_units::protocol::ErrorCode;
use flotilla_units::spec::{Command, UnitSpec, UnitType};

const ALL: &str = "unit: all\ntype: virtual\nwaits-for: [a, b, g]\n";

fn transient(name: &str) -> UnitSpec {
    let mut u = UnitSpec::new(name, UnitType::ForegroundSupervised);
    u.exec_start = Some(Command::new([format!("/bin/{name}")]));
    u
}

/// A loop with the transient set `cluster` of `a`, `b` and `g`, running.
fn with_set() -> Harness {
    let mut h = Harness::start(fake_with(&[("all", ALL)]), "all");
    let r = h.request(Request::TransientApply {
        set: "cluster".into(),
        units: vec![transient("a"), transient("b"), transient("g")],
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.settle();
    h
}

/// A lease on `cluster` whose stop is `stop` from now, its kill 300 ms
/// after, covering `units`.
fn lease(h: &Harness, stop: Duration, units: Option<&[&str]>) -> Request {
    let stop_at = h.sys().monotonic_now().after(stop).0;
    Request::TransientLease {
        set: "cluster".into(),
        stop_at: Some(stop_at),
        kill_at: Some(stop_at + 300_000_000),
        units: units.map(|u| u.iter().map(|s| s.to_string()).collect()),
    }
}

fn accepted(r: &[Reply]) {
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
}

/// The lease expires: the units it covers leave the set and stop, the
/// other keeps running; one that does not stop is killed at the kill
/// time. A renewal before the stop moves it on.
#[test]
fn an_expired_lease_stops_its_units_and_kills_what_is_left() {
    let mut h = with_set();
    let (a, b, g) = (h.pid("a"), h.pid("b"), h.pid("g"));
    h.sys().hold_clock(true);
    let r = h.request(lease(&h, Duration::from_millis(1600), Some(&["a", "b"])));
    accepted(&r);
    // Renewed a second later: at the first lease's stop nothing happens.
    h.sys().advance(Duration::from_secs(1));
    let r = h.request(lease(&h, Duration::from_millis(1600), None));
    accepted(&r);
    h.sys().advance(Duration::from_millis(1000));
    h.settle();
    for u in ["a", "b", "g"] {
        assert_eq!(h.state(u), UnitState::Running, "{u}");
    }
    // Not renewed: the stop, then the kill of what did not stop.
    h.sys().take_calls();
    h.sys().hold_clock(false);
    h.turn_until("the kill", |h| {
        processes_and_waits(&h.sys().calls())
            .iter()
            .any(|c| c == &format!("killpg {a} {}", libc::SIGKILL))
    });
    let calls = processes_and_waits(&h.sys().take_calls());
    let term = libc::SIGTERM;
    for expected in [format!("killpg {a} {term}"), format!("killpg {b} {term}")] {
        assert!(calls.contains(&expected), "{expected} in {calls:?}");
    }
    assert!(
        !calls.iter().any(|c| c.contains(&format!(" {g} "))),
        "{calls:?}"
    );
    assert_eq!(h.state("g"), UnitState::Running);
    assert!(h.sys().console_lines().contains(
        &"init: cluster lease expired: stopping 2 units of the transient set `cluster`".to_string()
    ));
    // Out of the set: the client listing it finds them gone.
    assert_eq!(members(&h), ["g"]);
    for (u, pid) in [("a", a), ("b", b)] {
        h.sys().exit(
            pid,
            ExitStatus::Signaled {
                signal: libc::SIGKILL,
                core_dumped: false,
            },
        );
        h.settle();
        assert_eq!(h.state(u), UnitState::Disabled, "{u}");
    }
}

/// A lease without instants is cancelled; so is the lease of a set that
/// an empty `transient-apply` removed.
#[test]
fn a_cancelled_lease_stops_nothing() {
    let mut h = with_set();
    h.sys().set_kill_exits(true);
    let r = h.request(lease(&h, Duration::from_millis(1600), Some(&["a"])));
    accepted(&r);
    let r = h.request(Request::TransientLease {
        set: "cluster".into(),
        stop_at: None,
        kill_at: None,
        units: None,
    });
    accepted(&r);
    h.sys().take_calls();
    h.sys().advance(Duration::from_secs(5));
    h.settle();
    assert_eq!(h.state("a"), UnitState::Running);
    assert!(!processes_and_waits(&h.sys().take_calls())
        .iter()
        .any(|c| c.starts_with("killpg")),);
    // The set removed and made again: the old lease is gone with it.
    let r = h.request(lease(&h, Duration::from_millis(1600), Some(&["a"])));
    accepted(&r);
    let r = h.request(Request::TransientApply {
        set: "cluster".into(),
        units: Vec::new(),
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.settle();
    let r = h.request(Request::TransientApply {
        set: "cluster".into(),
        units: vec![transient("a")],
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.settle();
    h.sys().advance(Duration::from_secs(5));
    h.settle();
    assert_eq!(h.state("a"), UnitState::Running);
}

/// Bad input: every problem, and nothing changes (the earlier lease
/// stays as it was).
#[test]
fn a_bad_lease_is_refused_whole() {
    let mut h = with_set();
    let refused = |r: &[Reply]| match r.last() {
        Some(Reply::Error {
            code: ErrorCode::Invalid,
            details,
            ..
        }) => details.clone(),
        other => panic!("{other:?}"),
    };
    let mut nope = lease(&h, Duration::from_secs(1), Some(&["a"]));
    if let Request::TransientLease { set, .. } = &mut nope {
        *set = "nope".into();
    }
    assert_eq!(refused(&h.request(nope)), ["no transient set named `nope`"]);
    let now = h.sys().monotonic_now().0;
    let r = h.request(Request::TransientLease {
        set: "cluster".into(),
        stop_at: Some(now + 2_000),
        kill_at: Some(now + 1_000),
        units: Some(vec!["a".into(), "zz".into()]),
    });
    assert_eq!(
        refused(&r),
        [
            format!(
                "kill-at ({}) is before stop-at ({})",
                now + 1_000,
                now + 2_000
            ),
            "`zz` is not in the transient set `cluster`".to_string(),
        ]
    );
    let r = h.request(Request::TransientLease {
        set: "cluster".into(),
        stop_at: Some(now),
        kill_at: None,
        units: None,
    });
    assert_eq!(refused(&r), Vec::<String>::new());
    h.sys().take_calls();
    h.sys().advance(Duration::from_secs(5));
    h.settle();
    for u in ["a", "b", "g"] {
        assert_eq!(h.state(u), UnitState::Running, "{u}");
    }
}

/// A re-exec carries the lease as it is: the new image stops the units at
/// the same instant (`CLOCK_MONOTONIC`'s, which an `execve` keeps).
#[test]
fn a_reexec_carries_the_lease() {
    let mut h = with_set();
    let req = lease(&h, Duration::from_millis(1600), Some(&["a", "b"]));
    let Request::TransientLease { stop_at, .. } = &req else {
        unreachable!()
    };
    let stop_at = stop_at.unwrap_or_default();
    accepted(&h.request(req));
    let snap = h.reexec_snapshot();
    let carried = &snap.leases["cluster"];
    assert_eq!(carried.stop_at, stop_at);
    assert_eq!(carried.kill_at, stop_at + 300_000_000);
    let units: Vec<&str> = carried.units.iter().map(String::as_str).collect();
    assert_eq!(units, ["a", "b"]);
}

/// A covered unit the client took out of the set itself just before the
/// stop (its clock a hair ahead) is killed at the kill time all the same;
/// at the next renewal the lease forgets it.
#[test]
fn the_kill_reaches_a_unit_taken_out_just_before_the_stop() {
    let mut h = with_set();
    let a = h.pid("a");
    let req = lease(&h, Duration::from_millis(1600), Some(&["a", "b"]));
    let Request::TransientLease { kill_at, .. } = &req else {
        unreachable!()
    };
    let kill_at = kill_at.unwrap_or_default();
    accepted(&h.request(req));
    let r = h.request(Request::TransientPatch {
        set: "cluster".into(),
        upsert: Vec::new(),
        remove: vec!["a".into()],
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.sys().take_calls();
    h.turn_until("the kill", |h| {
        processes_and_waits(&h.sys().calls())
            .iter()
            .any(|c| c == &format!("killpg {a} {}", libc::SIGKILL))
    });
    // At the lease's kill time, not at the end of a's own stop timeout.
    assert_eq!(h.sys().monotonic_now().0, kill_at);
    assert_eq!(h.state("g"), UnitState::Running);
}

/// A renewal that comes just after the stop (its sender's answer from
/// elsewhere came late) finds the units out of the set, and the reply
/// says so: the sender lists the set again instead of believing it has
/// them. The renewal after it is an ordinary one.
#[test]
fn a_renewal_after_the_stop_says_the_lease_had_fired() {
    let mut h = with_set();
    h.sys().hold_clock(true);
    accepted(&h.request(lease(&h, Duration::from_millis(1600), Some(&["a", "b"]))));
    h.sys().advance(Duration::from_millis(1700));
    h.settle();
    assert_eq!(members(&h), ["g"]);
    let r = h.request(lease(&h, Duration::from_millis(1600), None));
    assert!(matches!(r.last(), Some(Reply::LeaseFired { .. })), "{r:?}");
    accepted(&h.request(lease(&h, Duration::from_millis(1600), None)));
}

/// The units of the set `cluster` now.
fn members(h: &Harness) -> Vec<&str> {
    h.rt.units
        .members("cluster")
        .unwrap_or_default()
        .into_iter()
        .collect()
}
