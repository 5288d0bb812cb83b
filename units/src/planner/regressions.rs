//! Regression tests for bugs found by the system tests
//! (`tests/tests/init/*.rs`); the lifecycle table's cells are tested in
//! `lifecycle/tests.rs`, the rules against a simulated world in
//! `units/tests/model/planner/`.
use super::*;
use crate::spec::{Command, Origin, RestartPolicy, Signal, UnitSpec, UnitType};
use std::path::PathBuf;
use std::time::Duration;

fn planner(units: Vec<UnitSpec>) -> Planner {
    planner_reaching(units, "svc")
}

/// A planner for `units` (each from `NAME.yaml`) reaching `target`.
pub(super) fn planner_reaching(units: Vec<UnitSpec>, target: &str) -> Planner {
    let (g, diags) = Graph::build(
        units
            .into_iter()
            .map(|s| {
                let o = Origin::unplaced(format!("{}.yaml", s.name));
                (s, o)
            })
            .collect(),
    );
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    Planner::new(g, target, Instant(0), PlannerOptions::default())
}

fn unit(kind: UnitType) -> UnitSpec {
    let mut s = UnitSpec::new("svc", kind);
    s.exec_start = Some(Command::new(["/bin/svc"]));
    s
}

/// Feeds `Spawned` for the main process the planner asked for.
fn spawn_main(p: &mut Planner, pid: i32) {
    let a = p.take_actions();
    assert!(
        matches!(
            a.as_slice(),
            [Action::Spawn {
                role: Role::Main,
                ..
            }]
        ),
        "{a:?}"
    );
    p.fact(
        Fact::Spawned {
            unit: UnitId(0),
            role: Role::Main,
            pid,
        },
        Instant(1),
    );
}

/// A notified unit that says STOPPING=1 and exits 0 is `exited`, like
/// any clean exit; it used to go back to `waiting` and start again at
/// once, as if the init had stopped it.
#[test]
fn stopping_then_clean_exit_is_exited_not_restarted() {
    let mut p = planner(vec![unit(UnitType::ForegroundNotified)]);
    spawn_main(&mut p, 10);
    let id = UnitId(0);
    p.fact(
        Fact::Notify {
            unit: id,
            msg: Notify::Ready,
        },
        Instant(2),
    );
    p.fact(
        Fact::Notify {
            unit: id,
            msg: Notify::Stopping,
        },
        Instant(3),
    );
    assert_eq!(p.state(id), UnitState::Stopping);
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Code(0),
        },
        Instant(4),
    );
    assert_eq!(p.state(id), UnitState::Exited);
    assert!(
        !p.take_actions()
            .iter()
            .any(|a| matches!(a, Action::Spawn { .. })),
        "not started again"
    );
}

/// STOPPING=1 then a failing exit is a failure with a restart.
#[test]
fn stopping_then_failing_exit_is_a_failure() {
    let mut p = planner(vec![unit(UnitType::ForegroundNotified)]);
    spawn_main(&mut p, 10);
    let id = UnitId(0);
    for msg in [Notify::Ready, Notify::Stopping] {
        p.fact(Fact::Notify { unit: id, msg }, Instant(2));
    }
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Code(2),
        },
        Instant(4),
    );
    assert_eq!(p.state(id), UnitState::Failed);
    assert!(p.view(id).is_some_and(|v| v.restart_at.is_some()));
}

/// When the main process dies, what it left in its process group (an
/// nginx master's workers) gets SIGKILL; it used to be left running.
#[test]
fn leftovers_of_a_dead_main_process_are_killed() {
    let mut p = planner(vec![unit(UnitType::ForegroundSupervised)]);
    spawn_main(&mut p, 10);
    p.take_actions();
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Signal(9),
        },
        Instant(2),
    );
    assert_eq!(p.state(UnitId(0)), UnitState::Failed);
    assert!(
        p.take_actions().contains(&Action::Kill {
            unit: UnitId(0),
            whom: Whom::Group(10),
            signal: Signal::KILL,
        }),
        "the dead leader's group is killed"
    );
}

/// A pidfile written only after the start command exited (redis) is
/// read again until it is there; the start still fails at
/// start-timeout, with systemd's result `timeout`. The first miss used to fail the unit.
#[test]
fn pidfile_is_read_again_until_start_timeout() {
    let mut u = unit(UnitType::BackgroundPidfile);
    u.extras.pidfile = Some(PathBuf::from("/run/svc.pid"));
    u.start_timeout = Duration::from_secs(1);
    let mut p = planner(vec![u]);
    let id = UnitId(0);
    spawn_main(&mut p, 10);
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Code(0),
        },
        Instant(2),
    );
    let read = Action::ReadPidfile {
        unit: id,
        path: PathBuf::from("/run/svc.pid"),
    };
    assert_eq!(p.take_actions(), vec![read.clone()]);
    let missing = || Fact::Pidfile {
        unit: id,
        result: Err("no such file".into()),
    };
    p.fact(missing(), Instant(3));
    assert_eq!(p.state(id), UnitState::Starting);
    let t = p.next_deadline().expect("retry timer");
    assert!(t.since(Instant(3)) <= Duration::from_millis(10));
    p.tick(t);
    assert_eq!(p.take_actions(), vec![read.clone()]);
    p.fact(
        Fact::Pidfile {
            unit: id,
            result: Ok(42),
        },
        t,
    );
    assert_eq!(p.state(id), UnitState::Running);
    assert_eq!(p.view(id).and_then(|v| v.pid), Some(42));

    // Never written: failed at the start-timeout.
    let mut u = unit(UnitType::BackgroundPidfile);
    u.extras.pidfile = Some(PathBuf::from("/run/svc.pid"));
    u.start_timeout = Duration::from_millis(100);
    u.restart = RestartPolicy::No;
    let mut p = planner(vec![u]);
    spawn_main(&mut p, 10);
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Code(0),
        },
        Instant(2),
    );
    for _ in 0..100 {
        p.take_actions();
        p.fact(missing(), p.now);
        if p.state(id) == UnitState::Failed {
            break;
        }
        let t = p.next_deadline().expect("retry timer");
        p.tick(t);
    }
    assert_eq!(p.state(id), UnitState::Failed);
    assert!(p.now.since(Instant(0)) >= Duration::from_millis(100));
    assert!(p
        .view(id)
        .is_some_and(|v| v.status.contains("start timed out")));
    // systemd's `Result=timeout` (test 20's refused pidfile), not
    // `protocol`, which is for a daemon that left no process behind.
    assert_eq!(
        p.records[0].rare().failure.as_ref().map(|f| f.kind),
        Some(crate::state::FailureKind::Timeout)
    );
}

/// background-scripted without exec-stop: a stop sends the kill
/// signal to the group its start script left; it used to send nothing.
#[test]
fn scripted_stop_signals_the_start_scripts_group() {
    let mut p = planner(vec![unit(UnitType::BackgroundScripted)]);
    let id = UnitId(0);
    spawn_main(&mut p, 10);
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Code(0),
        },
        Instant(2),
    );
    assert_eq!(p.state(id), UnitState::Running);
    p.shutdown(Instant(3));
    assert!(
        p.take_actions().contains(&Action::Kill {
            unit: id,
            whom: Whom::Group(10),
            signal: Signal::TERM,
        }),
        "the start script's group gets kill-signal"
    );
    assert!(p.drained());
}

/// A waiting unit's status names what it waits for now; it used to
/// keep naming the first dependency that was not active.
#[test]
fn waiting_status_follows_the_dependencies() {
    let mut a = UnitSpec::new("a", UnitType::ForegroundNotified);
    a.exec_start = Some(Command::new(["/bin/a"]));
    let mut b = a.clone();
    b.name = "b".into();
    b.provides = vec!["b".into()].into();
    let mut top = UnitSpec::new("svc", UnitType::Virtual);
    top.depends_on = vec!["a".into(), "b".into()].into();
    let mut p = planner(vec![a, b, top]);
    let id = |p: &Planner, n: &str| p.graph().unit(n).unwrap();
    for (n, pid) in [("a", 10), ("b", 11)] {
        let unit = id(&p, n);
        p.fact(
            Fact::Spawned {
                unit,
                role: Role::Main,
                pid,
            },
            Instant(1),
        );
    }
    let svc = id(&p, "svc");
    assert_eq!(p.view(svc).unwrap().status, "waiting for a");
    let a = id(&p, "a");
    p.fact(
        Fact::Notify {
            unit: a,
            msg: Notify::Ready,
        },
        Instant(2),
    );
    assert_eq!(p.state(svc), UnitState::Waiting);
    assert_eq!(p.view(svc).unwrap().status, "waiting for b");
}

/// A unit that becomes degraded is reported as changed (for
/// `subscribe`); it used to change silently.
#[test]
fn becoming_degraded_is_a_change() {
    let mut net = UnitSpec::new("net", UnitType::ForegroundSupervised);
    net.exec_start = Some(Command::new(["/bin/net"]));
    net.restart = RestartPolicy::No;
    let mut top = UnitSpec::new("svc", UnitType::Virtual);
    top.depends_ms = vec!["net".into()].into();
    let mut p = planner(vec![net, top]);
    let net = p.graph().unit("net").unwrap();
    let svc = p.graph().unit("svc").unwrap();
    p.fact(
        Fact::Spawned {
            unit: net,
            role: Role::Main,
            pid: 10,
        },
        Instant(1),
    );
    assert_eq!(p.state(svc), UnitState::Running);
    p.take_changed();
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Signal(9),
        },
        Instant(2),
    );
    assert!(p.view(svc).unwrap().degraded);
    assert!(p.take_changed().contains(&svc));
}

/// A start script that exits 0 hands over to what it started: its
/// group (where the service may live) is not killed.
#[test]
fn a_start_script_exit_kills_nothing() {
    let mut p = planner(vec![unit(UnitType::BackgroundScripted)]);
    spawn_main(&mut p, 10);
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Code(0),
        },
        Instant(2),
    );
    assert_eq!(p.state(UnitId(0)), UnitState::Running);
    assert!(
        !p.take_actions()
            .iter()
            .any(|a| matches!(a, Action::Kill { .. })),
        "nothing killed"
    );
}

/// An `exec-start-pre` that cannot be spawned fails the start at once; the
/// stop that followed used to wait for the pre command that never ran
/// until the stop timer abandoned it (two `stop-timeout`s in `stopping`).
#[test]
fn a_pre_command_that_cannot_be_spawned_fails_at_once() {
    let mut u = unit(UnitType::ForegroundSupervised);
    u.exec_start_pre = vec![Command::new(["/nonexistent"])].into();
    u.restart = RestartPolicy::No;
    let mut p = planner(vec![u]);
    let a = p.take_actions();
    assert!(
        matches!(
            a.as_slice(),
            [Action::Spawn {
                role: Role::Pre(0),
                ..
            }]
        ),
        "{a:?}"
    );
    p.fact(
        Fact::SpawnFailed {
            unit: UnitId(0),
            role: Role::Pre(0),
            error: "no such file".into(),
        },
        Instant(1),
    );
    assert_eq!(p.state(UnitId(0)), UnitState::Failed);
    let v = p.view(UnitId(0)).unwrap();
    assert_eq!(v.status, "exec-start-pre: no such file");
    assert!(p.next_deadline().is_none(), "no stop timer left");
}

/// `MAINPID=` naming another unit's process (root may, as systemd's test
/// 20 does) makes it the unit's main PID, and leaves it the other unit's:
/// its exit ends the other unit, and naming another main PID after does
/// not make the other unit lose it. It used to move the process to the
/// naming unit, and the next `MAINPID=` forgot it for both.
#[test]
fn a_main_pid_named_from_another_unit_stays_that_units() {
    let mut script = UnitSpec::new("script", UnitType::Oneshot);
    script.exec_start = Some(Command::new(["/bin/script"]));
    let mut sleep = UnitSpec::new("sleep", UnitType::ForegroundSupervised);
    sleep.exec_start = Some(Command::new(["/bin/sleep"]));
    sleep.restart = RestartPolicy::No;
    let mut top = UnitSpec::new("svc", UnitType::Virtual);
    top.depends_on = vec!["script".into(), "sleep".into()].into();
    let mut p = planner(vec![script, sleep, top]);
    let id = |p: &Planner, n: &str| p.graph().unit(n).unwrap();
    let (script, sleep) = (id(&p, "script"), id(&p, "sleep"));
    for (unit, pid) in [(script, 10), (sleep, 20)] {
        p.fact(
            Fact::Spawned {
                unit,
                role: Role::Main,
                pid,
            },
            Instant(1),
        );
    }
    let main = |p: &Planner, u| p.view(u).and_then(|v| v.pid);
    let notify = |p: &mut Planner, pid| {
        p.fact(
            Fact::Notify {
                unit: script,
                msg: Notify::MainPid(pid),
            },
            Instant(2),
        )
    };
    notify(&mut p, 20);
    assert_eq!(main(&p, script), Some(20));
    assert_eq!(p.owner(20), Some((sleep, Role::Main)));
    // A process of its own (the script's child, 11), then its own again.
    notify(&mut p, 11);
    assert_eq!(main(&p, script), Some(11));
    notify(&mut p, 10);
    assert_eq!(main(&p, script), Some(10));
    assert_eq!(p.owner(20), Some((sleep, Role::Main)));
    assert_eq!(p.owner(10), Some((script, Role::Main)));
    p.fact(
        Fact::Exited {
            pid: 20,
            status: ExitStatus::Code(0),
        },
        Instant(3),
    );
    assert_eq!(p.state(sleep), UnitState::Exited);
    assert_eq!(p.state(script), UnitState::Starting);
    p.fact(
        Fact::Exited {
            pid: 10,
            status: ExitStatus::Code(0),
        },
        Instant(4),
    );
    assert_eq!(p.state(script), UnitState::Exited);
}
