//! Tests of the jobs read off the init's states.

use super::*;
use crate::model::tests::unit;
use flotilla_units::spec::UnitType;

fn at(state: UnitState) -> UnitStatus {
    unit("a", UnitType::Oneshot, state, "")
}

#[test]
fn each_state_is_its_job() {
    let blocked = UnitStatus {
        blocked_by: Some("db".into()),
        ..at(UnitState::Waiting)
    };
    let table = [
        (at(UnitState::Waiting), Some("start")),
        (at(UnitState::Starting), Some("start")),
        (at(UnitState::Stopping), Some("stop")),
        (at(UnitState::Reloading), Some("reload")),
        (at(UnitState::Running), None),
        (at(UnitState::Exited), None),
        (at(UnitState::Failed), None),
        (at(UnitState::Disabled), None),
        (blocked, None),
    ];
    for (s, kind) in table {
        assert_eq!(pending_kind(&s), kind, "{:?}", s.state);
    }
}

#[test]
fn each_end_has_its_result() {
    let blocked = UnitStatus {
        blocked_by: Some("db".into()),
        ..at(UnitState::Waiting)
    };
    let table = [
        ("start", at(UnitState::Running), "done"),
        ("start", at(UnitState::Exited), "done"),
        ("start", at(UnitState::Failed), "failed"),
        ("start", blocked, "dependency"),
        ("start", at(UnitState::Stopping), "canceled"),
        ("start", at(UnitState::Disabled), "canceled"),
        ("stop", at(UnitState::Disabled), "done"),
        ("stop", at(UnitState::Failed), "failed"),
        ("stop", at(UnitState::Starting), "canceled"),
        ("reload", at(UnitState::Running), "done"),
        ("reload", at(UnitState::Failed), "failed"),
    ];
    for (kind, s, word) in table {
        assert_eq!(result(kind, &s), word, "{kind} then {:?}", s.state);
    }
}

/// A unit pulled in, waiting for its `After=` dependency, then started:
/// one job, `waiting` then `running`, ended `done`.
#[test]
fn a_pulled_in_start_waits_runs_and_ends() {
    let mut q = Queue::default();
    let new = q.changed("a.service", &at(UnitState::Waiting));
    assert_eq!(new, vec![Change::New(1, "a.service".into())]);
    assert_eq!(q.get(1).unwrap().state(), "waiting");
    assert!(q.changed("a.service", &at(UnitState::Starting)).is_empty());
    assert_eq!(q.of("a.service").unwrap().1.state(), "running");
    let end = q.changed("a.service", &at(UnitState::Exited));
    assert_eq!(end, vec![Change::Removed(1, "a.service".into(), "done")]);
    assert!(q.all().is_empty());
    // The next start is a job of its own.
    let again = q.changed("a.service", &at(UnitState::Starting));
    assert_eq!(again, vec![Change::New(2, "a.service".into())]);
}

/// A stop during a start cancels the start job and is a job of its own.
#[test]
fn a_stop_replaces_the_start() {
    let mut q = Queue::default();
    q.changed("a.service", &at(UnitState::Starting));
    let c = q.changed("a.service", &at(UnitState::Stopping));
    assert_eq!(
        c,
        vec![
            Change::Removed(1, "a.service".into(), "canceled"),
            Change::New(2, "a.service".into()),
        ]
    );
    assert_eq!(q.get(2).unwrap().kind, "stop");
}

/// A start asked over D-Bus of a unit the init is already starting takes
/// that job over (announced already); the init's states then leave it to
/// its follower, and make no second one.
#[test]
fn an_asked_job_takes_over_the_inits_own() {
    let mut q = Queue::default();
    q.changed("a.service", &at(UnitState::Waiting));
    assert_eq!(q.ask("a.service", "start", true), (1, false));
    assert!(q.changed("a.service", &at(UnitState::Starting)).is_empty());
    assert_eq!(q.get(1).unwrap().state(), "running");
    assert!(q.changed("a.service", &at(UnitState::Running)).is_empty());
    assert_eq!(q.all().len(), 1, "the follower ends it");
    q.end(1);
    // Another kind is a new job; the init's own jobs make none beside it.
    assert_eq!(q.ask("a.service", "restart", false), (2, true));
    assert!(q.changed("a.service", &at(UnitState::Stopping)).is_empty());
    assert_eq!(q.all().len(), 1);
}

#[test]
fn the_jobs_of_units_gone_are_canceled() {
    let mut q = Queue::default();
    q.changed("a.service", &at(UnitState::Starting));
    q.changed("b.service", &at(UnitState::Starting));
    q.ask("c.service", "start", false);
    let gone = q.forget(|u| u == "b.service");
    assert_eq!(
        gone,
        vec![Change::Removed(1, "a.service".into(), "canceled")]
    );
    let left: Vec<u32> = q.all().into_iter().map(|(id, _)| id).collect();
    assert_eq!(left, vec![2, 3], "the asked job is its follower's");
}

/// A start asked after a stop asked over D-Bus replaces it: the stop is
/// marked `canceled`; the init's own stop and other units' are not.
#[test]
fn a_start_cancels_the_stop_asked_before() {
    let mut q = Queue::default();
    let (stop, _) = q.ask("a.service", "stop", false);
    let (other, _) = q.ask("b.service", "stop", false);
    q.changed(
        "c.service",
        &unit("c.service", UnitType::Oneshot, UnitState::Stopping, ""),
    );
    let (own, _) = q.of("c.service").map(|(id, j)| (id, j.clone())).unwrap();
    assert!(q.cancel_stop("a.service"));
    assert!(q.canceled(stop));
    assert!(!q.canceled(other));
    assert!(!q.cancel_stop("c.service"));
    assert!(!q.canceled(own));
}

/// An irreversible stop holds its unit from before its job exists until
/// that job ends; a release undoes a hold whose stop was not asked.
#[test]
fn an_irreversible_stop_holds_until_its_job_ends() {
    let mut q = Queue::default();
    q.begin_stop("a.service", true);
    assert!(q.irreversible("a.service"));
    let (id, _) = q.ask("a.service", "stop", false);
    let (start, _) = q.ask("b.service", "start", false);
    q.end(start);
    assert!(q.irreversible("a.service"));
    q.end(id);
    assert!(!q.irreversible("a.service"));

    q.begin_stop("b.service", true);
    q.release("b.service");
    assert!(!q.irreversible("b.service"));
}

/// A start asked while a stop is being asked of the init (its stop
/// command asks for it before the init answers) replaces that stop: its
/// job is canceled once made; a stop released unasked leaves no mark.
#[test]
fn a_start_cancels_a_stop_still_being_asked() {
    let mut q = Queue::default();
    q.begin_stop("a.service", false);
    assert!(!q.irreversible("a.service"));
    assert!(q.cancel_stop("a.service"));
    let (id, _) = q.ask("a.service", "stop", false);
    assert!(q.canceled(id));

    q.begin_stop("b.service", false);
    let (id, _) = q.ask("b.service", "stop", false);
    assert!(!q.canceled(id), "no start came");

    q.begin_stop("c.service", false);
    assert!(q.cancel_stop("c.service"));
    q.release("c.service");
    let (id, _) = q.ask("c.service", "stop", false);
    assert!(!q.canceled(id), "the released stop's mark is gone");
}
