//! A random schedule of faults on five machines (each a real init running
//! its clusterd, each reaching etcd through a relay of its own,
//! [`Relay`]), for `FLOTILLA_CHAOS_SECS` (30 s by default) and the seed
//! `FLOTILLA_CHAOS_SEED`, as the chaos soaks (`docs/chaos.md`): a
//! machine's clusterd stopped (`initctl stop`: it purges its units and
//! leaves) and started again, killed (SIGKILL: its init restarts it),
//! frozen (SIGSTOP) for longer than the TTL and resumed (its init stops its
//! units by the lease clusterd last renewed), its connection to etcd cut for less than the TTL and restored, cut for
//! longer than the TTL (a partition: the machine fences its units, the
//! leader places them elsewhere once its presence expired) and restored,
//! the engine's leader stopped (a new one takes over), and a machine
//! joining with an ID in use (refused; it runs nothing). The invariant,
//! checked every 50 ms all along: no unit runs on two machines at once, and
//! every unit runs within 2x the TTL of the last fault. Its record is
//! printed.

use crate::support::etcd::Etcd;
use crate::support::relay::Relay;
use crate::support::*;
use flotilla_tests::chaos::{self, Rng};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const MACHINES: usize = 5;
const UNITS: usize = 12;
const TTL: Duration = Duration::from_secs(3);

/// What the invariant saw.
#[derive(Default, Debug)]
struct Record {
    checks: u64,
    /// The most units seen not running at one check.
    most_missing: usize,
    /// The longest time from a fault to every unit running once.
    slowest: Duration,
    /// The longest stretch with some unit not running (a long cut's units
    /// run on until the fence stops them, so that stretch begins later
    /// than the fault).
    longest_down: Duration,
    faults: BTreeMap<&'static str, u32>,
}

struct Cluster {
    machines: Vec<Machine>,
    relays: Vec<Relay>,
    stopped: Vec<bool>,
    units: Vec<String>,
    last_fault: Instant,
    settled: bool,
    /// Since when some unit has not been running.
    down_since: Option<Instant>,
    record: Record,
    seed: u64,
}

impl Cluster {
    /// One check of the invariant.
    fn check(&mut self) {
        self.record.checks += 1;
        let mut on: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, m) in self.machines.iter().enumerate() {
            for u in m.init.running().into_keys() {
                on.entry(u).or_default().push(i);
            }
        }
        if let Some((u, at)) = on.iter().find(|(_, at)| at.len() > 1) {
            panic!("seed {}: {u} runs on machines {at:?} at once", self.seed);
        }
        let missing = self.units.iter().filter(|u| !on.contains_key(*u)).count();
        self.record.most_missing = self.record.most_missing.max(missing);
        let since = self.last_fault.elapsed();
        match (missing, self.down_since) {
            (0, Some(t)) => {
                self.record.longest_down = self.record.longest_down.max(t.elapsed());
                self.down_since = None;
            }
            (1.., None) => self.down_since = Some(Instant::now()),
            _ => {}
        }
        if missing == 0 {
            if !self.settled {
                self.record.slowest = self.record.slowest.max(since);
                self.settled = true;
            }
        } else {
            assert!(
                since <= 2 * TTL,
                "seed {}: {missing} units not running {since:?} after the last fault: {on:?}",
                self.seed
            );
        }
    }

    /// Checks every 50 ms for `d`.
    fn watch(&mut self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end {
            self.check();
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn fault(&mut self, what: &'static str) {
        eprintln!("faults: {what}");
        *self.record.faults.entry(what).or_default() += 1;
        self.last_fault = Instant::now();
        self.settled = false;
    }

    fn initctl(&self, m: usize, verb: &str) {
        let control = self.machines[m].init.control.display().to_string();
        let out = initctl(&["--control", &control, verb, "clusterd"], &[]);
        assert_eq!(out.code, 0, "initctl {verb} clusterd on m{m}: {out:?}");
    }

    fn leader(&self, etcd: &Etcd) -> Option<usize> {
        let id = etcd_get(etcd, "/flotilla/engine/leader")?;
        self.machines.iter().position(|m| m.id == id)
    }
}

#[test]
fn a_random_schedule_of_faults_never_runs_a_unit_twice() {
    let secs = chaos::duration(30);
    let seed = chaos::seed("faults");
    let mut rng = Rng::new(seed);
    let etcd = Etcd::start();
    let dir = tempdir();
    let target = etcd.url().trim_start_matches("http://").to_string();
    let relays: Vec<Relay> = (0..MACHINES).map(|_| Relay::start(&target)).collect();
    let machines: Vec<Machine> = (0..MACHINES)
        .map(|i| {
            let id = format!("fau1t{i:07}");
            Machine::start(
                &relays[i].url(),
                dir.path(),
                &id,
                "",
                &format!("192.0.2.{}", 40 + i),
                "3s",
                &[],
            )
        })
        .collect();
    for m in &machines {
        m.wait_api();
    }
    let units: Vec<String> = (0..UNITS).map(|i| format!("f{i:02}.service")).collect();
    for (i, u) in units.iter().enumerate() {
        let body = unit_body("launched", &format!("/bin/sleep 51{i:02}"), &[]);
        assert_eq!(
            machines[0]
                .api("PUT", &format!("/fleet/v1/units/{u}"), Some(&body))
                .0,
            201
        );
    }
    let mut c = Cluster {
        machines,
        relays,
        stopped: vec![false; MACHINES],
        units,
        last_fault: Instant::now(),
        settled: false,
        down_since: None,
        record: Record::default(),
        seed,
    };
    let end = Instant::now() + secs;
    while Instant::now() < end {
        let m = rng.below(MACHINES);
        let up = c.stopped.iter().filter(|s| !**s).count();
        match rng.below(100) {
            0..=19 if !c.stopped[m] && up > 3 => {
                c.fault("clusterd stopped");
                c.initctl(m, "stop");
                c.stopped[m] = true;
            }
            0..=29 if c.stopped[m] => {
                c.fault("clusterd started again");
                c.initctl(m, "start");
                c.stopped[m] = false;
            }
            30..=41 if !c.stopped[m] => {
                c.fault("clusterd killed");
                if let Some(pid) = c.machines[m].clusterd_pid() {
                    signal(pid, libc::SIGKILL);
                }
            }
            42..=49 if !c.stopped[m] => {
                // As a cut longer than the TTL, but nothing of clusterd
                // runs: the init's lease stops its units (docs/cluster.md
                // "A cut longer than the TTL: the fence"), the leader places
                // them elsewhere.
                if let Some(pid) = c.machines[m].clusterd_pid() {
                    c.fault("clusterd frozen longer than the TTL");
                    signal(pid, libc::SIGSTOP);
                    let frozen = TTL + Duration::from_millis(1500 + rng.below(1500) as u64);
                    c.watch(frozen);
                    signal(pid, libc::SIGCONT);
                }
            }
            50..=61 => {
                c.fault("etcd cut shorter than the TTL");
                c.relays[m].cut();
                let cut = TTL / 4 + Duration::from_millis(rng.below(1000) as u64);
                c.watch(cut);
                c.relays[m].reopen();
            }
            62..=69 => {
                // Its units stop on it and run elsewhere while it is cut
                // off: within 2x the TTL of the cut, never on two machines.
                // The cut lasts past the moment etcd expires the machine's
                // presence and the leader moves its units (docs/cluster.md
                // "Agent", the window left).
                c.fault("etcd cut longer than the TTL");
                c.relays[m].cut();
                let cut = TTL + Duration::from_millis(1500 + rng.below(1500) as u64);
                c.watch(cut);
                c.relays[m].reopen();
            }
            70..=84 => {
                if let Some(l) = c.leader(&etcd).filter(|l| !c.stopped[*l] && up > 3) {
                    c.fault("engine leader stopped");
                    c.initctl(l, "stop");
                    c.stopped[l] = true;
                }
            }
            85..=99 if !c.stopped[m] => {
                c.fault("a machine joins with an ID in use");
                let other = tempdir();
                let id = c.machines[m].id.clone();
                let mut d =
                    Machine::start(&etcd.url(), other.path(), &id, "", "192.0.2.99", "3s", &[]);
                let until = Instant::now() + Duration::from_secs(10);
                while !d.log().contains("REFUSED: machine ID") {
                    assert!(
                        Instant::now() < until,
                        "seed {seed}: the duplicate was not refused"
                    );
                    c.watch(Duration::from_millis(100));
                }
                assert_eq!(d.api("GET", "/fleet/v1/machines", None).0, 503);
                c.watch(Duration::from_millis(500));
                assert!(
                    d.init.fleet_units().is_empty(),
                    "seed {seed}: the duplicate ran units"
                );
                d.init.crash();
            }
            _ => {}
        }
        // Sometimes long enough for the second half of the invariant.
        let pause = if rng.below(4) == 0 {
            2 * TTL + Duration::from_millis(500)
        } else {
            Duration::from_millis(300 + rng.below(1500) as u64)
        };
        c.watch(pause);
    }
    // The faults stop: within 2x the TTL every unit runs, once.
    c.last_fault = Instant::now();
    c.settled = false;
    c.watch(2 * TTL + Duration::from_secs(1));
    assert!(c.settled, "seed {seed}: not every unit runs at the end");
    eprintln!(
        "faults: seed {seed}: {} checks every 50 ms, never a unit on two machines; at most {} of {} units down at once; slowest return to every unit running: {:?} (limit {:?}); longest stretch with a unit down: {:?}; faults: {:?}",
        c.record.checks,
        c.record.most_missing,
        UNITS,
        c.record.slowest,
        2 * TTL,
        c.record.longest_down,
        c.record.faults
    );
}
