//! `OOMPolicy=`: the init's [`Fact::OomKilled`] (told before the killed
//! process's exit) fails the unit with `oom-kill` and stops what is left
//! of it, or, with `continue`, changes nothing.

use super::super::facts::{Action, Fact, Role};
use super::super::{Planner, PlannerOptions};
use crate::context::process::OomPolicy;
use crate::exits::ExitStatus;
use crate::graph::{Graph, UnitId};
use crate::spec::{Command, Origin, RestartPolicy, UnitSpec, UnitType};
use crate::state::{FailureKind, UnitState};
use crate::time::Instant;

const U: UnitId = UnitId(0);

/// A running service with `policy`: the planner and its main PID.
fn running(policy: OomPolicy) -> (Planner, i32) {
    let mut s = UnitSpec::new("svc", UnitType::ForegroundSupervised);
    s.exec_start = Some(Command::new(["/bin/svc"]));
    s.restart = RestartPolicy::No;
    s.extras.context.oom_policy = policy;
    let (g, d) = Graph::build(vec![(s, Origin::unplaced("svc.yaml"))]);
    assert!(d.is_empty(), "{d:?}");
    let mut p = Planner::new(g, "svc", Instant(0), PlannerOptions::default());
    let spawns = p
        .take_actions()
        .into_iter()
        .filter(|a| matches!(a, Action::Spawn { .. }))
        .count();
    assert_eq!(spawns, 1);
    let pid = 10;
    p.fact(
        Fact::Spawned {
            unit: U,
            role: Role::Main,
            pid,
        },
        Instant(1),
    );
    assert_eq!(p.state(U), UnitState::Running);
    (p, pid)
}

/// Whether the actions signal the main process's group.
fn signals(actions: &[Action], pid: i32) -> bool {
    actions
        .iter()
        .any(|a| matches!(a, Action::Kill { whom, .. } if whom.pid() == pid))
}

#[test]
fn stop_fails_the_unit_with_oom_kill_when_its_main_process_is_killed() {
    let (mut p, pid) = running(OomPolicy::Stop);
    p.fact(Fact::OomKilled { unit: U }, Instant(2));
    p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Signal(9),
        },
        Instant(2),
    );
    assert_eq!(p.state(U), UnitState::Failed);
    let v = p.view(U).expect("a view");
    assert_eq!(v.failure, Some((FailureKind::OomKill, None)), "{v:?}");
}

#[test]
fn stop_stops_a_unit_whose_other_process_was_killed() {
    let (mut p, pid) = running(OomPolicy::Stop);
    let _ = p.take_actions();
    p.fact(Fact::OomKilled { unit: U }, Instant(2));
    assert_eq!(p.state(U), UnitState::Stopping);
    assert!(
        signals(&p.take_actions(), pid),
        "the main process is stopped"
    );
    p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Signal(15),
        },
        Instant(3),
    );
    assert_eq!(p.state(U), UnitState::Failed);
    let v = p.view(U).expect("a view");
    assert_eq!(v.failure.map(|f| f.0), Some(FailureKind::OomKill), "{v:?}");
}

#[test]
fn kill_fails_as_stop_does() {
    let (mut p, _) = running(OomPolicy::Kill);
    p.fact(Fact::OomKilled { unit: U }, Instant(2));
    assert_eq!(p.state(U), UnitState::Stopping);
}

#[test]
fn continue_goes_on_and_judges_the_main_process_by_its_signal() {
    let (mut p, pid) = running(OomPolicy::Continue);
    let _ = p.take_actions();
    p.fact(Fact::OomKilled { unit: U }, Instant(2));
    assert_eq!(p.state(U), UnitState::Running);
    assert!(!signals(&p.take_actions(), pid), "nothing is stopped");
    p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Signal(9),
        },
        Instant(3),
    );
    assert_eq!(p.state(U), UnitState::Failed);
    let v = p.view(U).expect("a view");
    assert_eq!(v.failure, Some((FailureKind::Signal, Some(9))), "{v:?}");
}

#[test]
fn a_report_for_a_stopped_unit_changes_nothing() {
    let (mut p, pid) = running(OomPolicy::Stop);
    p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Code(0),
        },
        Instant(2),
    );
    let before = p.state(U);
    p.fact(Fact::OomKilled { unit: U }, Instant(3));
    assert_eq!(p.state(U), before);
}
