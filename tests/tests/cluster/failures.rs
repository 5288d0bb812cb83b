//! Failures at scale: about 1,000 units on 10 machines, each a real init in
//! supervisor mode running its own clusterd, on a real etcd; every unit a
//! real process (`/bin/sleep N`, N its own). Each test gives the cluster a
//! fault and then checks, on the inits and in /proc, that every launched
//! unit runs exactly once and nothing else runs:
//!
//! - etcd killed for longer than the TTL and restarted: nothing moves;
//!   every machine stops its units before its lease could expire (the
//!   fence: it cannot tell the outage from a partition) and runs them
//!   again once etcd, which kept the leases, is back; nothing is lost or
//!   started twice, the agents resync (new units run);
//! - etcd's leader moved, and its leading member killed and restarted, in
//!   a three-member etcd cluster, during a burst of submissions;
//! - a machine frozen (SIGSTOP) past its TTL and resumed: its units run
//!   elsewhere within the time the TTL allows, and when it comes back it
//!   stops its stale copies before it registers again;
//! - the engine's leader killed twice in the middle of scheduling;
//! - a burst of 1,000 API writes (creations, desired-state changes, new
//!   unit files, deletions) from 10 clients through 10 machines at once.

use crate::support::etcd::Etcd;
use crate::support::etcd3::Etcd3;
use crate::support::fleet::{
    command, launch_body, launch_requests, name, wait_all_launched, Fleet,
};
use crate::support::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const MACHINES: usize = 10;
const UNITS: usize = 1000;
const TTL: Duration = Duration::from_secs(5);

/// The commands of units `range`, at version 0.
fn wanted(range: std::ops::Range<usize>) -> BTreeMap<String, String> {
    range.map(|i| (name(i), command(i, 0))).collect()
}

/// Checks `ok` every 200 ms for `d`, failing at once when it does not hold.
fn hold_for(d: Duration, what: &str, mut ok: impl FnMut() -> Result<(), String>) {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if let Err(e) = ok() {
            panic!("{what}: {e}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn etcd_killed_and_restarted() {
    let mut etcd = Etcd::start();
    let fleet = Fleet::start(&etcd.url(), MACHINES, TTL);
    fleet.launch(0..UNITS);
    let before = fleet.assert_exactly_once(&wanted(0..UNITS));

    // etcd down for longer than the TTL: nothing stops or moves during
    // the first half of the TTL (the fence stops nothing before seven
    // tenths of it), then every unit stops, before any lease could expire.
    etcd.stop();
    let down = Instant::now();
    let all = fleet.all();
    let same: BTreeMap<String, Vec<(usize, i32)>> =
        before.iter().map(|(u, p)| (u.clone(), vec![*p])).collect();
    hold_for(TTL / 2, "while etcd is down", || {
        (fleet.running(&all) == same)
            .then_some(())
            .ok_or_else(|| "units stopped, moved or restarted".to_string())
    });
    wait_for(TTL, "every unit stopped by the fence", || {
        fleet.running(&all).is_empty().then_some(())
    });
    eprintln!("etcd down: every unit stopped {:?} after", down.elapsed());
    hold_for(Duration::from_secs(1), "while etcd is down", || {
        let r = fleet.running(&all);
        r.is_empty()
            .then_some(())
            .ok_or_else(|| format!("running while fenced: {r:?}"))
    });
    etcd.restart();
    wait_for(Duration::from_secs(30), "the API back", || {
        (fleet.machines[0].api("GET", "/fleet/v1/units", None).0 == 200).then_some(())
    });
    // Nothing lost or moved: every unit launched again where it was, once.
    wait_all_launched(&fleet.sock(0), UNITS, Duration::from_secs(60));
    let end = Instant::now() + Duration::from_secs(60);
    while fleet.running(&all).len() < UNITS {
        if Instant::now() > end {
            let r = fleet.running(&all);
            let logs: Vec<String> = all
                .iter()
                .filter(|m| !r.values().any(|on| on.iter().any(|(i, _)| i == *m)))
                .map(|m| {
                    let log = fleet.machines[*m].log();
                    let tail: Vec<&str> = log
                        .lines()
                        .filter(|l| !l.contains("grpc request error"))
                        .collect();
                    format!(
                        "machine {m}:\n{}",
                        tail[tail.len().saturating_sub(40)..].join("\n")
                    )
                })
                .collect();
            panic!(
                "{} of {UNITS} units running again; the machines running none:\n{}",
                r.len(),
                logs.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let again = fleet.assert_exactly_once(&wanted(0..UNITS));
    for (u, (m, _)) in &before {
        assert_eq!(again[u].0, *m, "{u} kept its machine");
    }
    // The agents resynced: new units run, the others keep their processes.
    fleet.launch(UNITS..UNITS + 100);
    let after = fleet.assert_exactly_once(&wanted(0..UNITS + 100));
    for (u, p) in &again {
        assert_eq!(&after[u], p, "{u} kept its machine and process");
    }
}

#[test]
fn etcd_leader_moved_in_a_three_member_cluster() {
    let mut etcd = Etcd3::start();
    let fleet = Fleet::start(&etcd.urls(), MACHINES, TTL);
    let done = AtomicUsize::new(0);
    let reqs = launch_requests(0..UNITS);
    std::thread::scope(|s| {
        let sender = s.spawn(|| fleet.send_all(&fleet.all(), 10, reqs, &done));
        // During the burst: the leader moves twice, then the leading
        // member dies and comes back.
        let at = |n: usize| {
            wait_for(Duration::from_secs(120), "submissions", || {
                (done.load(Ordering::SeqCst) >= n).then_some(())
            })
        };
        at(200);
        let l = etcd.wait_leader();
        etcd.move_leader((l + 1) % 3);
        at(400);
        let l = etcd.wait_leader();
        etcd.move_leader((l + 1) % 3);
        at(600);
        let l = etcd.wait_leader();
        etcd.kill(l);
        let l2 = etcd.wait_leader();
        assert_ne!(l, l2, "a new etcd leader");
        etcd.restart(l);
        sender.join().expect("the submissions");
    });
    fleet.assert_exactly_once(&wanted(0..UNITS));
}

#[test]
fn frozen_machine_comes_back_and_stops_its_stale_copies_first() {
    let etcd = Etcd::start();
    let fleet = Fleet::start(&etcd.url(), MACHINES, TTL);
    fleet.launch(0..UNITS);
    let placed = fleet.assert_exactly_once(&wanted(0..UNITS));
    // Freeze a machine that neither leads the engine nor serves our API.
    let lead = fleet.engine_leader(&etcd);
    let frozen = (1..MACHINES).rev().find(|m| *m != lead).expect("a machine");
    let stale: Vec<String> = placed
        .iter()
        .filter(|(_, (m, _))| *m == frozen)
        .map(|(u, _)| u.clone())
        .collect();
    assert!(!stale.is_empty());
    let t0 = Instant::now();
    fleet.freeze(frozen, true);
    // Its units run on the others, once each.
    let others: Vec<usize> = (0..MACHINES).filter(|m| *m != frozen).collect();
    let want = wanted(0..UNITS);
    let moved = fleet.wait_exactly_once(&want, &others);
    let took = t0.elapsed();
    eprintln!(
        "a frozen machine's {} units ran elsewhere after {took:?} (TTL {TTL:?})",
        stale.len()
    );
    assert!(took < 3 * TTL, "{took:?}");
    for u in &stale {
        assert_ne!(moved[u].0, frozen);
    }
    // It comes back: at the moment it is present again, it runs none of
    // its stale copies any more.
    let key = format!("/flotilla/machines/{}", fleet.ids[frozen]);
    assert!(
        etcd_get(&etcd, &key).is_none(),
        "the frozen machine's presence expired"
    );
    fleet.freeze(frozen, false);
    wait_for(
        Duration::from_secs(60),
        "the machine registers again",
        || etcd_get(&etcd, &key).map(|_| ()),
    );
    let still = fleet.running(&[frozen]);
    assert!(
        stale.iter().all(|u| !still.contains_key(u)),
        "registered again while still running stale copies: {:?}",
        still
            .keys()
            .filter(|u| stale.contains(u))
            .collect::<Vec<_>>()
    );
    fleet.assert_exactly_once(&want);
}

#[test]
fn engine_leader_killed_in_the_middle_of_scheduling() {
    let etcd = Etcd::start();
    let fleet = Fleet::start(&etcd.url(), MACHINES, TTL);
    let done = AtomicUsize::new(0);
    let reqs = launch_requests(0..UNITS);
    let mut killed = Vec::new();
    std::thread::scope(|s| {
        let sender = s.spawn(|| fleet.send_all(&fleet.all(), 10, reqs, &done));
        for at in [300, 700] {
            wait_for(Duration::from_secs(120), "submissions", || {
                (done.load(Ordering::SeqCst) >= at).then_some(())
            });
            let lead = fleet.engine_leader(&etcd);
            let pid = fleet.machines[lead]
                .clusterd_pid()
                .expect("the leader's clusterd");
            signal(pid, libc::SIGKILL);
            killed.push((lead, pid));
        }
        sender.join().expect("the submissions");
    });
    // The inits restarted the killed clusterds.
    for (m, pid) in killed {
        wait_for(Duration::from_secs(30), "clusterd restarted", || {
            fleet.machines[m].clusterd_pid().filter(|p| *p != pid)
        });
    }
    fleet.assert_exactly_once(&wanted(0..UNITS));
}

#[test]
fn a_burst_of_1000_writes_from_10_clients() {
    let etcd = Etcd::start();
    let fleet = Fleet::start(&etcd.url(), MACHINES, TTL);
    // 600 units run; then each of 10 clients, through its own machine,
    // owns 60 of them and 40 new ones: it creates the 40, stops 20,
    // replaces the file of 20 and destroys 20 (100 writes each).
    fleet.launch(0..600);
    fleet.assert_exactly_once(&wanted(0..600));
    let mut reqs = Vec::new();
    let mut want = BTreeMap::new();
    for c in 0..10 {
        let own = c * 60;
        for j in 0..40 {
            let i = 600 + c * 40 + j;
            reqs.push(("PUT", name(i), Some(launch_body(i, 0))));
            want.insert(name(i), command(i, 0));
        }
        for i in own..own + 20 {
            reqs.push((
                "PUT",
                name(i),
                Some("{\"desiredState\":\"loaded\"}\n".to_string()),
            ));
        }
        for i in own + 20..own + 40 {
            reqs.push(("PUT", name(i), Some(launch_body(i, 1))));
            want.insert(name(i), command(i, 1));
        }
        for i in own + 40..own + 60 {
            reqs.push(("DELETE", name(i), None));
        }
    }
    assert_eq!(reqs.len(), 1000);
    // Interleave the clients' writes, one client per machine.
    let reqs: Vec<(String, String, Option<String>)> = reqs
        .into_iter()
        .map(|(m, n, b)| (m.to_string(), format!("/fleet/v1/units/{n}"), b))
        .collect();
    let t0 = Instant::now();
    fleet.send_all(&fleet.all(), 10, reqs, &AtomicUsize::new(0));
    eprintln!("1000 writes from 10 clients in {:?}", t0.elapsed());
    let placed = fleet.assert_exactly_once(&want);
    assert_eq!(placed.len(), 400 + 200);
    // The API agrees: stopped units are loaded, destroyed ones are gone.
    let mut c = http::Conn::new(&fleet.sock(0));
    let (units, _) = http::all_units(&mut c);
    let by: BTreeMap<&str, &flotilla_units::fleet_api::ApiUnit> =
        units.iter().map(|u| (u.name.as_str(), u)).collect();
    assert_eq!(units.len(), 1000 - 200);
    for c in 0..10 {
        for i in c * 60..c * 60 + 20 {
            assert_eq!(
                by[name(i).as_str()].desired_state.as_deref(),
                Some("loaded")
            );
        }
        for i in c * 60 + 40..c * 60 + 60 {
            assert!(!by.contains_key(name(i).as_str()));
        }
    }
}
