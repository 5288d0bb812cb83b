//! The cluster's chaos soak: for a set time (`FLOTILLA_CHAOS_SECS`, 20 s
//! by default), three machines (each a real init running its clusterd) on
//! a real etcd are hit at random: a machine's clusterd is killed (its init
//! restarts it, the engine's leader among them), etcd is killed and
//! restarted, units are launched and destroyed through the API of a
//! machine picked at random. After every action, and every 100 ms while
//! etcd is down, nothing runs twice: no unit is running on two inits, and
//! no unit's command has two processes under the inits. At the end the
//! chaos stops and every unit launched and not destroyed must run exactly
//! once (`docs/chaos.md`).

use crate::support::etcd::Etcd;
use crate::support::fleet::{command, launch_body, name, Fleet};
use crate::support::{signal, wait_for};
use flotilla_tests::chaos::{self, Rng};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

const MACHINES: usize = 3;
/// Units launched before the chaos starts.
const UNITS: usize = 30;
/// The machines' presence TTL: a clusterd killed is back well within it.
const TTL: Duration = Duration::from_secs(5);

/// Fails if a unit runs twice: on two inits, or as two processes.
fn check_once(fleet: &Fleet, seed: u64) {
    let all = fleet.all();
    for (unit, on) in fleet.running(&all) {
        assert!(on.len() <= 1, "seed {seed}: {unit} runs on {on:?}");
    }
    for (cmd, pids) in fleet.unit_processes(&all) {
        assert!(pids.len() <= 1, "seed {seed}: {cmd} runs as {pids:?}");
    }
}

/// Sends a request through machine `m`'s API until it is answered (a
/// clusterd being restarted does not answer, etcd down gets a 503).
fn request(fleet: &Fleet, m: usize, method: &str, path: String, body: Option<String>) {
    let req = vec![(method.to_string(), path, body)];
    fleet.send_all(&[m], 1, req, &AtomicUsize::new(0));
}

#[test]
fn cluster_chaos_soak() {
    let secs = chaos::duration(20);
    let seed = chaos::seed("cluster chaos");
    let mut rng = Rng::new(seed);
    let mut etcd = Etcd::start();
    let mut fleet = Fleet::start(&etcd.url(), MACHINES, TTL);
    fleet.context = format!("seed {seed}");
    fleet.launch(0..UNITS);
    let mut live: Vec<usize> = (0..UNITS).collect();
    let mut next = UNITS;
    let mut counts: BTreeMap<&'static str, u32> = BTreeMap::new();
    let end = Instant::now() + secs;
    while Instant::now() < end {
        check_once(&fleet, seed);
        let m = rng.below(MACHINES);
        let action = match rng.below(100) {
            0..=29 => {
                if let Some(pid) = fleet.machines[m].clusterd_pid() {
                    signal(pid, libc::SIGKILL);
                }
                "kill clusterd"
            }
            30..=44 => {
                etcd.stop();
                // Down for 0.2 to 2 s; nothing may start twice meanwhile.
                let down = Duration::from_millis(200 + rng.below(1800) as u64);
                let back = Instant::now() + down;
                while Instant::now() < back {
                    check_once(&fleet, seed);
                    std::thread::sleep(Duration::from_millis(100));
                }
                etcd.restart();
                "kill etcd"
            }
            45..=74 => {
                let path = format!("/fleet/v1/units/{}", name(next));
                request(&fleet, m, "PUT", path, Some(launch_body(next, 0)));
                live.push(next);
                next += 1;
                "launch"
            }
            _ => {
                if !live.is_empty() {
                    let i = live.swap_remove(rng.below(live.len()));
                    let path = format!("/fleet/v1/units/{}", name(i));
                    request(&fleet, m, "DELETE", path, None);
                }
                "destroy"
            }
        };
        eprintln!("cluster chaos: {action} (m{m})");
        *counts.entry(action).or_default() += 1;
        // The next action when this one has had a moment to act.
        std::thread::sleep(Duration::from_millis(100 + rng.below(300) as u64));
    }

    // The chaos stops: every unit launched and not destroyed runs once.
    let want: BTreeMap<String, String> = live.iter().map(|&i| (name(i), command(i, 0))).collect();
    wait_for(Duration::from_secs(30), "every machine's API", || {
        fleet
            .all()
            .iter()
            .all(|&m| fleet.machines[m].api("GET", "/fleet/v1/units", None).0 == 200)
            .then_some(())
    });
    fleet.assert_exactly_once(&want);
    let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    eprintln!(
        "cluster chaos: seed {seed}: {} units at the end; actions: {}",
        want.len(),
        summary.join(", ")
    );
}
