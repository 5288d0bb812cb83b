//! `on-failure` and `on-success` (systemd's `OnFailure=`, `OnSuccess=`): a unit that fails for good puts
//! the units it names in the triggered set; one that will restart does
//! not, until its restarts give out.

use super::super::facts::{Action, Fact};
use super::super::regressions::planner_reaching;
use super::super::Planner;
use crate::exits::ExitStatus;
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

#[test]
fn the_on_failure_unit_is_told_how_the_unit_ended() {
    let mut p = planner_reaching(units(RestartPolicy::No), "svc");
    p.take_actions();
    fail_svc(&mut p, 10, 1);
    let m = p
        .monitor(ALERT)
        .expect("alert is in T for svc's end")
        .clone();
    assert_eq!(
        (
            m.unit.as_str(),
            m.result,
            m.exit_code,
            m.exit_status.as_str()
        ),
        ("svc", "exit-code", "exited", "1")
    );
    assert_eq!(m.invocation_id.len(), 32);
    assert!(m.invocation_id.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(m.env()[0], ("MONITOR_SERVICE_RESULT", "exit-code"));
    // Not the unit that ended, nor once the alert has settled.
    assert!(p.monitor(SVC).is_none());
    p.fact(
        Fact::Spawned {
            unit: ALERT,
            role: super::super::facts::Role::Main,
            pid: 20,
        },
        Instant(3),
    );
    p.fact(
        Fact::Exited {
            pid: 20,
            status: ExitStatus::Code(0),
        },
        Instant(4),
    );
    assert!(p.monitor(ALERT).is_none());
}

/// `on-success` (systemd's `OnSuccess=`): a oneshot done (not remaining)
/// starts its units, told it succeeded; a failure does not.
#[test]
fn a_unit_that_ends_without_failing_starts_its_on_success_unit() {
    let job = |exit: i32| {
        let mut svc = UnitSpec::new("svc", UnitType::Oneshot);
        svc.exec_start = Some(Command::new(["/bin/svc"]));
        svc.extras.on_success = vec!["alert".into()].into();
        // As a systemd unit without `RemainAfterExit=`: inactive once done.
        svc.remain_after_exit = Some(false);
        let mut alert = UnitSpec::new("alert", UnitType::Oneshot);
        alert.exec_start = Some(Command::new(["/bin/alert"]));
        let mut p = planner_reaching(vec![svc, alert], "svc");
        p.take_actions();
        p.fact(
            Fact::Spawned {
                unit: SVC,
                role: super::super::facts::Role::Main,
                pid: 10,
            },
            Instant(1),
        );
        p.fact(
            Fact::Exited {
                pid: 10,
                status: ExitStatus::Code(exit),
            },
            Instant(2),
        );
        p
    };
    let mut p = job(0);
    assert_eq!(spawned(&mut p, ALERT), 1, "alert started");
    let m = p.monitor(ALERT).expect("alert in T");
    assert_eq!(
        (m.result, m.exit_code, m.exit_status.as_str()),
        ("success", "exited", "0")
    );
    let mut p = job(3);
    assert_eq!(p.state(SVC), UnitState::Failed);
    assert_eq!(spawned(&mut p, ALERT), 0);
}
