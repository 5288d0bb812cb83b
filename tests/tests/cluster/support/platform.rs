//! fleet's functional test platform (`functional/platform` and
//! `functional/util` in fleet's repository) as the ported tests use it:
//! fleetctl run against one machine's endpoint (`initctl cluster`, with
//! fleetctl's verbs and tables), and fleet's waits on its lists
//! (`WaitForNUnits`, `WaitForNActiveUnits`, `WaitForNUnitFiles`: the
//! rows every 250 ms, for 15 s).

use super::{initctl, initctl_cluster, Machine};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// fleet's `WaitForState`: how long each wait may take.
const WAIT: Duration = Duration::from_secs(15);

/// The contents of fleet's `hello.service` fixture.
pub const HELLO: &str =
    "[Service]\nExecStart=/bin/bash -c \"while true; do echo Hello, World!; sleep 1; done\"\n";

/// Writes unit file `name` with `text` into `dir` (a fixture of fleet's,
/// its contents written by the test); its path.
pub fn fixture(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write a unit file");
    p.display().to_string()
}

/// fleet's `ActiveToSingleStates`: each active unit's one machine (a unit
/// active on two machines fails the test).
pub fn single_states(active: &BTreeMap<String, Vec<String>>) -> BTreeMap<String, String> {
    active
        .iter()
        .map(|(u, on)| {
            assert_eq!(
                on.len(),
                1,
                "unit {u} running in multiple locations: {on:?}"
            );
            (u.clone(), on[0].clone())
        })
        .collect()
}

/// fleet's `cluster.Fleetctl(m, args...)`: fleetctl against machine `m`'s
/// endpoint; the output, or the failure with what it printed.
pub fn fleetctl(ep: &str, args: &[&str]) -> String {
    let o = initctl_cluster(ep, args);
    assert_eq!(o.code, 0, "fleetctl {args:?}: {o:?}");
    o.stdout
}

/// fleet's `WaitForState`: `check` every 250 ms until it holds, for 15 s.
pub fn wait_state<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
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
pub fn unit_states(ep: &str) -> Option<BTreeMap<String, Vec<(String, String)>>> {
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
pub fn wait_n_units(ep: &str, n: usize) -> BTreeMap<String, Vec<(String, String)>> {
    wait_state(&format!("{n} units"), || {
        unit_states(ep).filter(|s| s.values().map(Vec::len).sum::<usize>() == n)
    })
}

/// fleet's `WaitForNActiveUnits`: `list-units` shows exactly `n` rows
/// `active`; those units with the machines they are active on.
pub fn wait_n_active_units(ep: &str, n: usize) -> BTreeMap<String, Vec<String>> {
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
pub fn unit_files(ep: &str) -> Option<Vec<String>> {
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
pub fn wait_n_unit_files(ep: &str, n: usize) -> Vec<String> {
    wait_state(&format!("{n} unit files"), || {
        unit_files(ep).filter(|u| u.len() == n)
    })
}

/// The isolation fleet had from a fresh cluster: every unit destroyed,
/// and none left in either list.
pub fn destroy_all(ep: &str) {
    let units = unit_files(ep).expect("list-unit-files");
    if !units.is_empty() {
        let mut args = vec!["destroy"];
        args.extend(units.iter().map(String::as_str));
        fleetctl(ep, &args);
    }
    wait_n_unit_files(ep, 0);
    wait_n_units(ep, 0);
}

/// fleetctl's `--endpoint` for machine `m`: its API socket.
pub fn endpoint(m: &Machine) -> String {
    format!("unix://{}", m.sock.display())
}

/// `systemctl stop fleet` on machine `m`: `initctl stop clusterd` there.
pub fn stop_fleet(m: &Machine) {
    let control = m.init.control.display().to_string();
    let out = initctl(&["--control", &control, "stop", "clusterd"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
}

/// fleet's `WaitForNMachines` through `ep`.
pub fn wait_n_machines(ep: &str, n: usize) {
    wait_state(&format!("{n} machines"), || {
        let o = initctl_cluster(ep, &["list-machines", "--no-legend"]);
        (o.code == 0 && o.stdout.lines().count() == n).then_some(())
    });
}
