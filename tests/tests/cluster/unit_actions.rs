//! fleet's `unit_action_test.go`, ported: TestUnitRunnable, TestUnitSubmit,
//! TestUnitLoad, TestUnitStart, TestUnitCat, TestUnitStatus and
//! TestListUnitFilesOrder (and `client_test.go`'s TestFleetctlWithEnv),
//! each with fleet's fleetctl commands (run as `initctl cluster`,
//! fleetctl's verbs and tables) and fleet's checks (its
//! `WaitForNUnits`, `WaitForNActiveUnits`, `WaitForNUnitFiles`: the
//! `list-units` or `list-unit-files` rows every 250 ms, for 15 s).
//!
//! fleet started a fresh one-machine cluster for each of these tests, for
//! isolation only; here they share one machine (a real init running the
//! real clusterd, fleet's `hostname=smoke<ID>` metadata), and each test
//! destroys every unit it left before the next starts. The unit files are
//! fleet's `hello.service` and `hello@.service` fixtures' contents,
//! written by the test into a directory of its own (fleetctl takes
//! `hello@1.service` from `hello@.service` beside it).

use crate::functional::smoke;
use crate::support::etcd::Etcd;
use crate::support::platform::*;
use crate::support::*;
use std::path::Path;

/// The contents of fleet's `hello@.service` fixture.
const HELLO_TEMPLATE: &str =
    "[Service]\nExecStart=/bin/bash -c \"while true; do echo Hello, World %i!; sleep 1; done\"\n";

/// fleet's `cleanCmd`: the command undoing each.
fn clean_cmd(cmd: &str) -> &'static str {
    match cmd {
        "submit" => "destroy",
        "load" => "unload",
        _ => "stop",
    }
}

/// fleet's `launchUnitsCmd`: `fleetctl CMD hello@1.service ...
/// hello@N.service` in one call (the files do not exist: the template
/// beside them is used); the unit names. fleet also fails on "Error" in
/// the standard error.
fn launch_units_cmd(ep: &str, fixtures: &Path, cmd: &str, n: usize) -> Vec<String> {
    let files: Vec<String> = (1..=n)
        .map(|i| {
            fixtures
                .join(format!("hello@{i}.service"))
                .display()
                .to_string()
        })
        .collect();
    let mut args = vec![cmd];
    args.extend(files.iter().map(String::as_str));
    let o = initctl_cluster(ep, &args);
    assert!(o.code == 0 && !o.stderr.contains("Error"), "{cmd}: {o:?}");
    (1..=n).map(|i| format!("hello@{i}.service")).collect()
}

/// fleet's `checkListUnits`: after `submit` the unit files, after `load`
/// the units, after `start` the active units number `n` and include each
/// of `units`.
fn check_list_units(ep: &str, cmd: &str, units: &[String], n: usize) {
    let listed: Vec<String> = match cmd {
        "submit" => wait_n_unit_files(ep, n),
        "load" => wait_n_units(ep, n).into_keys().collect(),
        _ => wait_n_active_units(ep, n).into_keys().collect(),
    };
    assert_eq!(listed.len(), n, "{cmd}: {listed:?}");
    for u in &units[..n] {
        assert!(listed.contains(u), "{cmd}: expected {u} in {listed:?}");
    }
}

/// fleet's `unitStartCommon`: launch `n` units with `cmd`, check them,
/// clean them up and check they are gone; then all of it once more.
fn unit_start_common(ep: &str, fixtures: &Path, cmd: &str, n: usize) {
    for _ in 0..2 {
        let units = launch_units_cmd(ep, fixtures, cmd, n);
        check_list_units(ep, cmd, &units, n);
        for u in &units {
            fleetctl(ep, &[clean_cmd(cmd), u]);
        }
        check_list_units(ep, cmd, &units, 0);
    }
}

/// TestUnitRunnable: `start hello.service`; it becomes the sole active
/// unit.
fn unit_runnable(ep: &str, fixtures: &Path) {
    fleetctl(
        ep,
        &[
            "start",
            &fixtures.join("hello.service").display().to_string(),
        ],
    );
    let units = wait_n_active_units(ep, 1);
    assert_eq!(units.len(), 1, "{units:?}");
    assert!(units.contains_key("hello.service"), "{units:?}");
}

/// TestUnitCat: `submit hello.service`, one unit file listed, and `cat`
/// prints the file's body (both trimmed).
fn unit_cat(ep: &str, fixtures: &Path) {
    let file = fixtures.join("hello.service");
    fleetctl(ep, &["submit", &file.display().to_string()]);
    wait_n_unit_files(ep, 1);
    let cat = fleetctl(ep, &["cat", "hello.service"]);
    assert_eq!(cat.trim(), HELLO.trim(), "the body changed across cat");
}

/// TestUnitStatus: `load hello.service`, one unit listed, and `status`
/// says `Loaded: loaded` (fleetctl's status runs `systemctl status` over
/// SSH; `initctl cluster status` prints the same line from the state
/// the machine published).
fn unit_status(ep: &str, fixtures: &Path) {
    fleetctl(
        ep,
        &[
            "load",
            &fixtures.join("hello.service").display().to_string(),
        ],
    );
    wait_n_units(ep, 1);
    let o = initctl_cluster(ep, &["status", "hello.service"]);
    assert!(o.stdout.contains("Loaded: loaded"), "{o:?}");
}

/// TestListUnitFilesOrder: `submit` hello@01 to hello@20, one call each;
/// the 20 unit files listed; `list-unit-files` lists them sorted (fleet
/// asks for the unit column alone with `--fields unit`, which initctl
/// does not have: the first column is it).
fn list_unit_files_order(ep: &str, fixtures: &Path) {
    let mut units = Vec::new();
    for i in 1..=20 {
        let unit = format!("hello@{i:02}.service");
        fleetctl(ep, &["submit", &fixtures.join(&unit).display().to_string()]);
        units.push(unit);
    }
    wait_n_unit_files(ep, 20);
    let out = unit_files(ep).expect("list-unit-files");
    units.sort();
    assert_eq!(out, units, "list-unit-files is not sorted");
}

/// TestFleetctlWithEnv (`client_test.go`): `list-machines` with the
/// endpoint in `FLEETCTL_ENDPOINT` instead of `--endpoint` succeeds.
fn fleetctl_with_env(ep: &str) {
    let o = initctl(&["cluster", "list-machines"], &[("FLEETCTL_ENDPOINT", ep)]);
    assert_eq!(o.code, 0, "with FLEETCTL_ENDPOINT: {o:?}");
}

/// fleet's TestUnitRunnable, TestUnitSubmit (9 units), TestUnitLoad (6),
/// TestUnitStart (3), TestUnitCat, TestUnitStatus,
/// TestListUnitFilesOrder and TestFleetctlWithEnv, in turn on one
/// machine, every unit destroyed between them.
#[test]
fn fleet_unit_actions() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 1);
    let ep = endpoint(&ms[0]);
    let fixtures = dir.path().join("fixtures");
    std::fs::create_dir(&fixtures).unwrap();
    fixture(&fixtures, "hello.service", HELLO);
    fixture(&fixtures, "hello@.service", HELLO_TEMPLATE);

    unit_runnable(&ep, &fixtures);
    destroy_all(&ep);
    for (cmd, n) in [("submit", 9), ("load", 6), ("start", 3)] {
        unit_start_common(&ep, &fixtures, cmd, n);
        destroy_all(&ep);
    }
    unit_cat(&ep, &fixtures);
    destroy_all(&ep);
    unit_status(&ep, &fixtures);
    destroy_all(&ep);
    list_unit_files_order(&ep, &fixtures);
    destroy_all(&ep);
    fleetctl_with_env(&ep);
}
