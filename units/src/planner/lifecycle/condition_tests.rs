//! `exec-condition` (systemd's `ExecCondition=`), one row per way its
//! command ends: success goes on to the pre commands, 1 to 254 skips the
//! unit (not failed, result `exec-condition`, no restart), 255 or a signal
//! fails it, an ignored failure (`-`) goes on, and several run in order.

use super::super::facts::{Action, Fact, Role};
use super::super::record::Phase;
use super::super::{Planner, PlannerOptions};
use crate::exits::ExitStatus;
use crate::graph::{Graph, UnitId};
use crate::spec::{Command, Origin, RestartPolicy, UnitSpec, UnitType};
use crate::state::{FailureKind, UnitState};
use crate::time::Instant;

const U: UnitId = UnitId(0);

/// A required service with `conditions` (the second of each pair says
/// whether its failure is ignored), a pre command and `Restart=always`.
fn planner(conditions: &[bool]) -> Planner {
    let mut s = UnitSpec::new("svc", UnitType::ForegroundNotified);
    s.extras.exec_condition = conditions
        .iter()
        .map(|&ignore| {
            let mut c = Command::new(["/bin/check"]);
            c.ignore_failure = ignore;
            c
        })
        .collect::<Vec<_>>()
        .into();
    s.exec_start_pre = vec![Command::new(["/bin/pre"])].into();
    s.exec_start = Some(Command::new(["/bin/svc"]));
    s.restart = RestartPolicy::Always;
    let (g, d) = Graph::build(vec![(s, Origin::unplaced("svc.yaml"))]);
    assert!(d.is_empty(), "{d:?}");
    Planner::new(g, "svc", Instant(0), PlannerOptions::default())
}

/// The roles the planner asks to spawn now.
fn spawns(p: &mut Planner) -> Vec<Role> {
    p.take_actions()
        .into_iter()
        .filter_map(|a| match a {
            Action::Spawn { role, .. } => Some(role),
            _ => None,
        })
        .collect()
}

/// Spawns `role` as PID `pid` and ends it with `status`; the roles
/// spawned next.
fn run(p: &mut Planner, role: Role, pid: i32, status: ExitStatus) -> Vec<Role> {
    p.fact(Fact::Spawned { unit: U, role, pid }, Instant(1));
    p.fact(Fact::Exited { pid, status }, Instant(2));
    spawns(p)
}

/// The exit of the first condition, whether its failure is ignored, the
/// state and phase after it, the spawns it asks for and the result.
type Row = (
    ExitStatus,
    bool,
    UnitState,
    Phase,
    Vec<Role>,
    Option<FailureKind>,
);

#[test]
fn each_way_an_exec_condition_ends() {
    let rows: [Row; 7] = [
        (
            ExitStatus::Code(0),
            false,
            UnitState::Starting,
            Phase::Pre(0),
            vec![Role::Pre(0)],
            None,
        ),
        (
            ExitStatus::Code(1),
            false,
            UnitState::Exited,
            Phase::Idle,
            vec![],
            Some(FailureKind::ExecCondition),
        ),
        (
            ExitStatus::Code(254),
            false,
            UnitState::Exited,
            Phase::Idle,
            vec![],
            Some(FailureKind::ExecCondition),
        ),
        (
            ExitStatus::Code(255),
            false,
            UnitState::Failed,
            Phase::Idle,
            vec![],
            Some(FailureKind::ExitCode),
        ),
        (
            ExitStatus::Signal(9),
            false,
            UnitState::Failed,
            Phase::Idle,
            vec![],
            Some(FailureKind::Signal),
        ),
        (
            ExitStatus::Code(1),
            true,
            UnitState::Starting,
            Phase::Pre(0),
            vec![Role::Pre(0)],
            None,
        ),
        (
            ExitStatus::Code(255),
            true,
            UnitState::Starting,
            Phase::Pre(0),
            vec![Role::Pre(0)],
            None,
        ),
    ];
    for (status, ignore, state, phase, next, result) in rows {
        let row = format!("{status:?} ignored={ignore}");
        let mut p = planner(&[ignore]);
        assert_eq!(spawns(&mut p), [Role::Condition(0)], "{row}");
        assert_eq!(p.units[0].phase, Phase::Condition(0), "{row}");
        assert_eq!(p.state(U), UnitState::Starting, "{row}");
        assert_eq!(run(&mut p, Role::Condition(0), 10, status), next, "{row}");
        assert_eq!(p.state(U), state, "{row}");
        assert_eq!(p.units[0].phase, phase, "{row}");
        let view = p.view(U).expect("a view of svc");
        assert_eq!(view.failure.map(|(k, _)| k), result, "{row}");
        assert_eq!(
            view.skipped,
            result == Some(FailureKind::ExecCondition),
            "{row}"
        );
        // A skip holds no start slot and no timer, and asks no restart
        // (systemd restarts no unit whose result is `exec-condition`, even
        // with `Restart=always`).
        if state == UnitState::Exited {
            assert_eq!(p.starting, 0, "{row}");
            assert_eq!(p.records[0].timer, None, "{row}");
            p.tick(Instant(1_000_000_000));
            assert!(spawns(&mut p).is_empty(), "{row}");
            assert_eq!(p.state(U), UnitState::Exited, "{row}");
        }
    }
}

#[test]
fn exec_conditions_run_in_order_before_the_pre_commands() {
    let mut p = planner(&[false, false]);
    assert_eq!(spawns(&mut p), [Role::Condition(0)]);
    assert_eq!(
        run(&mut p, Role::Condition(0), 10, ExitStatus::Code(0)),
        [Role::Condition(1)]
    );
    assert_eq!(p.units[0].phase, Phase::Condition(1));
    // The second one says no: the start is skipped.
    assert!(run(&mut p, Role::Condition(1), 11, ExitStatus::Code(3)).is_empty());
    assert_eq!(p.state(U), UnitState::Exited);
    let status = p.view(U).expect("a view of svc").status;
    assert!(
        status.contains("exec-condition 1 exited with exit status 3"),
        "{status}"
    );
}

#[test]
fn a_unit_without_exec_condition_runs_its_pre_commands_first() {
    let mut p = planner(&[]);
    assert_eq!(spawns(&mut p), [Role::Pre(0)]);
}
