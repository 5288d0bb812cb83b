//! Tests of mount units following the mount table (`mount_table.rs`).
use super::wants_tests::{settle, Seen};
use super::*;
use crate::spec::{Command, Origin, UnitSpec, UnitType};

const MOUNT: &str = "srv-data.mount";

/// An empty `default` target, the mount unit of /srv/data (its `mount`
/// and `umount`), and `user.service`, bound to it (`BindsTo=`).
fn planner() -> Planner {
    planner_with(&[])
}

/// [`planner`] with the mount unit's own conditions besides its place's
/// (kind, value).
fn planner_with(conditions: &[(&'static str, &str)]) -> Planner {
    let mut m = UnitSpec::new(MOUNT, UnitType::Oneshot);
    m.exec_start = Some(Command::new(["/bin/mount", "tmpfs", "/srv/data"]));
    m.exec_stop = Some(Command::new(["/bin/umount", "/srv/data"]));
    m.remain_after_exit = Some(true);
    // As the translator gives it: skipped when mounted already.
    let skip = crate::condition::parse_value("PathIsMountPoint", false, "!/srv/data");
    m.extras.conditions = skip.expect("a condition").into_iter().collect();
    for (kind, value) in conditions {
        let c = crate::condition::parse_value(kind, false, value).expect("a condition");
        m.extras.conditions.extend(c);
    }
    let mut user = UnitSpec::new("user.service", UnitType::ForegroundSupervised);
    user.exec_start = Some(Command::new(["/bin/sleep", "infinity"]));
    user.depends_on = [MOUNT.to_string()].into_iter().collect();
    user.extras.stop_propagated_from = [MOUNT.to_string()].into_iter().collect();
    let units = vec![UnitSpec::new("default", UnitType::Virtual), m, user];
    let (g, diags) = Graph::build(
        units
            .into_iter()
            .map(|s| {
                let o = Origin::unplaced(format!("/etc/systemd/system/{}", s.name));
                (s, o)
            })
            .collect(),
    );
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    Planner::new(g, "default", Instant(0), PlannerOptions::default())
}

fn id(p: &Planner, name: &str) -> UnitId {
    p.graph().unit(name).expect("unit")
}

/// The planner's next actions run the mount's `umount`.
fn assert_unmounts(p: &mut Planner) {
    let actions = p.take_actions();
    let stop = |a: &Action| {
        matches!(
            a,
            Action::Spawn {
                role: Role::Stop,
                ..
            }
        )
    };
    assert!(actions.iter().any(stop), "{actions:?}");
}

/// The mount unit started by hand and skipped by a condition (`why`).
fn skipped(p: &mut Planner, why: &str) -> UnitId {
    let unit = id(p, MOUNT);
    p.want(MOUNT, WantLife::UntilSwitch, Instant(0))
        .expect("wanted");
    let _ = p.take_actions();
    let outcome = CheckOutcome::ConditionFailed(why.into());
    p.fact(Fact::Checked { unit, outcome }, Instant(1));
    unit
}

fn table(p: &mut Planner, mounted: bool, now: u64) {
    let unit = id(p, MOUNT);
    p.fact(Fact::MountTable { unit, mounted }, Instant(now));
}

/// A place mounted by hand makes its unit active without its `mount`;
/// a stop of it then runs its `umount`.
#[test]
fn mounted_by_hand_is_active_and_its_stop_unmounts() {
    let mut p = planner();
    let (mut pids, mut seen) = (Vec::new(), Seen::default());
    settle(&mut p, &mut pids, 0, &mut seen);
    assert_eq!(p.state(id(&p, MOUNT)), UnitState::Disabled);
    table(&mut p, true, 1);
    settle(&mut p, &mut pids, 1, &mut seen);
    assert_eq!(p.state(id(&p, MOUNT)), UnitState::Exited);
    assert!(seen.spawned.is_empty(), "{:?}", seen.spawned);
    assert!(p.wants().any(|(n, l)| n == MOUNT && l == WantLife::Kept));
    // Told again: nothing moves.
    table(&mut p, true, 2);
    assert!(p.take_actions().is_empty());
    p.unwant(MOUNT, Instant(3)).expect("stops");
    assert_unmounts(&mut p);
}

/// A place unmounted by hand makes its unit inactive without its
/// `umount`, stops what is bound to it, and nothing mounts it again
/// until it is started.
#[test]
fn unmounted_by_hand_is_inactive_and_stays_so() {
    let mut p = planner();
    let (mut pids, mut seen) = (Vec::new(), Seen::default());
    p.want("user.service", WantLife::UntilSwitch, Instant(0))
        .expect("wanted");
    // The mount's own start: its condition holds, `mount` runs and
    // exits 0; then the user.
    let _ = p.take_actions();
    let mount = id(&p, MOUNT);
    p.fact(
        Fact::Checked {
            unit: mount,
            outcome: CheckOutcome::Hold,
        },
        Instant(0),
    );
    let actions = p.take_actions();
    let Some(Action::Spawn { unit, role, .. }) = actions
        .iter()
        .find(|a| matches!(a, Action::Spawn { .. }))
        .cloned()
    else {
        panic!("no spawn: {actions:?}");
    };
    assert_eq!(unit, id(&p, MOUNT));
    p.fact(
        Fact::Spawned {
            unit,
            role,
            pid: 50,
        },
        Instant(1),
    );
    // The table changes while its own `mount` runs: its exit decides.
    table(&mut p, true, 1);
    assert_eq!(p.state(unit), UnitState::Starting);
    p.fact(
        Fact::Exited {
            pid: 50,
            status: ExitStatus::Code(0),
        },
        Instant(2),
    );
    settle(&mut p, &mut pids, 2, &mut seen);
    assert_eq!(p.state(unit), UnitState::Exited);
    assert_eq!(p.state(id(&p, "user.service")), UnitState::Running);
    seen = Seen::default();
    table(&mut p, false, 3);
    settle(&mut p, &mut pids, 3, &mut seen);
    assert_eq!(p.state(unit), UnitState::Disabled);
    assert!(!seen.killed.is_empty(), "what is bound to it stops");
    assert!(
        seen.killed.iter().all(|n| n == "user.service"),
        "{:?}",
        seen.killed
    );
    assert!(
        !seen.spawned.iter().any(|n| n == MOUNT),
        "no umount, no mount again: {:?}",
        seen.spawned
    );
    assert!(p.held().any(|n| n == MOUNT));
    // A start by hand mounts it again.
    p.want(MOUNT, WantLife::UntilSwitch, Instant(4))
        .expect("wanted");
    let actions = p.take_actions();
    assert!(
        actions
            .iter()
            .any(|a| matches!(a, Action::CheckConditions { unit: u, .. } if *u == unit)),
        "{actions:?}"
    );
}

/// A mount found mounted at its start is skipped (its condition), and
/// once the table says so it is the mount's unit: its stop unmounts.
#[test]
fn skipped_because_mounted_then_told_stops_with_umount() {
    let mut p = planner();
    let unit = skipped(&mut p, "mounted");
    assert_eq!(p.state(unit), UnitState::Exited);
    table(&mut p, true, 2);
    p.unwant(MOUNT, Instant(3)).expect("stops");
    assert_unmounts(&mut p);
}

/// A unit skipped by another condition (`ConditionCapability=` in a
/// container) mounted nothing: its place not mounted leaves it as it is.
#[test]
fn a_unit_skipped_by_a_condition_is_not_unmounted() {
    let mut p = planner();
    let unit = skipped(&mut p, "ConditionCapability=CAP_SYS_ADMIN was not met");
    table(&mut p, false, 2);
    assert_eq!(p.state(unit), UnitState::Exited);
    assert!(p.view(unit).is_some_and(|v| v.skipped), "still skipped");
    assert!(p.take_actions().is_empty());
}

/// A unit with a condition of its own besides its place's (Debian's
/// `dev-mqueue.mount` in a container: `ConditionCapability=`), skipped,
/// stays skipped when its place is mounted by the container's engine: its
/// stop runs no umount.
#[test]
fn a_unit_with_other_conditions_found_mounted_stays_skipped() {
    let mut p = planner_with(&[("Capability", "CAP_SYS_ADMIN")]);
    let unit = skipped(&mut p, "ConditionCapability=CAP_SYS_ADMIN was not met");
    table(&mut p, true, 2);
    assert!(p.view(unit).is_some_and(|v| v.skipped), "still skipped");
    p.unwant(MOUNT, Instant(3)).expect("stops");
    let actions = p.take_actions();
    let stop = |a: &Action| {
        matches!(
            a,
            Action::Spawn {
                role: Role::Stop,
                ..
            }
        )
    };
    assert!(!actions.iter().any(stop), "{actions:?}");
}
