//! The runtime limit (`runtime.rs`): the deadline counted from when the
//! unit became active, the stop it begins (`exec-stop` first), the
//! `timeout` failure, the cancel when the unit stops earlier, a restart
//! counting again, the random part, `EXTEND_TIMEOUT_USEC=` and the
//! watchdog sharing the unit's one timer.

use super::super::facts::{Action, Fact, Notify, Role};
use super::super::{Planner, PlannerOptions, TimerEnv};
use crate::exits::ExitStatus;
use crate::graph::{Graph, UnitId};
use crate::spec::{Command, Origin, RestartPolicy, UnitSpec, UnitType};
use crate::state::{FailureKind, UnitState};
use crate::time::Instant;
use std::time::Duration;

const U: UnitId = UnitId(0);

fn secs(s: u64) -> Instant {
    Instant(s * 1_000_000_000)
}

/// `svc`, a `foreground-notified` service with a stop command and
/// `runtime-max-sec: 5s`, restart `no`.
fn spec() -> UnitSpec {
    let mut s = UnitSpec::new("svc", UnitType::ForegroundNotified);
    s.exec_start = Some(Command::new(["/bin/svc"]));
    s.exec_stop = Some(Command::new(["/bin/stop"]));
    s.restart = RestartPolicy::No;
    s.extras.runtime_max = Some(Duration::from_secs(5));
    s
}

fn planner(spec: UnitSpec, seed: u64) -> Planner {
    let (g, d) = Graph::build(vec![(spec, Origin::unplaced("svc.yaml"))]);
    assert!(d.is_empty(), "{d:?}");
    let env = TimerEnv {
        seed,
        ..TimerEnv::default()
    };
    Planner::with_timer_env(g, "svc", Instant(0), PlannerOptions::default(), env)
}

/// The PID of the spawn of `role` among the actions, reported spawned as
/// `pid` at `now`.
fn spawned(p: &mut Planner, role: Role, pid: i32, now: Instant) {
    let a = p.take_actions();
    assert!(
        a.iter()
            .any(|a| matches!(a, Action::Spawn { role: r, .. } if *r == role)),
        "no spawn of {role:?} in {a:?}"
    );
    p.fact(Fact::Spawned { unit: U, role, pid }, now);
}

/// Starts the service: its main process `pid` spawned at `now - 1s`,
/// ready at `now`.
fn up(p: &mut Planner, pid: i32, now: Instant) {
    spawned(p, Role::Main, pid, Instant(now.0 - 1_000_000_000));
    assert_eq!(p.state(U), UnitState::Starting);
    p.fact(
        Fact::Notify {
            unit: U,
            msg: Notify::Ready,
        },
        now,
    );
    assert_eq!(p.state(U), UnitState::Running);
}

fn exited(p: &mut Planner, pid: i32, status: ExitStatus, now: Instant) {
    p.fact(Fact::Exited { pid, status }, now);
}

/// Whether the actions signal `pid`'s group with SIGTERM.
fn terminates(actions: &[Action], pid: i32) -> bool {
    actions.iter().any(
        |a| matches!(a, Action::Kill { whom, signal, .. } if whom.pid() == pid && signal.0 == 15),
    )
}

/// Five seconds after it became ready (not after its spawn), the
/// service is stopped as a stop asked for is: `exec-stop` first, then
/// the kill signal; it ends failed with `timeout`, and stays so.
#[test]
fn the_limit_stops_the_service_with_its_stop_command_and_fails_it_with_timeout() {
    let mut p = planner(spec(), 0);
    up(&mut p, 10, secs(3));
    assert_eq!(p.next_deadline(), Some(secs(8)));
    p.tick(Instant(secs(8).0 - 1));
    assert_eq!(p.state(U), UnitState::Running);
    p.tick(secs(8));
    assert_eq!(p.state(U), UnitState::Stopping);
    let a = p.take_actions();
    assert!(
        a.iter().any(|a| matches!(
            a,
            Action::Spawn {
                role: Role::Stop,
                ..
            }
        )),
        "{a:?}"
    );
    assert!(!terminates(&a, 10), "exec-stop runs first: {a:?}");
    p.fact(
        Fact::Spawned {
            unit: U,
            role: Role::Stop,
            pid: 11,
        },
        secs(8),
    );
    exited(&mut p, 11, ExitStatus::Code(0), secs(8));
    assert!(terminates(&p.take_actions(), 10));
    exited(&mut p, 10, ExitStatus::Signal(15), secs(9));
    assert_eq!(p.state(U), UnitState::Failed);
    let v = p.view(U).expect("a view");
    assert_eq!(v.failure, Some((FailureKind::Timeout, None)), "{v:?}");
    assert_eq!(v.status, "runtime limit reached (runtime-max-sec)");
    p.tick(secs(100));
    assert_eq!(p.state(U), UnitState::Failed, "no restart");
}

/// A service that ends before its limit leaves no timer behind: the
/// limit's time passes and nothing happens.
#[test]
fn a_service_that_ends_earlier_is_not_stopped_later() {
    let mut p = planner(spec(), 0);
    up(&mut p, 10, secs(1));
    exited(&mut p, 10, ExitStatus::Code(0), secs(2));
    assert_ne!(p.state(U), UnitState::Running);
    let before = p.view(U).expect("a view");
    assert_eq!(before.failure, None);
    p.tick(secs(6));
    let after = p.view(U).expect("a view");
    assert_eq!((after.state, after.failure), (before.state, None));
}

/// With `restart: on-failure` the timeout restarts the service (systemd
/// counts `timeout` as a failure), and its limit counts again from the
/// new start.
#[test]
fn a_restart_counts_the_limit_again() {
    let mut s = spec();
    s.exec_stop = None;
    s.restart = RestartPolicy::OnFailure;
    s.restart_delay = Duration::from_secs(1);
    let mut p = planner(s, 0);
    up(&mut p, 10, secs(1));
    p.tick(secs(6));
    assert!(terminates(&p.take_actions(), 10));
    exited(&mut p, 10, ExitStatus::Signal(15), secs(6));
    assert_eq!(p.state(U), UnitState::Failed);
    let restart_at = p.next_deadline().expect("the restart's timer");
    p.tick(restart_at);
    let again = Instant(restart_at.0 + 2_000_000_000);
    up(&mut p, 20, again);
    assert_eq!(p.next_deadline(), Some(again.after(Duration::from_secs(5))));
    p.tick(again.after(Duration::from_secs(5)));
    assert_eq!(p.state(U), UnitState::Stopping);
    assert!(terminates(&p.take_actions(), 20));
}

/// `runtime-randomized-extra-sec` adds a part below it, the same each
/// time the timer is armed again in one activation; `infinity` (the
/// default) and no key are no limit.
#[test]
fn the_random_part_stays_below_the_extra_and_infinity_is_no_limit() {
    for seed in [0, 1, 42, u64::MAX] {
        let mut s = spec();
        s.extras.runtime_randomized_extra = Some(Duration::from_secs(10));
        s.extras.watchdog = Some(Duration::from_secs(30));
        let mut p = planner(s, seed);
        up(&mut p, 10, secs(1));
        let t = p.next_deadline().expect("a deadline");
        assert!(t >= secs(6) && t < secs(16), "seed {seed}: {t:?}");
        // A watchdog ping arms the timer again: the deadline stays.
        p.fact(
            Fact::Notify {
                unit: U,
                msg: Notify::Watchdog,
            },
            secs(2),
        );
        assert_eq!(p.next_deadline(), Some(t), "seed {seed}");
    }
    for max in [None, Some(crate::timespan::TIMESPAN_INFINITY)] {
        let mut s = spec();
        s.extras.runtime_max = max;
        let mut p = planner(s, 0);
        up(&mut p, 10, secs(1));
        assert_eq!(p.next_deadline(), None, "{max:?}");
    }
}

/// `EXTEND_TIMEOUT_USEC=` while running moves the limit to at least
/// then (systemd's test 16, `success-runtime.service`); the limit passes
/// when no other one comes in time.
#[test]
fn extend_timeout_moves_the_limit() {
    let mut p = planner(spec(), 0);
    up(&mut p, 10, secs(1));
    let extend = |p: &mut Planner, by: u64, now: Instant| {
        let msg = Notify::ExtendTimeout(Duration::from_secs(by));
        p.fact(Fact::Notify { unit: U, msg }, now);
    };
    // Earlier than the limit: nothing moves.
    extend(&mut p, 1, secs(2));
    assert_eq!(p.next_deadline(), Some(secs(6)));
    extend(&mut p, 4, secs(5));
    assert_eq!(p.next_deadline(), Some(secs(9)));
    extend(&mut p, 4, secs(8));
    p.tick(secs(11));
    assert_eq!(p.state(U), UnitState::Running);
    p.tick(secs(12));
    assert_eq!(p.state(U), UnitState::Stopping);
}

/// With a watchdog, the one timer is the earlier deadline: a ping keeps
/// the watchdog from firing, and the limit still passes in time; the
/// watchdog fails the unit when it comes first.
#[test]
fn the_watchdog_and_the_limit_share_the_timer() {
    let mut s = spec();
    s.extras.watchdog = Some(Duration::from_secs(2));
    let mut p = planner(s.clone(), 0);
    up(&mut p, 10, secs(1));
    assert_eq!(p.next_deadline(), Some(secs(3)));
    for now in [2, 4] {
        let msg = Notify::Watchdog;
        p.fact(Fact::Notify { unit: U, msg }, secs(now));
    }
    assert_eq!(
        p.next_deadline(),
        Some(secs(6)),
        "the limit, before the watchdog"
    );
    p.tick(secs(6));
    assert_eq!(p.state(U), UnitState::Stopping);

    let mut p = planner(s, 0);
    up(&mut p, 10, secs(1));
    p.tick(secs(3));
    assert_eq!(p.state(U), UnitState::Stopping);
    exited(&mut p, 10, ExitStatus::Signal(6), secs(3));
    let v = p.view(U).expect("a view");
    assert_eq!(v.failure.map(|f| f.0), Some(FailureKind::Watchdog));
}

/// A reload does not start the limit again: it counts from when the
/// unit became active, and passes after the reload.
#[test]
fn a_reload_keeps_the_limit() {
    let mut s = spec();
    s.extras.exec_reload = Some(Command::new(["/bin/reload"]));
    let mut p = planner(s, 0);
    up(&mut p, 10, secs(1));
    p.take_actions();
    p.reload_unit("svc", secs(3)).expect("a reload");
    assert_eq!(p.state(U), UnitState::Reloading);
    spawned(&mut p, Role::Reload, 11, secs(3));
    exited(&mut p, 11, ExitStatus::Code(0), secs(4));
    assert_eq!(p.state(U), UnitState::Running);
    assert_eq!(p.next_deadline(), Some(secs(6)));
}

/// A oneshot is never running: the limit does not apply to it (systemd
/// arms it in the running state only).
#[test]
fn a_oneshot_has_no_limit() {
    let mut s = spec();
    s.kind = UnitType::Oneshot;
    s.exec_stop = None;
    let mut p = planner(s, 0);
    spawned(&mut p, Role::Main, 10, secs(1));
    p.tick(secs(10));
    assert_eq!(p.state(U), UnitState::Starting);
    exited(&mut p, 10, ExitStatus::Code(0), secs(11));
    assert_eq!(p.state(U), UnitState::Exited);
}

/// A daemon-reload that gives a running service a limit (systemd's test
/// 16 writes it in a drop-in) arms it at once, counted from when the
/// service became active; one that takes it away cancels it.
#[test]
fn a_daemon_reload_gives_a_running_service_its_new_limit() {
    use super::super::OnChange;
    let mut none = spec();
    none.extras.runtime_max = None;
    let mut p = planner(none.clone(), 0);
    up(&mut p, 10, secs(1));
    assert_eq!(p.next_deadline(), None);
    let reload = |p: &mut Planner, s: &UnitSpec, now: Instant| {
        let shape = p.graph().shape().clone();
        let units = vec![(s.clone(), Origin::unplaced("svc.yaml"))];
        p.replace_shaped(units, shape, true, OnChange::Keep, now)
            .expect("replaced");
        assert_eq!(p.state(U), UnitState::Running);
    };
    reload(&mut p, &spec(), secs(3));
    assert_eq!(p.next_deadline(), Some(secs(6)));
    reload(&mut p, &none, secs(4));
    assert_eq!(p.next_deadline(), None);
    p.tick(secs(7));
    assert_eq!(p.state(U), UnitState::Running);
}

/// systemd's test 16, `success-all.service`: `TimeoutStartSec=4`,
/// `RuntimeMaxSec=4`, `TimeoutStopSec=4`, and `EXTEND_TIMEOUT_USEC=4s`
/// every 2 s through its start (6 s), its run (6 s, then `STOPPING=1`)
/// and its stop (6 s): no limit passes, and it ends cleanly.
#[test]
fn extend_timeout_carries_a_service_through_every_limit() {
    let mut s = spec();
    s.exec_stop = None;
    s.start_timeout = Duration::from_secs(4);
    s.stop_timeout = Duration::from_secs(4);
    s.extras.runtime_max = Some(Duration::from_secs(4));
    let mut p = planner(s, 0);
    spawned(&mut p, Role::Main, 10, secs(0));
    let tell = |p: &mut Planner, msg: Notify, at: u64| {
        let now = Instant(at * 1_000_000_000 + 100_000_000);
        p.tick(now);
        p.fact(Fact::Notify { unit: U, msg }, now);
    };
    let extend = || Notify::ExtendTimeout(Duration::from_secs(4));
    for t in [0, 2, 4, 6] {
        tell(&mut p, extend(), t);
        assert_eq!(p.state(U), UnitState::Starting, "{t}");
    }
    tell(&mut p, Notify::Ready, 6);
    for t in [6, 8, 10, 12] {
        tell(&mut p, extend(), t);
        assert_eq!(p.state(U), UnitState::Running, "{t}");
    }
    tell(&mut p, Notify::Stopping, 12);
    for t in [12, 14, 16, 18] {
        tell(&mut p, extend(), t);
        assert_eq!(p.state(U), UnitState::Stopping, "{t}");
    }
    exited(&mut p, 10, ExitStatus::Code(0), secs(18));
    let v = p.view(U).expect("a view");
    assert_eq!(v.failure, None, "{v:?}");
}
