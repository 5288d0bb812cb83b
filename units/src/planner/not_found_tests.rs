//! Tests of a running unit whose file a reload no longer finds
//! (`not_found.rs`): a systemd unit file's runs on as `not-found` until
//! it stops, a YAML unit's stops.
use super::wants_tests::{settle, Seen};
use super::*;
use crate::spec::{Command, Origin, RestartPolicy, UnitSpec, UnitType};

/// `svc.service`, a service that runs on (restarted always), read from
/// a file: a systemd unit file (stamped) or a YAML one.
fn svc(systemd: bool) -> (UnitSpec, Origin) {
    let mut s = UnitSpec::new("svc.service", UnitType::ForegroundSupervised);
    s.exec_start = Some(Command::new(["/bin/sleep", "infinity"]));
    s.restart = RestartPolicy::Always;
    let o = if systemd {
        let mut o = Origin::unplaced("/etc/systemd/system/svc.service");
        o.files = 7;
        o
    } else {
        Origin::unplaced("/etc/init/units/svc.yaml")
    };
    (s, o)
}

fn default() -> (UnitSpec, Origin) {
    let s = UnitSpec::new("default", UnitType::Virtual);
    (s, Origin::unplaced("default.yaml"))
}

/// A planner with `svc.service` started by hand and running.
fn running(systemd: bool) -> (Planner, Vec<(i32, UnitId)>, Seen) {
    let (g, diags) = Graph::build(vec![default(), svc(systemd)]);
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    let mut p = Planner::new(g, "default", Instant(0), PlannerOptions::default());
    let (mut pids, mut seen) = (Vec::new(), Seen::default());
    p.want("svc.service", WantLife::UntilSwitch, Instant(1))
        .expect("want");
    settle(&mut p, &mut pids, 1, &mut seen);
    assert_eq!(state(&p, "svc.service"), UnitState::Running);
    (p, pids, seen)
}

/// A reload (`keep`: systemd's daemon-reload) with the units `units`.
fn reload(p: &mut Planner, units: Vec<(UnitSpec, Origin)>, keep: bool, now: u64) {
    let shape = p.graph().shape().clone();
    let on_change = if keep {
        OnChange::Keep
    } else {
        OnChange::Restart
    };
    p.replace_shaped(units, shape, true, on_change, Instant(now))
        .expect("replaced");
}

fn state(p: &Planner, name: &str) -> UnitState {
    p.state(p.graph().unit(name).expect("unit"))
}

/// Whether `svc.service` was signalled to stop (a stop may signal twice).
fn stopped(seen: &Seen) -> bool {
    !seen.killed.is_empty() && seen.killed.iter().all(|k| k == "svc.service")
}

fn not_found(p: &Planner, name: &str) -> bool {
    p.graph()
        .unit(name)
        .is_some_and(|i| p.graph().node(i).not_found())
}

/// Its file gone, a running systemd unit runs on, `not-found`, at
/// either reload, and provides nothing.
#[test]
fn a_running_unit_whose_file_is_gone_runs_on_as_not_found() {
    for keep in [true, false] {
        let (mut p, mut pids, mut seen) = running(true);
        reload(&mut p, vec![default()], keep, 2);
        settle(&mut p, &mut pids, 2, &mut seen);
        assert_eq!(state(&p, "svc.service"), UnitState::Running);
        assert!(not_found(&p, "svc.service"));
        assert!(seen.killed.is_empty(), "{:?}", seen.killed);
        assert_eq!(p.graph().provider("svc.service"), None);
        // A later reload keeps it so.
        reload(&mut p, vec![default()], keep, 3);
        settle(&mut p, &mut pids, 3, &mut seen);
        assert_eq!(state(&p, "svc.service"), UnitState::Running);
        assert!(not_found(&p, "svc.service"));
        assert_eq!(seen.spawned, ["svc.service"]);
    }
}

/// A YAML unit keeps flotilla's rule: removed, it stops.
#[test]
fn a_removed_yaml_unit_still_stops() {
    let (mut p, mut pids, mut seen) = running(false);
    reload(&mut p, vec![default()], true, 2);
    settle(&mut p, &mut pids, 2, &mut seen);
    assert!(stopped(&seen), "{:?}", seen.killed);
    assert!(!not_found(&p, "svc.service"));
    assert_eq!(state(&p, "svc.service"), UnitState::Disabled);
}

/// Stopped by hand, a `not-found` unit stops, is not started again, and
/// is gone at the next reload; a start of it is refused.
#[test]
fn a_not_found_unit_stopped_by_hand_is_gone() {
    let (mut p, mut pids, mut seen) = running(true);
    reload(&mut p, vec![default()], true, 2);
    assert_eq!(
        p.want("svc.service", WantLife::UntilSwitch, Instant(2)),
        Err(WantError::UnknownUnit("svc.service".into()))
    );
    p.unwant("svc.service", Instant(3)).expect("stop");
    settle(&mut p, &mut pids, 3, &mut seen);
    assert!(stopped(&seen), "{:?}", seen.killed);
    assert_eq!(state(&p, "svc.service"), UnitState::Disabled);
    assert_eq!(p.wants().count(), 0);
    reload(&mut p, vec![default()], true, 4);
    assert_eq!(p.graph().unit("svc.service"), None);
    assert_eq!(seen.spawned, ["svc.service"]);
}

/// Its process ending by itself, a `not-found` unit is not restarted
/// (its `Restart=` notwithstanding: systemd's `not-found` unit has no
/// settings), and its file coming back later does not start it.
#[test]
fn a_not_found_unit_that_ends_is_not_restarted() {
    let (mut p, mut pids, mut seen) = running(true);
    reload(&mut p, vec![default()], true, 2);
    let (pid, _) = pids[0];
    p.fact(
        Fact::Exited {
            pid,
            status: ExitStatus::Code(1),
        },
        Instant(3),
    );
    settle(&mut p, &mut pids, 3, &mut seen);
    p.tick(Instant(60_000_000_000));
    settle(&mut p, &mut pids, 60, &mut seen);
    assert_ne!(state(&p, "svc.service"), UnitState::Running);
    assert_eq!(p.wants().count(), 0);
    reload(&mut p, vec![default(), svc(true)], true, 61);
    settle(&mut p, &mut pids, 61, &mut seen);
    assert_eq!(state(&p, "svc.service"), UnitState::Disabled);
    assert_eq!(seen.spawned, ["svc.service"]);
}

/// Its file back at a later reload, a `not-found` unit is loaded from it
/// again and runs on, not restarted, under either reload.
#[test]
fn a_not_found_unit_whose_file_comes_back_is_loaded_again() {
    for keep in [true, false] {
        let (mut p, mut pids, mut seen) = running(true);
        reload(&mut p, vec![default()], keep, 2);
        reload(&mut p, vec![default(), svc(true)], keep, 3);
        settle(&mut p, &mut pids, 3, &mut seen);
        assert!(!not_found(&p, "svc.service"));
        assert_eq!(state(&p, "svc.service"), UnitState::Running);
        assert!(seen.killed.is_empty(), "{:?}", seen.killed);
        assert_eq!(seen.spawned, ["svc.service"]);
        // Held as a start by hand: stopped by hand, it stops.
        p.unwant("svc.service", Instant(4)).expect("stop");
        settle(&mut p, &mut pids, 4, &mut seen);
        assert!(stopped(&seen), "{:?}", seen.killed);
    }
}
