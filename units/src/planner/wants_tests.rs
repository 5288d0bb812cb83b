//! Tests of a stop by hand against the starts it pulled in (`wants.rs`'s
//! module doc): a systemd unit's pending start goes on, a YAML unit's is
//! stopped with what pulled it in.
use super::*;
use crate::spec::{Command, Origin, UnitSpec, UnitType};

/// What the world did for the planner: the units spawned and killed.
#[derive(Default)]
pub(super) struct Seen {
    pub spawned: Vec<String>,
    pub killed: Vec<String>,
}

/// Answers every action: a spawn gets a PID (the process runs on), a kill
/// ends the unit's main process by the signal.
pub(super) fn settle(p: &mut Planner, pids: &mut Vec<(i32, UnitId)>, now: u64, seen: &mut Seen) {
    for _ in 0..100 {
        let actions = p.take_actions();
        if actions.is_empty() {
            return;
        }
        for a in actions {
            match a {
                Action::Spawn { unit, role, .. } => {
                    let pid = 100 + pids.len() as i32;
                    pids.push((pid, unit));
                    seen.spawned.push(p.graph().node(unit).spec.name.clone());
                    p.fact(Fact::Spawned { unit, role, pid }, Instant(now));
                }
                Action::Kill { unit, signal, .. } => {
                    seen.killed.push(p.graph().node(unit).spec.name.clone());
                    if let Some(&(pid, _)) = pids.iter().rev().find(|(_, u)| *u == unit) {
                        p.fact(
                            Fact::Exited {
                                pid,
                                status: ExitStatus::Signal(signal.0),
                            },
                            Instant(now),
                        );
                    }
                }
                _ => {}
            }
        }
    }
    panic!("the planner did not settle");
}

/// The process spawned `nth` exits with status 0 at `now`, and the
/// planner settles.
fn exit_ok(p: &mut Planner, pids: &mut Vec<(i32, UnitId)>, nth: usize, now: u64, seen: &mut Seen) {
    let (pid, _) = pids[nth];
    p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Code(0),
        },
        Instant(now),
    );
    settle(p, pids, now, seen);
}

fn oneshot(name: &str, depends_on: &[&str]) -> UnitSpec {
    let mut s = UnitSpec::new(name, UnitType::Oneshot);
    s.exec_start = Some(Command::new(["/bin/sleep", "infinity"]));
    s.depends_on = depends_on.iter().map(|d| d.to_string()).collect();
    s
}

/// `svc` requires and is ordered after `dep` (test63-issue-24577.service
/// and its `-dep`), both oneshots that run on, read from files ending in
/// `suffix`; an empty `default` target.
fn planner(suffix: &str) -> Planner {
    let units = vec![
        UnitSpec::new("default", UnitType::Virtual),
        oneshot("dep", &[]),
        oneshot("svc", &["dep"]),
    ];
    build(units, suffix)
}

/// A planner of `units`, each read from a file named after it and
/// `suffix`, targeting `default`.
fn build(units: Vec<UnitSpec>, suffix: &str) -> Planner {
    let (g, diags) = Graph::build(
        units
            .into_iter()
            .map(|s| {
                let o = Origin::unplaced(format!("{}{suffix}", s.name));
                (s, o)
            })
            .collect(),
    );
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    Planner::new(g, "default", Instant(0), PlannerOptions::default())
}

fn state(p: &Planner, name: &str) -> UnitState {
    p.state(p.graph().unit(name).expect("unit"))
}

/// systemd's issue 24577 (its testsuite-63): `svc` started, its pulled-in
/// `dep` still starting, `svc` stopped: `dep`'s start goes on, under a
/// want of its own, and `dep` stays up once started.
#[test]
fn a_pulled_in_start_outlives_the_stop_of_what_pulled_it_in() {
    let mut p = planner(".service");
    let (mut pids, mut seen) = (Vec::new(), Seen::default());
    p.want("svc", WantLife::UntilSwitch, Instant(1))
        .expect("want");
    settle(&mut p, &mut pids, 1, &mut seen);
    assert_eq!(state(&p, "dep"), UnitState::Starting);
    assert_eq!(state(&p, "svc"), UnitState::Waiting);

    p.unwant("svc", Instant(2)).expect("stop");
    settle(&mut p, &mut pids, 2, &mut seen);
    assert_eq!(state(&p, "svc"), UnitState::Disabled);
    assert_eq!(state(&p, "dep"), UnitState::Starting);
    assert!(seen.killed.is_empty(), "{:?}", seen.killed);
    assert_eq!(
        p.wants().collect::<Vec<_>>(),
        [("dep", WantLife::UntilSwitch)]
    );

    // It starts, and stays up as systemd leaves it.
    exit_ok(&mut p, &mut pids, 0, 3, &mut seen);
    assert_eq!(state(&p, "dep"), UnitState::Exited);
    assert_eq!(state(&p, "svc"), UnitState::Disabled);
    assert_eq!(seen.spawned, ["dep"]);
}

/// A unit that has started is not a pending start: stopping what pulled
/// it in stops it too (flotilla's rule for what nothing requires).
#[test]
fn a_started_dependency_gets_no_want() {
    let mut p = planner(".service");
    let (mut pids, mut seen) = (Vec::new(), Seen::default());
    p.want("svc", WantLife::UntilSwitch, Instant(1))
        .expect("want");
    settle(&mut p, &mut pids, 1, &mut seen);
    exit_ok(&mut p, &mut pids, 0, 2, &mut seen);
    assert_eq!(state(&p, "dep"), UnitState::Exited);
    assert_eq!(state(&p, "svc"), UnitState::Starting);
    p.unwant("svc", Instant(3)).expect("stop");
    settle(&mut p, &mut pids, 3, &mut seen);
    assert_eq!(state(&p, "svc"), UnitState::Disabled);
    assert_eq!(state(&p, "dep"), UnitState::Disabled);
    assert_eq!(p.wants().count(), 0);
}

/// YAML units keep flotilla's own rule: the pulled-in start is stopped.
#[test]
fn a_yaml_units_pulled_in_start_is_stopped() {
    let mut p = planner(".yaml");
    let (mut pids, mut seen) = (Vec::new(), Seen::default());
    p.want("svc", WantLife::UntilSwitch, Instant(1))
        .expect("want");
    settle(&mut p, &mut pids, 1, &mut seen);
    assert_eq!(state(&p, "dep"), UnitState::Starting);
    p.unwant("svc", Instant(2)).expect("stop");
    settle(&mut p, &mut pids, 2, &mut seen);
    assert_eq!(state(&p, "dep"), UnitState::Disabled);
    assert!(
        !seen.killed.is_empty() && seen.killed.iter().all(|k| k == "dep"),
        "{:?}",
        seen.killed
    );
    assert_eq!(p.wants().count(), 0);
}

/// testsuite-03's `hello-after-sleep.target`: `go` wants `dep` and `svc`,
/// and is ordered after `dep` and before `svc`; `dep` runs on.
fn ordered() -> Planner {
    let names = |n: &[&str]| n.iter().map(|d| d.to_string()).collect();
    let mut go = UnitSpec::new("go", UnitType::Virtual);
    go.wants = names(&["dep", "svc"]);
    go.after = names(&["dep"]);
    let mut svc = oneshot("svc", &[]);
    svc.after = names(&["go"]);
    let units = vec![
        UnitSpec::new("default", UnitType::Virtual),
        go,
        oneshot("dep", &[]),
        svc,
    ];
    build(units, ".service")
}

/// `systemctl start --job-mode=ignore-dependencies svc` (testsuite-03):
/// `svc` waits for `go`, which waits for `dep`; a start at once runs it
/// now, and `dep` and `go` go on as they were.
#[test]
fn a_start_at_once_does_not_wait_for_what_it_is_ordered_after() {
    let mut p = ordered();
    let (mut pids, mut seen) = (Vec::new(), Seen::default());
    p.want("go", WantLife::UntilSwitch, Instant(1))
        .expect("want");
    settle(&mut p, &mut pids, 1, &mut seen);
    assert_eq!(state(&p, "dep"), UnitState::Starting);
    assert_eq!(state(&p, "go"), UnitState::Waiting);
    assert_eq!(state(&p, "svc"), UnitState::Waiting);

    p.start_at_once("svc", WantLife::UntilSwitch, Instant(2))
        .expect("start at once");
    settle(&mut p, &mut pids, 2, &mut seen);
    assert_eq!(state(&p, "svc"), UnitState::Starting);
    assert_eq!(state(&p, "dep"), UnitState::Starting);
    assert_eq!(state(&p, "go"), UnitState::Waiting);
    assert_eq!(seen.spawned, ["dep", "svc"]);
    assert!(seen.killed.is_empty(), "{:?}", seen.killed);
}

/// The start at once is one evaluation's: once `svc` ran to its end and
/// was stopped, the next start of `go` has it wait for `dep` again.
#[test]
fn a_start_after_a_start_at_once_waits_again() {
    let mut p = ordered();
    let (mut pids, mut seen) = (Vec::new(), Seen::default());
    p.want("go", WantLife::UntilSwitch, Instant(1))
        .expect("want");
    p.start_at_once("svc", WantLife::UntilSwitch, Instant(1))
        .expect("start at once");
    settle(&mut p, &mut pids, 1, &mut seen);
    assert_eq!(seen.spawned, ["dep", "svc"]);
    exit_ok(&mut p, &mut pids, 1, 2, &mut seen);
    assert_eq!(state(&p, "svc"), UnitState::Exited);

    p.unwant("svc", Instant(3)).expect("stop");
    p.unwant("go", Instant(3)).expect("stop");
    settle(&mut p, &mut pids, 3, &mut seen);
    assert_eq!(state(&p, "svc"), UnitState::Disabled);
    p.want("go", WantLife::UntilSwitch, Instant(4))
        .expect("want");
    settle(&mut p, &mut pids, 4, &mut seen);
    assert_eq!(state(&p, "dep"), UnitState::Starting);
    assert_eq!(state(&p, "svc"), UnitState::Waiting);
}
