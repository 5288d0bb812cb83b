//! `exit-type: cgroup` (systemd's `ExitType=cgroup`): the main process's
//! exit while up leaves the unit up until the init tells it the cgroup is
//! empty ([`Fact::CgroupEmpty`]), then judged by that exit; a stop
//! meanwhile signals what is left and waits for the cgroup too.

use super::super::facts::{Action, Fact, Role, Whom};
use super::super::{Planner, PlannerOptions};
use crate::exits::ExitStatus;
use crate::graph::{Graph, UnitId};
use crate::spec::{Command, ExitType, Origin, RestartPolicy, UnitSpec, UnitType};
use crate::state::{FailureKind, UnitState};
use crate::time::Instant;

const U: UnitId = UnitId(0);

/// A running `foreground-supervised` service of `exit_type`, required by
/// the target (and a virtual `vt` to switch to: units are in name order, `svc` first): the planner and the
/// main PID.
fn running(exit_type: ExitType) -> (Planner, i32) {
    let mut s = UnitSpec::new("svc", UnitType::ForegroundSupervised);
    s.exec_start = Some(Command::new(["/bin/svc"]));
    s.restart = RestartPolicy::No;
    s.extras.exit_type = exit_type;
    let other = UnitSpec::new("vt", UnitType::Virtual);
    let (g, d) = Graph::build(vec![
        (s, Origin::unplaced("svc.yaml")),
        (other, Origin::unplaced("vt.yaml")),
    ]);
    assert!(d.is_empty(), "{d:?}");
    let mut p = Planner::new(g, "svc", Instant(0), PlannerOptions::default());
    p.take_actions();
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
    p.take_actions();
    (p, pid)
}

fn awaits_empty(actions: &[Action]) -> bool {
    actions
        .iter()
        .any(|a| matches!(a, Action::AwaitEmpty { unit } if *unit == U))
}

#[test]
fn the_main_exit_waits_for_the_cgroup_and_is_the_result() {
    // (exit of the main process, state once the cgroup is empty, result)
    for (status, state, result) in [
        (ExitStatus::Code(0), UnitState::Exited, None),
        (
            ExitStatus::Code(3),
            UnitState::Failed,
            Some(FailureKind::ExitCode),
        ),
        (
            ExitStatus::Signal(9),
            UnitState::Failed,
            Some(FailureKind::Signal),
        ),
    ] {
        let (mut p, pid) = running(ExitType::Cgroup);
        p.fact(Fact::Exited { pid, status }, Instant(2));
        assert!(awaits_empty(&p.take_actions()), "{status:?}");
        assert_eq!(p.state(U), UnitState::Running, "{status:?}");
        let view = p.view(U).expect("a view");
        assert_eq!(view.pid, None, "{status:?}");
        assert!(
            view.status.contains("until its cgroup is empty"),
            "{status:?}"
        );
        p.fact(Fact::CgroupEmpty { unit: U }, Instant(3));
        assert_eq!(p.state(U), state, "{status:?}");
        let failure = p.view(U).and_then(|v| v.failure).map(|(k, _)| k);
        assert_eq!(failure, result, "{status:?}");
    }
}

#[test]
fn with_exit_type_main_the_main_exit_ends_the_unit_at_once() {
    let (mut p, pid) = running(ExitType::Main);
    p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Code(0),
        },
        Instant(2),
    );
    assert!(!awaits_empty(&p.take_actions()));
    assert_eq!(p.state(U), UnitState::Exited);
}

#[test]
fn an_empty_cgroup_before_the_main_exit_changes_nothing() {
    let (mut p, _) = running(ExitType::Cgroup);
    p.fact(Fact::CgroupEmpty { unit: U }, Instant(2));
    assert_eq!(p.state(U), UnitState::Running);
    assert!(p.take_actions().is_empty());
}

#[test]
fn a_stop_while_waiting_signals_what_is_left_and_waits_for_the_cgroup() {
    let (mut p, pid) = running(ExitType::Cgroup);
    p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Code(0),
        },
        Instant(2),
    );
    p.take_actions();
    p.set_target("vt", Instant(3)).expect("vt is a target");
    let a = p.take_actions();
    assert!(
        a.iter().any(|a| matches!(
            a,
            Action::Kill { unit, whom: Whom::Rest, .. } if *unit == U
        )),
        "{a:?}"
    );
    // Nothing signals the main process's group by its number (free now).
    assert!(
        !a.iter()
            .any(|a| matches!(a, Action::Kill { whom, .. } if whom.pid() == pid)),
        "{a:?}"
    );
    assert_eq!(p.state(U), UnitState::Stopping);
    p.fact(Fact::CgroupEmpty { unit: U }, Instant(4));
    assert_eq!(p.state(U), UnitState::Disabled);
}
