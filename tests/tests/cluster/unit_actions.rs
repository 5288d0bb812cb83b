//! fleet's `unit_action_test.go`, ported: TestUnitRunnable, TestUnitSubmit,
//! TestUnitLoad, TestUnitStart, TestUnitCat, TestUnitStatus and
//! TestListUnitFilesOrder, each with fleet's fleetctl commands (run as
//! `initctl cluster`, fleetctl's verbs and tables) and fleet's checks (its
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
use crate::support::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// fleet's `WaitForState`: how long each wait may take.
const WAIT: Duration = Duration::from_secs(15);

/// The contents of fleet's `hello.service` fixture.
const HELLO: &str =
    "[Service]\nExecStart=/bin/bash -c \"while true; do echo Hello, World!; sleep 1; done\"\n";
/// The contents of fleet's `hello@.service` fixture.
const HELLO_TEMPLATE: &str =
    "[Service]\nExecStart=/bin/bash -c \"while true; do echo Hello, World %i!; sleep 1; done\"\n";

/// fleet's `cluster.Fleetctl(m, args...)`: fleetctl against machine `m`'s
/// endpoint; the output, or the failure with what it printed.
fn fleetctl(ep: &str, args: &[&str]) -> String {
    let o = initctl_cluster(ep, args);
    assert_eq!(o.code, 0, "fleetctl {args:?}: {o:?}");
    o.stdout
}

/// fleet's `WaitForState`: `check` every 250 ms until it holds, for 15 s.
fn wait_state<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + WAIT;
    loop {
        std::thread::sleep(Duration::from_millis(250));
        if let Some(v) = check() {
            return v;
        }
        assert!(
            Instant::now() < end,
            "failed to find {what} within {WAIT:?}"
        );
    }
}

/// `list-units --no-legend --full` rows as fleet's `ParseUnitStates` reads
/// them: unit -> [(active state, machine ID)].
fn unit_states(ep: &str) -> Option<BTreeMap<String, Vec<(String, String)>>> {
    let o = initctl_cluster(ep, &["list-units", "--no-legend", "--full"]);
    if o.code != 0 {
        return None;
    }
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for line in o.stdout.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if let [unit, machine, active, _sub] = cols[..] {
            let machine = machine.split('/').next().unwrap_or(machine);
            out.entry(unit.to_string())
                .or_default()
                .push((active.to_string(), machine.to_string()));
        }
    }
    Some(out)
}

/// fleet's `WaitForNUnits`: `list-units` shows exactly `n` rows.
fn wait_n_units(ep: &str, n: usize) -> BTreeMap<String, Vec<(String, String)>> {
    wait_state(&format!("{n} units"), || {
        unit_states(ep).filter(|s| s.values().map(Vec::len).sum::<usize>() == n)
    })
}

/// fleet's `WaitForNActiveUnits`: `list-units` shows exactly `n` rows
/// `active`; those units with the machines they are active on.
pub(crate) fn wait_n_active_units(ep: &str, n: usize) -> BTreeMap<String, Vec<String>> {
    wait_state(&format!("{n} active units"), || {
        let mut active: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (unit, rows) in unit_states(ep)? {
            for (state, machine) in rows {
                if state == "active" {
                    active.entry(unit.clone()).or_default().push(machine);
                }
            }
        }
        (active.values().map(Vec::len).sum::<usize>() == n).then_some(active)
    })
}

/// The unit column of `list-unit-files --no-legend`, in its order.
fn unit_files(ep: &str) -> Option<Vec<String>> {
    let o = initctl_cluster(ep, &["list-unit-files", "--no-legend", "--full"]);
    (o.code == 0).then(|| {
        o.stdout
            .lines()
            .filter_map(|l| l.split('\t').next())
            .map(str::to_string)
            .collect()
    })
}

/// fleet's `WaitForNUnitFiles`: `list-unit-files` shows exactly `n` units.
fn wait_n_unit_files(ep: &str, n: usize) -> Vec<String> {
    wait_state(&format!("{n} unit files"), || {
        unit_files(ep).filter(|u| u.len() == n)
    })
}

/// The isolation fleet had from a fresh cluster: every unit destroyed,
/// and none left in either list.
fn destroy_all(ep: &str) {
    let units = unit_files(ep).expect("list-unit-files");
    if !units.is_empty() {
        let mut args = vec!["destroy"];
        args.extend(units.iter().map(String::as_str));
        fleetctl(ep, &args);
    }
    wait_n_unit_files(ep, 0);
    wait_n_units(ep, 0);
}

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

/// fleet's TestUnitRunnable, TestUnitSubmit (9 units), TestUnitLoad (6),
/// TestUnitStart (3), TestUnitCat, TestUnitStatus and
/// TestListUnitFilesOrder, in turn on one machine, every unit destroyed
/// between them.
#[test]
fn fleet_unit_actions() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let ms = smoke(&etcd, dir.path(), 1);
    let ep = format!("unix://{}", ms[0].sock.display());
    let fixtures = dir.path().join("fixtures");
    std::fs::create_dir(&fixtures).unwrap();
    std::fs::write(fixtures.join("hello.service"), HELLO).unwrap();
    std::fs::write(fixtures.join("hello@.service"), HELLO_TEMPLATE).unwrap();

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
}
