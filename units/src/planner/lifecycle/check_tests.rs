//! The `Check` phase's rows of the table of events (the module
//! documentation's **Conditions**), through the whole planner: a unit
//! `cond` with a condition, required by `app` (which `depends-on` it) or
//! by the target itself.

use super::super::facts::{Action, Fact, Role};
use super::super::record::Phase;
use super::super::{check_unit, CheckOutcome, Planner};
use crate::condition::{parse_value as parse_condition, ScriptedFacts, ScriptedPath};
use crate::exits::ExitStatus;
use crate::graph::UnitId;
use crate::spec::{Command, RestartPolicy, UnitSpec, UnitType};
use crate::state::UnitState;
use crate::time::Instant;

/// `cond`, a oneshot with a pre command, a stop command, a restart
/// policy and `ConditionPathExists=/etc/cond` (or the `Assert…` twin).
fn cond(assert: bool) -> UnitSpec {
    let mut s = UnitSpec::new("cond", UnitType::Oneshot);
    s.exec_start_pre = vec![Command::new(["/bin/pre"])].into();
    s.exec_start = Some(Command::new(["/bin/cond"]));
    s.exec_stop = Some(Command::new(["/bin/stop"]));
    s.restart = RestartPolicy::OnFailure;
    s.extras.conditions.push(
        parse_condition("PathExists", assert, "/etc/cond")
            .unwrap()
            .unwrap(),
    );
    s
}

/// `app`, which depends on `cond`.
fn app() -> UnitSpec {
    let mut s = UnitSpec::new("app", UnitType::ForegroundSupervised);
    s.exec_start = Some(Command::new(["/bin/app"]));
    s.depends_on = vec!["cond".to_string()].into();
    s
}

const COND: UnitId = UnitId(1);
const APP: UnitId = UnitId(0);

/// A planner for `units` (by name order: `app` is 0, `cond` 1) reaching
/// `target`.
fn planner(units: Vec<UnitSpec>, target: &str) -> Planner {
    super::super::regressions::planner_reaching(units, target)
}

fn check_asked(p: &mut Planner) -> bool {
    p.take_actions()
        .iter()
        .any(|a| matches!(a, Action::CheckConditions { unit, .. } if *unit == COND))
}

fn answer(p: &mut Planner, outcome: CheckOutcome) -> Vec<Action> {
    p.fact(
        Fact::Checked {
            unit: COND,
            outcome,
        },
        Instant(1),
    );
    p.take_actions()
}

fn failed_condition() -> CheckOutcome {
    CheckOutcome::ConditionFailed("ConditionPathExists=/etc/cond was not met".into())
}

#[test]
fn start_rule_with_conditions_asks_the_init_and_is_starting() {
    let mut p = planner(vec![app(), cond(false)], "app");
    assert!(check_asked(&mut p));
    assert_eq!(p.units[COND.index()].phase, Phase::Check);
    let v = p.view(COND).unwrap();
    assert_eq!(v.state, UnitState::Starting);
    assert_eq!(v.status, "checking conditions");
    assert!(!v.skipped);
    // Its dependent waits for the answer.
    assert_eq!(p.state(APP), UnitState::Waiting);
}

#[test]
fn conditions_hold_and_the_start_goes_on() {
    let mut p = planner(vec![app(), cond(false)], "app");
    check_asked(&mut p);
    let a = answer(&mut p, CheckOutcome::Hold);
    assert!(
        matches!(
            a.as_slice(),
            [Action::Spawn {
                unit: COND,
                role: Role::Pre(0),
                ..
            }]
        ),
        "{a:?}"
    );
    assert_eq!(p.units[COND.index()].phase, Phase::Pre(0));
    assert_eq!(p.state(COND), UnitState::Starting);
}

#[test]
fn a_failed_condition_skips_the_unit_and_its_dependents_proceed() {
    let mut p = planner(vec![app(), cond(false)], "app");
    check_asked(&mut p);
    let a = answer(&mut p, failed_condition());
    // Nothing of `cond` runs; `app` starts.
    assert!(
        matches!(
            a.as_slice(),
            [Action::Spawn {
                unit: APP,
                role: Role::Main,
                ..
            }]
        ),
        "{a:?}"
    );
    let v = p.view(COND).unwrap();
    assert_eq!(v.state, UnitState::Exited);
    assert!(v.skipped);
    assert_eq!(
        v.status,
        "skipped: ConditionPathExists=/etc/cond was not met"
    );
    assert_eq!(p.units[COND.index()].phase, Phase::Idle);
    assert!(p.failed_units().is_empty());
}

#[test]
fn a_failed_assertion_fails_the_unit_without_a_restart() {
    let mut p = planner(vec![app(), cond(true)], "app");
    check_asked(&mut p);
    let why = "AssertPathExists=/etc/cond was not met".to_string();
    let a = answer(&mut p, CheckOutcome::AssertFailed(why));
    // No process, not even a stop-post; no restart pending.
    assert!(a.is_empty(), "{a:?}");
    let v = p.view(COND).unwrap();
    assert_eq!(v.state, UnitState::Failed);
    assert!(!v.skipped);
    assert_eq!(v.restart_at, None);
    assert_eq!(
        v.status,
        "assertion failed: AssertPathExists=/etc/cond was not met"
    );
    assert_eq!(p.next_deadline(), None);
    // Its hard dependent is blocked by it.
    assert_eq!(p.view(APP).unwrap().blocked_by.as_deref(), Some("cond"));
}

#[test]
fn the_check_runs_again_at_each_start() {
    let mut p = planner(vec![app(), cond(false)], "app");
    check_asked(&mut p);
    answer(&mut p, failed_condition());
    p.restart("cond", Instant(2)).unwrap();
    assert!(check_asked(&mut p));
    assert_eq!(p.state(COND), UnitState::Starting);
    // Still shown as skipped? No: a new start forgets it.
    assert!(!p.view(COND).unwrap().skipped);
    answer(&mut p, CheckOutcome::Hold);
    assert_eq!(p.units[COND.index()].phase, Phase::Pre(0));
}

#[test]
fn a_skipped_unit_that_leaves_the_required_set_runs_no_stop_command() {
    let mut p = planner(vec![app(), cond(false)], "app");
    check_asked(&mut p);
    answer(&mut p, failed_condition());
    p.fact(
        Fact::Spawned {
            unit: APP,
            role: Role::Main,
            pid: 10,
        },
        Instant(1),
    );
    p.shutdown(Instant(2));
    // `app` stops first; `cond` (skipped) stops without its exec-stop.
    p.take_actions();
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Signal(15),
        },
        Instant(3),
    );
    let a = p.take_actions();
    assert!(
        !a.iter()
            .any(|a| matches!(a, Action::Spawn { unit: COND, .. })),
        "{a:?}"
    );
    assert_eq!(p.state(COND), UnitState::Disabled);
    assert!(p.drained());
}

#[test]
fn a_stop_while_checking_goes_back_to_idle_and_a_late_answer_is_ignored() {
    let mut p = planner(vec![cond(false)], "cond");
    check_asked(&mut p);
    p.shutdown(Instant(1));
    assert_eq!(p.units[COND.index() - 1].phase, Phase::Idle);
    let id = UnitId(0);
    assert_eq!(p.state(id), UnitState::Disabled);
    p.fact(
        Fact::Checked {
            unit: id,
            outcome: CheckOutcome::Hold,
        },
        Instant(2),
    );
    assert!(p.take_actions().is_empty());
    assert!(p.drained());
}

#[test]
fn check_unit_reads_conditions_before_assertions() {
    let mut spec = cond(true);
    spec.extras.conditions.push(
        parse_condition("Virtualization", false, "vm")
            .unwrap()
            .unwrap(),
    );
    let machine = ScriptedFacts::default();
    // Both fail: the condition decides (skipped, not failed).
    assert_eq!(
        check_unit(&spec, &machine),
        CheckOutcome::ConditionFailed("ConditionVirtualization=vm was not met".into())
    );
    let machine = ScriptedFacts {
        virtualization: Some("kvm".into()),
        ..ScriptedFacts::default()
    };
    assert_eq!(
        check_unit(&spec, &machine),
        CheckOutcome::AssertFailed("AssertPathExists=/etc/cond was not met".into())
    );
    let machine = machine.with_path("/etc/cond", ScriptedPath::File);
    assert_eq!(check_unit(&spec, &machine), CheckOutcome::Hold);
}
