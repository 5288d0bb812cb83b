//! Cluster membership against a real etcd and machines that are each a
//! real init running the real clusterd: a clusterd that is stopped purges
//! the units it placed before its machine leaves, so that they move to
//! another machine without ever running twice (fleet's `systemctl stop
//! fleet`, here `initctl stop clusterd`); a second clusterd started with a
//! machine ID in use by a running one is refused and takes nothing over,
//! and gets the ID once its holder is gone; a machine cut off etcd (through
//! a relay, [`Relay`]) for less than the TTL restarts nothing, and cut off
//! for longer stops its non-global units before its presence can expire
//! (the fence, docs/cluster.md "Agent"), so that a unit the engine places
//! on another machine never runs twice, while a unit placed on it before
//! its fence lifts runs once it does; and so does a machine whose
//! clusterd is frozen, or killed and not started again: its init keeps the
//! fence.

use crate::support::etcd::Etcd;
use crate::support::relay::Relay;
use crate::support::*;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const TTL: Duration = Duration::from_secs(2);

fn start(etcd: &Etcd, dir: &std::path::Path, id: &str, ip: &str) -> Machine {
    Machine::up(&etcd.url(), dir, id, ip)
}

/// The fleet units running on each machine, by unit: the machines' indexes.
/// The machines are asked one after the other, the last first: a unit the
/// tests see moving from an earlier machine (which only stops it) to a
/// later one shows on both only if it ran on both at once. Asked first to
/// last, a loaded machine's slow answers could show it on the earlier one
/// before its stop and on the later one after its start.
fn where_running(ms: &[&Machine]) -> BTreeMap<String, Vec<usize>> {
    let mut out: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, m) in ms.iter().enumerate().rev() {
        for u in m.init.running().into_keys() {
            out.entry(u).or_default().insert(0, i);
        }
    }
    out
}

/// Launches `n` units `PREFIXi.service` (each its own `/bin/sleep BASEi`)
/// through `via`'s API and waits until each runs once on `ms`; returns
/// their names and where they run.
fn launch_each_once(
    via: &Machine,
    ms: &[&Machine],
    prefix: &str,
    base: u32,
    n: usize,
) -> (Vec<String>, BTreeMap<String, Vec<usize>>) {
    let names: Vec<String> = (0..n).map(|i| format!("{prefix}{i}.service")).collect();
    for (i, name) in names.iter().enumerate() {
        let body = unit_body("launched", &format!("/bin/sleep {base}{i:02}"), &[]);
        assert_eq!(
            via.api("PUT", &format!("/fleet/v1/units/{name}"), Some(&body))
                .0,
            201
        );
    }
    let placed = wait_for(Duration::from_secs(15), "every unit running once", || {
        let w = where_running(ms);
        (w.len() == names.len() && w.values().all(|on| on.len() == 1)).then_some(w)
    });
    (names, placed)
}

/// Panics if a unit runs on two machines.
fn never_twice(w: &BTreeMap<String, Vec<usize>>) {
    if let Some((n, on)) = w.iter().find(|(_, on)| on.len() > 1) {
        panic!("{n} runs on two machines at once: {on:?}");
    }
}

/// Whether every unit of `names` runs on B (machine 1) alone.
fn all_on_b(w: &BTreeMap<String, Vec<usize>>, names: &[String]) -> bool {
    w.len() == names.len() && w.values().all(|on| on == &[1])
}

/// After a fault on A at `since`: checks every 20 ms that no unit runs on
/// A and B at once until every unit of `names` runs on B, which must be
/// within 2x the TTL; returns how long it took.
fn all_move_to_b_once(a: &Machine, b: &Machine, names: &[String], since: Instant) -> Duration {
    loop {
        let w = where_running(&[a, b]);
        never_twice(&w);
        if all_on_b(&w, names) {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < 2 * TTL,
            "A's units not running on B within 2x the TTL of the fault: {w:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A check for [`hold`]: every unit of `names` runs on B alone, as the
/// same processes `on_b`.
fn stays_on_b<'a>(
    a: &'a Machine,
    b: &'a Machine,
    names: &'a [String],
    on_b: BTreeMap<String, i32>,
) -> impl FnMut() -> Result<(), String> + 'a {
    move || {
        let w = where_running(&[a, b]);
        never_twice(&w);
        let now = b.init.running();
        match all_on_b(&w, names) && now == on_b {
            true => Ok(()),
            false => Err(format!("on {w:?}, B runs {now:?}, ran {on_b:?}")),
        }
    }
}

/// A reaches etcd again (after its fault ended): it registers again
/// within 3x the TTL and 5 s, and for 3x the TTL after that runs none of
/// its old units, which stay on B (`same_on_b`, checked all along).
fn a_back_its_units_stay_on_b(
    a: &Machine,
    b: &Machine,
    what: &str,
    same_on_b: &mut impl FnMut() -> Result<(), String>,
) {
    let end = Instant::now() + 3 * TTL + Duration::from_secs(5);
    while machine_ips(b).len() < 2 {
        same_on_b().unwrap_or_else(|e| panic!("{what}, A coming back: {e}"));
        assert!(
            Instant::now() < end,
            "A never registered again: {}",
            a.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    hold(3 * TTL, what, same_on_b);
    assert!(
        a.init.running().is_empty(),
        "A runs none of its old units: {:?}",
        a.init.running()
    );
}

/// A's init says its lease on the set `cluster` expired and stopped units.
fn init_fenced(a: &Machine) {
    let out = std::fs::read_to_string(a.init.root.join("init.out")).unwrap_or_default();
    assert!(
        out.contains("init: cluster lease expired: stopping"),
        "A's init fenced the units: {out}"
    );
}

fn machine_ips(m: &Machine) -> Vec<String> {
    let (_, b) = m.api("GET", "/fleet/v1/machines", None);
    // Nothing (an empty list) while the API does not answer.
    serde_json::from_str::<serde_json::Value>(&b).unwrap_or_default()["machines"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m["primaryIP"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// fleet's TestNodeShutdown: `systemctl stop fleet` on a machine stops its
/// units and the machine leaves; here `initctl stop clusterd`. Its units
/// run on the other machine afterwards, and at no moment on both.
#[test]
fn a_stopped_clusterd_purges_its_units_and_they_move_once() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let a = start(&etcd, dir.path(), "purgeA00000", "192.0.2.11");
    let b = start(&etcd, dir.path(), "purgeB00000", "192.0.2.12");
    let (names, placed) = launch_each_once(&a, &[&a, &b], "p", 47, 4);
    let on_a: Vec<&String> = placed
        .iter()
        .filter(|(_, on)| on[0] == 0)
        .map(|(n, _)| n)
        .collect();
    assert!(
        !on_a.is_empty(),
        "least-loaded placement put units on A: {placed:?}"
    );

    let control = a.init.control.display().to_string();
    let stop =
        std::thread::spawn(move || initctl(&["--control", &control, "stop", "clusterd"], &[]));
    // Every moment until all run on B: never a unit on both machines.
    let end = Instant::now() + 2 * TTL + Duration::from_secs(8);
    loop {
        let w = where_running(&[&a, &b]);
        if let Some((n, on)) = w.iter().find(|(_, on)| on.len() > 1) {
            panic!("{n} runs on two machines at once: {on:?}");
        }
        if w.len() == names.len() && w.values().all(|on| on == &[1]) {
            break;
        }
        assert!(Instant::now() < end, "A's units not moved to B: {w:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = stop.join().expect("initctl");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        a.init.fleet_units().is_empty(),
        "A's init holds no fleet unit"
    );
    assert!(a.clusterd_pid().is_none(), "clusterd stays stopped");
    wait_for(
        Duration::from_secs(5),
        "A gone from the machine list",
        || (machine_ips(&b) == ["192.0.2.12"]).then_some(()),
    );
    let log = a.log();
    assert!(log.contains("left the cluster"), "{log}");
}

/// fleet's TestDetectMachineId: a second clusterd given the machine ID of
/// a running one is refused loudly and takes nothing over (the first keeps
/// its presence, its unit and its PID), yet keeps running (fleet's test
/// checks that fleetd stays active) with its API answering `503` "fleet
/// server unable to communicate with etcd", as fleetd's did. Once the
/// first machine is gone and its claim has expired, the second registers
/// and runs the unit.
#[test]
fn a_machine_id_in_use_is_refused() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let mut a = start(&etcd, dir.path(), "dupe0000001", "192.0.2.21");
    let body = unit_body("launched", "/bin/sleep 4801", &[]);
    assert_eq!(
        a.api("PUT", "/fleet/v1/units/d.service", Some(&body)).0,
        201
    );
    let pid = wait_for(Duration::from_secs(10), "d running on A", || {
        a.init.running().get("d.service").copied()
    });

    let other = tempdir();
    let dup = Machine::start(
        &etcd.url(),
        other.path(),
        "dupe0000001",
        "",
        "192.0.2.22",
        "2s",
        &[],
    );
    wait_for(Duration::from_secs(10), "the refusal in its log", || {
        dup.log()
            .contains("REFUSED: machine ID dupe0000001 is in use by a running clusterd")
            .then_some(())
    });
    let refused = dup.clusterd_pid().expect("the refused clusterd runs");
    let (code, body) = dup.api("GET", "/fleet/v1/machines", None);
    assert_eq!(code, 503, "{body}");
    assert!(
        json(&body)["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("fleet server unable to communicate with etcd"),
        "{body}"
    );
    hold(
        2 * TTL,
        "the first machine keeps its ID and its unit",
        || {
            let ips = machine_ips(&a);
            let running = a.init.running();
            if ips != ["192.0.2.21"] || running.get("d.service") != Some(&pid) {
                return Err(format!("machines {ips:?}, A runs {running:?}"));
            }
            if dup.clusterd_pid() != Some(refused) {
                return Err("the refused clusterd did not keep running".into());
            }
            match dup.init.fleet_units().is_empty() {
                true => Ok(()),
                false => Err(format!("the duplicate holds {:?}", dup.init.fleet_units())),
            }
        },
    );

    a.init.crash();
    wait_for(
        3 * TTL + Duration::from_secs(5),
        "the second machine takes the free ID",
        || (machine_ips(&dup) == ["192.0.2.22"]).then_some(()),
    );
    wait_for(
        2 * TTL + Duration::from_secs(5),
        "d running on the second machine",
        || dup.init.running().get("d.service").copied(),
    );
}

/// fleet's TestSingleNodeConnectivityLoss: a machine's connection to etcd
/// cut (fleet's test rejects it with iptables; here the relay clusterd
/// reaches etcd through is cut) and restored, once for less than the TTL:
/// no unit stops or restarts, through the cut or after it. Then once for
/// longer, until etcd has expired the machine's presence and the leader's
/// lease: the non-global units are stopped before the presence expires (the
/// fence: the machine cannot tell this from a partition, where another
/// machine would be given them), and run again once the machine is back;
/// the global unit keeps its process throughout, as the engine, leading
/// again, gives the machine that comes back with it a TTL to register
/// (docs/cluster.md "Engine"; without that rule it was moved and restarted
/// in about two runs of five).
#[test]
fn an_etcd_cut_restarts_nothing_shorter_than_the_ttl_and_fences_longer() {
    let etcd = Etcd::start();
    let relay = Relay::start(etcd.url().trim_start_matches("http://"));
    let dir = tempdir();
    let m = Machine::up(&relay.url(), dir.path(), "cut000000001", "192.0.2.31");
    for (n, desired, xfleet) in [
        ("c0.service", "launched", &[][..]),
        ("c1.service", "launched", &[]),
        ("c2.service", "loaded", &[]),
        ("g.service", "launched", &[("Global", "true")]),
    ] {
        let body = unit_body(desired, "/bin/sleep 4901", xfleet);
        assert_eq!(
            m.api("PUT", &format!("/fleet/v1/units/{n}"), Some(&body)).0,
            201
        );
    }
    let pids = wait_for(Duration::from_secs(10), "c0, c1 and g running", || {
        let r = m.init.running();
        (r.len() == 3).then_some(r)
    });
    let unchanged = || {
        let now = m.init.running();
        match now == pids && m.init.fleet_units().contains_key("c2.service") {
            true => Ok(()),
            false => Err(format!("running {now:?}, was {pids:?}")),
        }
    };
    let presence = || etcd_get(&etcd, "/flotilla/machines/cut000000001");

    // Shorter than the TTL.
    relay.cut();
    hold(TTL / 2, "through a short cut", unchanged);
    relay.reopen();
    hold(TTL, "after a short cut", unchanged);

    // Longer than the TTL: the fence stops c0 and c1 before etcd expires
    // the machine's presence; g runs on.
    relay.cut();
    let g = pids["g.service"];
    let end = Instant::now() + 3 * TTL + Duration::from_secs(5);
    let mut fenced = None;
    loop {
        let here = presence().is_some();
        let running = m.init.running();
        assert_eq!(running.get("g.service"), Some(&g), "g during the cut");
        let stopped = !running.contains_key("c0.service") && !running.contains_key("c1.service");
        if !here {
            assert!(
                stopped,
                "the presence expired while the fenced units ran: {running:?}"
            );
            break;
        }
        if stopped && fenced.is_none() {
            fenced = Some(Instant::now());
        }
        assert!(Instant::now() < end, "the presence never expired");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        fenced.is_some(),
        "c0 and c1 stopped while the presence held"
    );
    let log = m.log();
    assert!(log.contains("fence: no keep-alive"), "{log}");
    relay.reopen();
    let again = wait_for(
        3 * TTL + Duration::from_secs(5),
        "c0 and c1 running again once back",
        || {
            let r = m.init.running();
            (presence().is_some() && r.len() == 3).then_some(r)
        },
    );
    assert_eq!(again["g.service"], g, "g kept its process");
    for n in ["c0.service", "c1.service"] {
        assert_ne!(again[n], pids[n], "{n} was stopped and started again");
    }
    let settled = || {
        let now = m.init.running();
        match now == again && m.init.fleet_units().contains_key("c2.service") {
            true => Ok(()),
            false => Err(format!("running {now:?}, was {again:?}")),
        }
    };
    hold(3 * TTL, "after the long cut", settled);
    for n in ["c0.service", "c1.service"] {
        let (_, b) = m.api("GET", &format!("/fleet/v1/units/{n}"), None);
        assert_eq!(json(&b)["currentState"], "launched", "{b}");
    }
}

/// Machines `PREFIXB…` (192.0.2.N+1), started first so that its engine
/// leads, and `PREFIXA…` (192.0.2.N) reaching etcd at `a_etcd`; four
/// units `UNITi.service` launched through B, some placed on A. Returns A,
/// B and the units.
fn b_leads_a_runs_units(
    etcd: &Etcd,
    a_etcd: &str,
    dir: &std::path::Path,
    (prefix, n): (&str, u32),
    unit: &str,
) -> (Machine, Machine, Vec<String>) {
    let id = |m: &str| format!("{prefix}{m}{}", "0".repeat(11 - prefix.len() - 1));
    let b = start(etcd, dir, &id("B"), &format!("192.0.2.{}", n + 1));
    wait_for(Duration::from_secs(10), "B leading", || {
        (etcd_get(etcd, "/flotilla/engine/leader") == Some(id("B"))).then_some(())
    });
    let a = Machine::up(a_etcd, dir, &id("A"), &format!("192.0.2.{n}"));
    wait_for(Duration::from_secs(10), "A in the machine list", || {
        (machine_ips(&b).len() == 2).then_some(())
    });
    let (names, placed) = launch_each_once(&b, &[&a, &b], unit, n, 4);
    assert!(
        placed.values().any(|on| on == &[0]),
        "least-loaded placement put units on A: {placed:?}"
    );
    (a, b, names)
}

/// A partition longer than the TTL while another machine leads: machine A
/// cut off etcd (its relay cut) stops its units before its presence can
/// expire, the leader (B, connected throughout) places them on B once it
/// has, within 2x the TTL of the cut, and at no moment (checked every
/// 20 ms) does a unit run on both machines. When A reaches etcd again it
/// registers anew and runs none of them: they stay on B, same processes.
#[test]
fn a_partition_longer_than_the_ttl_fences_the_units_and_they_run_once() {
    let etcd = Etcd::start();
    let relay = Relay::start(etcd.url().trim_start_matches("http://"));
    let dir = tempdir();
    let (a, b, names) = b_leads_a_runs_units(&etcd, &relay.url(), dir.path(), ("part", 51), "q");

    relay.cut();
    let cut = Instant::now();
    let took = all_move_to_b_once(&a, &b, &names, cut);
    eprintln!("partition: every unit on B {took:?} after the cut");
    let on_b = b.init.running();
    let mut same_on_b = stays_on_b(&a, &b, &names, on_b);
    // The partition goes on for a while, then ends.
    hold(TTL, "through the partition", &mut same_on_b);
    relay.reopen();
    a_back_its_units_stay_on_b(&a, &b, "after the partition", &mut same_on_b);
    let log = a.log();
    assert!(log.contains("fence: no keep-alive"), "{log}");
}

/// A unit the engine places on a machine while its fence is still up
/// runs there once the fence lifts. Machine A, back from a partition
/// longer than the TTL, registers anew and is given the unit pinned to it
/// (launched through B meanwhile) at once, while its fence lifts only
/// once its init holds the new lease's renewal: the fence keeps the unit
/// from the init until then, and lifting it must hand the init every unit
/// placed on A, not only those it stopped (it handed back only those,
/// and this one never ran: without that, this fails about three runs in
/// five).
#[test]
fn a_unit_placed_while_the_fence_is_up_runs_once_it_lifts() {
    let etcd = Etcd::start();
    let relay = Relay::start(etcd.url().trim_start_matches("http://"));
    let dir = tempdir();
    let (a, b, names) = b_leads_a_runs_units(&etcd, &relay.url(), dir.path(), ("lift", 71), "l");
    relay.cut();
    all_move_to_b_once(&a, &b, &names, Instant::now());
    let body = unit_body("launched", "/bin/sleep 7199", &[("MachineID", &a.id)]);
    let (code, out) = b.api("PUT", "/fleet/v1/units/pin.service", Some(&body));
    assert_eq!(code, 201, "{out}");
    relay.reopen();
    let end = Instant::now() + 3 * TTL + Duration::from_secs(5);
    while !a.init.running().contains_key("pin.service") {
        assert!(
            Instant::now() < end,
            "pin.service does not run on A: A's fleet units {:?}; the API: {}\nA's clusterd: {}",
            a.init.fleet_units(),
            b.api("GET", "/fleet/v1/units/pin.service", None).1,
            a.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = a.log();
    assert!(log.contains("fence lifted"), "{log}");
}

/// A clusterd frozen (SIGSTOP) past the TTL fences nothing itself: the
/// init does, by the lease clusterd last renewed (docs/cluster.md "A cut
/// longer than the TTL: the fence"). A's units stop there before the
/// leader (B) places them on B, within 2x the TTL of the freeze, never
/// running on both (checked every 20 ms). Resumed (SIGCONT), A's clusterd
/// registers anew and its units stay on B, the same processes.
#[test]
fn a_frozen_clusterd_leaves_the_fence_to_the_init_and_its_units_run_once() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let (a, b, names) = b_leads_a_runs_units(&etcd, &etcd.url(), dir.path(), ("frzn", 61), "f");
    let clusterd = a.clusterd_pid().expect("A's clusterd runs");
    signal(clusterd, libc::SIGSTOP);
    let frozen = Instant::now();
    let took = all_move_to_b_once(&a, &b, &names, frozen);
    eprintln!("frozen: every unit on B {took:?} after the freeze");
    init_fenced(&a);
    let mut same_on_b = stays_on_b(&a, &b, &names, b.init.running());
    hold(TTL, "while A's clusterd is frozen", &mut same_on_b);
    signal(clusterd, libc::SIGCONT);
    a_back_its_units_stay_on_b(&a, &b, "after A's clusterd resumed", &mut same_on_b);
    assert_eq!(
        a.clusterd_pid(),
        Some(clusterd),
        "the same clusterd runs on"
    );
}

/// A clusterd killed that its init does not start again (frozen, told to
/// stop, then SIGKILL before it could purge anything): no clusterd runs
/// on A, and its init's lease stops A's units before B runs them, never
/// on both; they stay on B, and A runs none of them.
#[test]
fn a_killed_clusterd_not_restarted_leaves_the_fence_to_the_init() {
    let etcd = Etcd::start();
    let dir = tempdir();
    let (a, b, names) = b_leads_a_runs_units(&etcd, &etcd.url(), dir.path(), ("kild", 63), "k");
    let clusterd = a.clusterd_pid().expect("A's clusterd runs");
    signal(clusterd, libc::SIGSTOP);
    let frozen = Instant::now();
    // Its stop signal waits while it is frozen; the SIGKILL ends it first.
    let control = a.init.control.display().to_string();
    let stop =
        std::thread::spawn(move || initctl(&["--control", &control, "stop", "clusterd"], &[]));
    wait_for(Duration::from_secs(5), "clusterd stopping", || {
        let l = a.init.list();
        (l.get("clusterd")?.state == flotilla_units::state::UnitState::Stopping).then_some(())
    });
    signal(clusterd, libc::SIGKILL);
    let out = stop.join().expect("initctl");
    assert_eq!(out.code, 0, "{out:?}");
    let took = all_move_to_b_once(&a, &b, &names, frozen);
    eprintln!("killed: every unit on B {took:?} after the freeze");
    let mut same_on_b = stays_on_b(&a, &b, &names, b.init.running());
    hold(2 * TTL, "with no clusterd on A", &mut same_on_b);
    assert_eq!(a.clusterd_pid(), None, "clusterd stays stopped");
    assert!(
        !a.log().contains("left the cluster"),
        "clusterd purged nothing: {}",
        a.log()
    );
    init_fenced(&a);
    assert!(
        a.init.running().is_empty(),
        "A runs none of its old units: {:?}",
        a.init.running()
    );
}

/// An outage of all of etcd longer than the fence's margin: the machines
/// cannot tell it from a partition, so each stops its non-global units
/// before its lease could expire; etcd keeps the leases through its
/// restart, so once it is back each runs them again where they were, once
/// (docs/cluster.md "Agent", the trade-off).
#[test]
fn an_etcd_outage_longer_than_the_fence_margin_restarts_the_units_where_they_were() {
    let mut etcd = Etcd::start();
    let dir = tempdir();
    let a = start(&etcd, dir.path(), "outA0000000", "192.0.2.61");
    let b = start(&etcd, dir.path(), "outB0000000", "192.0.2.62");
    wait_for(Duration::from_secs(10), "both machines listed", || {
        (machine_ips(&a).len() == 2).then_some(())
    });
    let (names, placed) = launch_each_once(&a, &[&a, &b], "o", 53, 6);
    etcd.stop();
    wait_for(TTL + Duration::from_secs(1), "every unit stopped", || {
        where_running(&[&a, &b]).is_empty().then_some(())
    });
    hold(TTL, "while etcd is down", || {
        let w = where_running(&[&a, &b]);
        match w.is_empty() {
            true => Ok(()),
            false => Err(format!("running while fenced: {w:?}")),
        }
    });
    etcd.restart();
    let back = Instant::now();
    let again = wait_for(
        3 * TTL + Duration::from_secs(10),
        "every unit running again",
        || {
            let w = where_running(&[&a, &b]);
            let done = w.len() == names.len() && w.values().all(|on| on.len() == 1);
            if !done && Instant::now() > back + 3 * TTL + Duration::from_secs(9) {
                panic!("not running again: {w:?}\nA: {}\nB: {}", a.log(), b.log());
            }
            done.then_some(w)
        },
    );
    assert_eq!(
        again,
        placed,
        "every unit runs where it ran, once\nA: {}\nB: {}",
        a.log(),
        b.log()
    );
    hold(2 * TTL, "after the outage", || {
        let w = where_running(&[&a, &b]);
        match w == placed {
            true => Ok(()),
            false => Err(format!("{w:?}, was {placed:?}")),
        }
    });
}
