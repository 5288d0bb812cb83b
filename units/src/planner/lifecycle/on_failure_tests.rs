//! `on-failure` (systemd's `OnFailure=`): a unit that fails for good puts
//! the units it names in the triggered set; one that will restart does
//! not, until its restarts give out.

use super::super::facts::{Action, ExitStatus, Fact};
use super::super::regressions::planner_reaching;
use super::super::Planner;
use crate::graph::UnitId;
use crate::spec::{Command, RestartPolicy, UnitSpec, UnitType};
use crate::state::UnitState;
use crate::time::Instant;

// By name order: `alert` 0, `svc` 1.
const ALERT: UnitId = UnitId(0);
const SVC: UnitId = UnitId(1);

fn units(restart: RestartPolicy) -> Vec<UnitSpec> {
    let mut svc = UnitSpec::new("svc", UnitType::ForegroundSupervised);
    svc.exec_start = Some(Command::new(["/bin/svc"]));
    svc.restart = restart;
    svc.extras.on_failure = vec!["alert".into()].into();
    let mut alert = UnitSpec::new("alert", UnitType::Oneshot);
    alert.exec_start = Some(Command::new(["/bin/alert"]));
    vec![svc, alert]
}

/// The PIDs spawned for `unit` among the actions asked for.
fn spawned(p: &mut Planner, unit: UnitId) -> usize {
    p.take_actions()
        .iter()
        .filter(|a| matches!(a, Action::Spawn { unit: u, .. } if *u == unit))
        .count()
}

fn fail_svc(p: &mut Planner, pid: i32, at: u64) {
    p.fact(
        Fact::Spawned {
            unit: SVC,
            role: super::super::facts::Role::Main,
            pid,
        },
        Instant(at),
    );
    p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Code(1),
        },
        Instant(at + 1),
    );
}

#[test]
fn a_unit_that_fails_for_good_starts_its_on_failure_unit() {
    let mut p = planner_reaching(units(RestartPolicy::No), "svc");
    assert_eq!(p.state(ALERT), UnitState::Disabled);
    p.take_actions();
    fail_svc(&mut p, 10, 1);
    assert_eq!(p.state(SVC), UnitState::Failed);
    assert_eq!(spawned(&mut p, ALERT), 1, "alert started");
    assert!(p.is_required(ALERT), "required while in the triggered set");
    let alert_pid = 20;
    p.fact(
        Fact::Spawned {
            unit: ALERT,
            role: super::super::facts::Role::Main,
            pid: alert_pid,
        },
        Instant(3),
    );
    p.fact(
        Fact::Exited {
            pid: alert_pid,
            status: ExitStatus::Code(0),
        },
        Instant(4),
    );
    // Done: it leaves the set and is not started again.
    assert!(!p.is_required(ALERT));
    assert_eq!(spawned(&mut p, ALERT), 0);
}

#[test]
fn a_failure_that_will_restart_starts_nothing() {
    let mut p = planner_reaching(units(RestartPolicy::OnFailure), "svc");
    p.take_actions();
    fail_svc(&mut p, 10, 1);
    assert_eq!(p.state(SVC), UnitState::Failed);
    assert_eq!(spawned(&mut p, ALERT), 0);
    assert!(!p.is_required(ALERT));
}
