//! fleet's `scheduling_test.go` and `metadata_test.go`, ported
//! (TestScheduleConditionMachineID is in `functional.rs`,
//! TestScheduleCircularReplace in `fleetctl.rs`): fleet's fleetctl
//! commands run as `initctl cluster`, its waits and
//! checks on `list-units` and `list-unit-files` (`support::platform`),
//! against real clusterds with real inits. The unit files are fleet's
//! fixtures' contents, written by the test. fleet's tests first `fleetctl
//! ssh` into each machine to run `uptime`; `initctl cluster` has no SSH,
//! and the machine list already says each machine is up.
//!
//! fleet started a fresh cluster per test, for isolation only: the
//! three-machine tests here share one cluster, every unit destroyed between
//! them, and the one that stops a machine (TestScheduleMachineOf) runs
//! last.

use crate::functional::smoke;
use crate::support::etcd::Etcd;
use crate::support::platform::*;
use crate::support::*;
use std::path::Path;

/// fleet's "Test Unit" fixtures: a description, a loop printing a line a
/// second, and `xfleet` (the `[X-Fleet]` lines).
fn test_unit(xfleet: &str) -> String {
    let exec = HELLO.trim_start_matches("[Service]\n");
    let xfleet = if xfleet.is_empty() {
        String::new()
    } else {
        format!("\n[X-Fleet]\n{xfleet}")
    };
    format!("[Unit]\nDescription=Test Unit\n\n[Service]\n{exec}{xfleet}")
}

/// The unit rows of `list-unit-files --no-legend`, read at once (fleet's
/// "should be visible immediately").
fn unit_file_count(ep: &str) -> usize {
    fleetctl(ep, &["list-unit-files", "--no-legend"])
        .lines()
        .count()
}

/// TestScheduleConflicts: five units with `Conflicts=conflict.*.service`
/// started on three machines; all five listed, three active, on three
/// different machines.
fn schedule_conflicts(ep: &str, dir: &Path) {
    for i in 0..5 {
        let f = fixture(
            dir,
            &format!("conflict.{i}.service"),
            &test_unit("Conflicts=conflict.*.service\n"),
        );
        fleetctl(ep, &["start", "--no-block", &f]);
    }
    assert_eq!(unit_file_count(ep), 5);
    let states = single_states(&wait_n_active_units(ep, 3));
    let machines: std::collections::BTreeSet<&String> = states.values().collect();
    assert_eq!(
        machines.len(),
        3,
        "3 active units not on 3 machines: {states:?}"
    );
}

/// TestScheduleMultipleConflicts: three units each conflicting with
/// `conflict.0`, `.1`, `.2` (one space-separated value, or three lines);
/// all three listed and active, on three different machines.
fn schedule_multiple_conflicts(ep: &str, dir: &Path) {
    let one_line = "Conflicts=conflict.2.service conflict.1.service conflict.0.service\n";
    let three_lines =
        "Conflicts=conflict.2.service\nConflicts=conflict.1.service\nConflicts=conflict.0.service\n";
    for (i, x) in [one_line, one_line, three_lines].iter().enumerate() {
        let f = fixture(
            dir,
            &format!("conflict.multiple.{i}.service"),
            &test_unit(x),
        );
        fleetctl(ep, &["start", "--no-block", &f]);
    }
    assert_eq!(unit_file_count(ep), 3);
    let states = single_states(&wait_n_active_units(ep, 3));
    let machines: std::collections::BTreeSet<&String> = states.values().collect();
    assert_eq!(
        machines.len(),
        3,
        "3 active units not on 3 machines: {states:?}"
    );
}

/// TestScheduleGlobalConflicts: a global unit conflicting with
/// `conflict-global.*.service` runs on the three machines; a second one
/// like it, started after, runs nowhere.
fn schedule_global_conflicts(ep: &str, dir: &Path, ids: &[String]) {
    let x = "Global=true\nConflicts=conflict-global.*.service\n";
    let g0 = fixture(dir, "conflict-global.0.service", &test_unit(x));
    let g1 = fixture(dir, "conflict-global.1.service", &test_unit(x));
    fleetctl(ep, &["start", "--no-block", &g0]);
    wait_n_active_units(ep, 3);
    fleetctl(ep, &["start", "--no-block", &g1]);
    let states = wait_n_active_units(ep, 3);
    let on0 = states
        .get("conflict-global.0.service")
        .cloned()
        .unwrap_or_default();
    let on1 = states
        .get("conflict-global.1.service")
        .cloned()
        .unwrap_or_default();
    for id in ids {
        assert!(
            on0.contains(id),
            "conflict-global.0 not on {id}: {states:?}"
        );
        assert!(!on1.contains(id), "conflict-global.1 on {id}: {states:?}");
    }
}

/// TestScheduleGlobalUnits: `hello.service` and `goodbye.service` start
/// (two active), then the global `global.service`: five active, the
/// global one on every machine; `status --no-block` of it succeeds.
/// fleet's test then runs `fleetctl restart global.service`, which for a
/// global unit runs `systemctl restart` over SSH on every machine
/// (`initctl cluster` has neither); its check after that, five active
/// units of which three are the global one, is made here as it stands.
fn schedule_global_units(ep: &str, dir: &Path, ids: &[String]) {
    let hello = fixture(dir, "hello.service", HELLO);
    let goodbye = fixture(dir, "goodbye.service", &HELLO.replace("Hello", "Goodbye"));
    fleetctl(ep, &["start", "--no-block", &hello, &goodbye]);
    wait_n_active_units(ep, 2);
    let global = fixture(
        dir,
        "global.service",
        &format!(
            "{}\n[X-Fleet]\nGlobal=true\n",
            HELLO.replace("Hello, World", "Hello, Global World")
        ),
    );
    fleetctl(ep, &["start", "--no-block", &global]);
    let states = wait_n_active_units(ep, 5);
    let on = states.get("global.service").cloned().unwrap_or_default();
    for id in ids {
        assert!(on.contains(id), "global unit not on {id}: {states:?}");
    }
    fleetctl(ep, &["status", "--no-block", "global.service"]);
    let states = wait_n_active_units(ep, 5);
    assert_eq!(states.get("global.service").map(Vec::len), Some(ids.len()));
}

/// TestScheduleMachineOf: three pairs `ping.N` and `pong.N` (`MachineOf=
/// ping.N.service`) started; six listed, six active, each pair on one
/// machine. Then `systemctl stop fleet` on ping.1's machine (here
/// `initctl stop clusterd` there): through another machine, two machines
/// are listed, six units active again, ping.1 on another machine and
/// pong.1 with it.
fn schedule_machine_of(ms: &[Machine], dir: &Path) {
    let ep = endpoint(&ms[0]);
    let ping = |n: &str| HELLO.replace("Hello, World!", n);
    for i in 0..3 {
        let p = fixture(
            dir,
            &format!("ping.{i}.service"),
            &format!("[Unit]\nDescription=PING\n\n{}", ping("ping")),
        );
        let q = fixture(
            dir,
            &format!("pong.{i}.service"),
            &format!(
                "[Unit]\nDescription=PONG\n\n{}\n[X-Fleet]\nMachineOf=ping.{i}.service\n",
                ping("pong")
            ),
        );
        fleetctl(&ep, &["start", "--no-block", &p, &q]);
    }
    assert_eq!(unit_file_count(&ep), 6);
    let states = single_states(&wait_n_active_units(&ep, 6));
    for i in 0..3 {
        let (p, q) = (format!("ping.{i}.service"), format!("pong.{i}.service"));
        assert!(!states[&p].is_empty() && !states[&q].is_empty());
        assert_eq!(states[&p], states[&q], "{p} and {q} not on one machine");
    }

    let mach = states["ping.1.service"].clone();
    let down = ms.iter().position(|m| m.id == mach).expect("a machine");
    stop_fleet(&ms[down]);
    let ep = endpoint(&ms[if down == 0 { 1 } else { 0 }]);
    wait_n_machines(&ep, 2);
    let states = single_states(&wait_n_active_units(&ep, 6));
    assert_ne!(
        states["ping.1.service"], mach,
        "ping.1.service did not migrate"
    );
    assert_eq!(
        states["pong.1.service"], states["ping.1.service"],
        "pong.1.service did not migrate with ping.1.service"
    );
}

/// TestTemplatesWithSpecifiersInMetadata (`metadata_test.go`): the
/// template `metadata@.service` (`MachineMetadata=hostname=%i`) submitted,
/// `metadata@smoke<ID>.service` started for each machine, last first;
/// three active, each on the machine its instance names; and
/// `start --block-attempts=20 metadata@invalid.service` fails (no machine
/// has that hostname).
fn templates_with_specifiers_in_metadata(ep: &str, dir: &Path, ids: &[String]) {
    let template = fixture(
        dir,
        "metadata@.service",
        &format!(
            "{}
[X-Fleet]
MachineMetadata=hostname=%i
",
            HELLO.replace("World!", "World %i!")
        ),
    );
    fleetctl(ep, &["submit", &template]);
    for id in ids.iter().rev() {
        let f = dir.join(format!("metadata@smoke{id}.service"));
        fleetctl(ep, &["start", &f.display().to_string()]);
    }
    let active = single_states(&wait_n_active_units(ep, 3));
    assert_eq!(active.len(), 3, "{active:?}");
    for (unit, machine) in &active {
        let instance = unit
            .split_once('@')
            .and_then(|(_, r)| r.split('.').next())
            .unwrap_or_default();
        assert_eq!(
            instance,
            format!("smoke{machine}"),
            "{unit} on the wrong machine"
        );
    }
    let invalid = dir.join("metadata@invalid.service").display().to_string();
    let o = initctl_cluster(ep, &["start", "--block-attempts=20", &invalid]);
    assert_ne!(
        o.code, 0,
        "metadata@invalid.service must not be scheduled: {o:?}"
    );
}

/// fleet's TestScheduleConflicts, TestScheduleMultipleConflicts,
/// TestScheduleGlobalConflicts, TestScheduleGlobalUnits,
/// TestTemplatesWithSpecifiersInMetadata and TestScheduleMachineOf, in
/// turn on one three-machine cluster.
#[test]
fn fleet_scheduling_on_three_machines() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 3);
    let ids: Vec<String> = ms.iter().map(|m| m.id.clone()).collect();
    let ep = endpoint(&ms[0]);
    let fixtures = dir.path().join("fixtures");
    std::fs::create_dir(&fixtures).unwrap();

    schedule_conflicts(&ep, &fixtures);
    destroy_all(&ep);
    schedule_multiple_conflicts(&ep, &fixtures);
    destroy_all(&ep);
    schedule_global_conflicts(&ep, &fixtures, &ids);
    destroy_all(&ep);
    schedule_global_units(&ep, &fixtures, &ids);
    destroy_all(&ep);
    templates_with_specifiers_in_metadata(&ep, &fixtures, &ids);
    destroy_all(&ep);
    schedule_machine_of(&ms, &fixtures);
}

/// fleet's TestScheduleOneWayConflict: on one machine,
/// `conflicts-with-hello.service` (`Conflicts=hello.service`) runs; then
/// `hello.service` is started: both listed, only the first active.
/// Destroyed, the first leaves the list and `hello.service` runs.
#[test]
fn fleet_schedule_one_way_conflict() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 1);
    let ep = endpoint(&ms[0]);
    let cw = fixture(
        dir.path(),
        "conflicts-with-hello.service",
        &test_unit("Conflicts=hello.service\n"),
    );
    fleetctl(&ep, &["start", "--no-block", &cw]);
    wait_n_active_units(&ep, 1);
    let hello = fixture(dir.path(), "hello.service", HELLO);
    fleetctl(&ep, &["start", "--no-block", &hello]);
    assert_eq!(unit_file_count(&ep), 2);
    let states = single_states(&wait_n_active_units(&ep, 1));
    assert_eq!(
        states.keys().collect::<Vec<_>>(),
        ["conflicts-with-hello.service"],
        "incorrect unit started"
    );

    fleetctl(&ep, &["destroy", "conflicts-with-hello.service"]);
    wait_state("conflicts-with-hello.service gone", || {
        unit_states(&ep).filter(|s| !s.contains_key("conflicts-with-hello.service"))
    });
    let states = single_states(&wait_n_active_units(&ep, 1));
    assert_eq!(
        states.keys().collect::<Vec<_>>(),
        ["hello.service"],
        "incorrect unit started"
    );
}

/// fleet's TestScheduleReplace: on two machines, `replace.0` started
/// through m0 lands on m0, `replace.1` and `replace.2` (`MachineOf=
/// replace.1.service`) through m1 on m1; three active. Then
/// `replace-kick0.service` (`Replaces=replace.0.service`) goes to the
/// less loaded m0 and replace.0 moves: four listed and active, kick0 on
/// replace.0's old machine, replace.0 elsewhere.
#[test]
fn fleet_schedule_replace() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 2);
    let ep0 = endpoint(&ms[0]);
    let ep1 = endpoint(&ms[1]);
    let f = |name: &str, x: &str| fixture(dir.path(), name, &test_unit(x));
    let r0 = f("replace.0.service", "");
    let r1 = f("replace.1.service", "");
    let r2 = f("replace.2.service", "MachineOf=replace.1.service\n");
    let kick = f("replace-kick0.service", "Replaces=replace.0.service\n");
    fleetctl(&ep0, &["start", "--no-block", &r0]);
    fleetctl(&ep1, &["start", "--no-block", &r1]);
    fleetctl(&ep1, &["start", "--no-block", &r2]);
    let states = single_states(&wait_n_active_units(&ep0, 3));
    let old = states["replace.0.service"].clone();

    fleetctl(&ep0, &["start", "--no-block", &kick]);
    wait_state("replace.0.service moved for replace-kick0.service", || {
        if unit_files(&ep0)?.len() != 4 {
            return None;
        }
        let states = unit_states(&ep0)?;
        let active = |u: &str| -> Option<String> {
            let on: Vec<&String> = states
                .get(u)?
                .iter()
                .filter(|(a, _)| a == "active")
                .map(|(_, m)| m)
                .collect();
            (on.len() == 1).then(|| on[0].clone())
        };
        let (m0, m3) = (
            active("replace.0.service")?,
            active("replace-kick0.service")?,
        );
        active("replace.1.service")?;
        active("replace.2.service")?;
        (m0 != m3 && m3 == old && m0 != old).then_some(())
    });
}
