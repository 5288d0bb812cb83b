//! The chaos soak: for a set time (`FLOTILLA_CHAOS_SECS`, 25 s by
//! default), the real init in supervisor mode is hit at random — its
//! units crash, hang (ignore SIGTERM), flood their output, double-fork
//! out of their process group, the unit directory is reloaded with good
//! and bad sets, the target switches, control connections flood in with
//! garbage, and the init re-executes itself — and after every action the
//! invariants are checked:
//!
//! - every PID the init reports exists, and belongs to the unit it is
//!   reported for (its cgroup);
//! - every process below the init is in the cgroup of a unit the init
//!   knows, and none is left in the cgroup of a unit that has no
//!   processes (idle) for longer than a grace period (no orphan);
//! - no child of the init stays a zombie for longer than the grace;
//! - the states obey the planner's rules as seen from outside: a PID only
//!   in an up or stopping state, the target's state is its provider's, a
//!   refused reload changes nothing;
//! - the init's RSS and descriptor count stay bounded.
//!
//! At the end the chaos stops and the system must settle: every worker
//! running with exactly its one process. The RNG is seeded
//! (`FLOTILLA_CHAOS_SEED`, else from the clock) and the seed printed, so
//! that a failure can be replayed. `docs/chaos.md` has a long run.

use flotilla_tests::chaos::{self, Rng};
use flotilla_tests::init::{Init, TestDir};
use flotilla_tests::{procs, WAIT};
use flotilla_units::context::resources::cgroup_name;
use flotilla_units::protocol::{SystemStatus, UnitStatus};
use flotilla_units::state::UnitState;
use std::collections::HashMap;
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// Workers the chaos plays with.
const WORKERS: usize = 4;
/// How long a process may stay where it should not be (a unit being
/// killed, a zombie before its reap) before it counts as a violation:
/// well above `stop-timeout` (300 ms) and a SIGKILL's delivery.
const GRACE: Duration = Duration::from_secs(3);
/// The bound of the init's resident set (a debug build).
const MAX_RSS_KIB: u64 = 96 * 1024;
/// How many descriptors the init may hold above what it held before the
/// chaos for longer than [`GRACE`]. Its start holds its spawner's lanes
/// (288 copies of `/dev/null`, docs/performance.md) beside its units'
/// pipes; a control flood's connections add up to 150 until it reads
/// their ends, a moment after the check that follows the flood.
const MORE_FDS: usize = 100;

/// How a worker behaves at its next start (the file `mode-NAME`).
const MODES: [&str; 5] = ["sleep", "crash", "hang", "flood", "doublefork"];

fn worker(dir: &TestDir, name: &str, delay_ms: u32) -> String {
    let mode = dir.join(&format!("mode-{name}"));
    let script = format!(
        "case $(cat {mode} 2>/dev/null) in\n\
         crash) sleep 0.$((RANDOM % 5 + 1)); exit 3 ;;\n\
         hang) trap '' TERM; while :; do sleep 0.2; done ;;\n\
         flood) yes chaos-flood-line | head -n 100000; exec sleep 1000 ;;\n\
         doublefork) (setsid sleep 1000 </dev/null >/dev/null 2>&1 &); exec sleep 1000 ;;\n\
         *) exec sleep 1000 ;;\n\
         esac",
        mode = mode.display()
    );
    format!(
        "unit: {name}\nexec-start: [\"/bin/bash\", \"-c\", {}]\nrestart: always\n\
         restart-delay: {delay_ms}ms\nrestart-max-delay: 1s\nstop-timeout: 300ms\n",
        serde_json::to_string(&script).unwrap()
    )
}

fn names() -> Vec<String> {
    (0..WORKERS).map(|i| format!("w{i}")).collect()
}

/// The unit directory's good set; `delay` varies the workers' definition
/// (a reload with another delay changes them: they restart).
fn write_units(dir: &TestDir, delay: u32) {
    let all = names().join(", ");
    dir.unit(
        "default",
        &format!("unit: default\ntype: virtual\ndepends-on: [{all}]\n"),
    );
    dir.unit("small", "unit: small\ntype: virtual\ndepends-on: [w0]\n");
    dir.unit("other", "unit: other\ntype: virtual\n");
    for n in names() {
        dir.unit(&n, &worker(dir, &n, delay));
    }
}

/// The cgroup (its last component) of `pid`, if it can be read.
fn cgroup_of(pid: i32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    path.rsplit('/').next().map(str::to_string)
}

/// The init's resident set (KiB) and open descriptors.
fn footprint(pid: i32) -> (u64, usize) {
    let rss = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0);
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    (rss, fds)
}

/// What the checks remember between rounds: since when each suspicious
/// process has been seen so.
#[derive(Default)]
struct Watch {
    suspicious: HashMap<(i32, &'static str), Instant>,
    max_rss: u64,
    max_fds: usize,
    /// What the init held once its units ran, before the chaos.
    fds_at_start: usize,
    checks: u64,
}

impl Watch {
    /// Notes `pid` as suspicious for `why`; fails once it has been so
    /// for longer than [`GRACE`].
    fn suspect(
        &mut self,
        seen: &mut Vec<(i32, &'static str)>,
        pid: i32,
        why: &'static str,
        ctx: &str,
    ) {
        let since = *self
            .suspicious
            .entry((pid, why))
            .or_insert_with(Instant::now);
        seen.push((pid, why));
        assert!(
            since.elapsed() < GRACE,
            "process {pid} ({}): {why} for {:?}\n{ctx}",
            procs::cmdline(pid),
            since.elapsed()
        );
    }

    fn check(&mut self, init: &Init, seed: u64) -> SystemStatus {
        self.checks += 1;
        let st = init.status();
        let ctx = format!("seed {seed}; status: {st:?}");
        let by_cgroup: HashMap<String, &UnitStatus> =
            st.units.iter().map(|u| (cgroup_name(&u.unit), u)).collect();
        let mut seen = Vec::new();
        // The rules as seen from outside.
        for u in &st.units {
            if let Some(pid) = u.pid {
                assert!(
                    matches!(
                        u.state,
                        UnitState::Starting
                            | UnitState::Running
                            | UnitState::Reloading
                            | UnitState::Stopping
                    ),
                    "{} has PID {pid} in state {:?}\n{ctx}",
                    u.unit,
                    u.state
                );
                // It exists: a process that ended is a zombie until the
                // init reaps it, and then the init forgets it. It may
                // have been reaped since the reply: it must not be in
                // the next replies.
                if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                    self.suspect(&mut seen, pid, "reported by the init, gone", &ctx);
                } else if let Some(cg) = cgroup_of(pid) {
                    assert_eq!(cg, cgroup_name(&u.unit), "{}'s PID {pid}\n{ctx}", u.unit);
                }
            }
        }
        if let Some(p) = st.units.iter().find(|u| u.unit == st.target) {
            assert_eq!(st.target_state, p.state, "the target's state\n{ctx}");
        }
        // Every process below the init is a known unit's; none lingers in
        // an idle unit's cgroup; no zombie of the init's lasts.
        for pid in procs::descendants(init.pid) {
            let Some(cg) = cgroup_of(pid) else {
                continue; // gone meanwhile
            };
            match by_cgroup.get(&cg) {
                None => self.suspect(&mut seen, pid, "in no known unit's cgroup", &ctx),
                Some(u) if u.pid.is_none() && !matches!(u.state, UnitState::Stopping) => {
                    self.suspect(&mut seen, pid, "left in an idle unit's cgroup", &ctx)
                }
                Some(_) => {}
            }
            if procs::state(pid) == Some('Z') && procs::ppid(pid) == Some(init.pid) {
                self.suspect(&mut seen, pid, "a zombie of the init's", &ctx);
            }
        }
        let (rss, fds) = footprint(init.pid);
        self.max_rss = self.max_rss.max(rss);
        self.max_fds = self.max_fds.max(fds);
        assert!(rss < MAX_RSS_KIB, "the init's RSS is {rss} KiB\n{ctx}");
        // A flood's connections are closed a moment after the reply to
        // this check (the init reads their ends in the same round): only a
        // count that stays high is a fault. A leak is caught at the end.
        if fds > self.fds_at_start + MORE_FDS {
            let ctx = format!("the init holds {fds} descriptors; {ctx}");
            self.suspect(&mut seen, init.pid, "holds too many descriptors", &ctx);
        }
        self.suspicious.retain(|k, _| seen.contains(k));
        st
    }
}

/// Opens `n` connections, sends each garbage, a partial line or a valid
/// request, and drops them all.
fn control_flood(init: &Init, rng: &mut Rng, n: usize) {
    let mut conns = Vec::new();
    for _ in 0..n {
        let Ok(mut s) = UnixStream::connect(&init.control) else {
            continue; // the backlog is full: that is the flood
        };
        let msg: &[u8] = match rng.below(4) {
            0 => b"garbage that is no json\n",
            1 => b"{\"v\":1,\"op\":\"status\"",
            2 => b"{\"v\":1,\"op\":\"list\"}\n",
            _ => b"{\"v\":99,\"op\":\"status\"}\n",
        };
        let _ = s.write_all(msg);
        conns.push(s);
    }
}

#[test]
fn chaos_soak() {
    let secs = chaos::duration(25);
    let seed = chaos::seed("chaos");
    let cgroup2 = std::fs::read_to_string("/proc/self/mountinfo")
        .is_ok_and(|m| m.lines().any(|l| l.contains(" - cgroup2 ")));
    assert!(
        cgroup2,
        "no cgroup2 on this machine: the checks read each process's cgroup"
    );
    // `FLOTILLA_CHAOS_REEXEC=0` leaves the re-exec out (to tell its
    // faults from the others').
    let reexec = std::env::var("FLOTILLA_CHAOS_REEXEC").map_or(true, |v| v != "0");
    let mut rng = Rng::new(seed);
    let dir = TestDir::new();
    let mut delay = 20;
    write_units(&dir, delay);
    let init = dir.init().target("default").start();
    init.wait_all(
        &names().iter().map(String::as_str).collect::<Vec<_>>(),
        UnitState::Running,
    );
    let (_, fds_at_start) = footprint(init.pid);
    let mut watch = Watch {
        fds_at_start,
        ..Watch::default()
    };
    let mut counts: HashMap<&'static str, u32> = HashMap::new();
    let end = Instant::now() + secs;
    while Instant::now() < end {
        let st = watch.check(&init, seed);
        let w = format!("w{}", rng.below(WORKERS));
        let action = match rng.below(100) {
            0..=29 => {
                // A crash: SIGKILL to the worker's process, if it runs.
                if let Some(pid) = st.units.iter().find(|u| u.unit == w).and_then(|u| u.pid) {
                    procs::signal(pid, libc::SIGKILL);
                }
                "crash"
            }
            30..=54 => {
                // Another behaviour from its next start on, started now.
                let mode = MODES[rng.below(MODES.len())];
                std::fs::write(dir.join(&format!("mode-{w}")), mode).unwrap();
                let out = init.ctl(&["restart", &w]);
                // Not required by the current target: refused, fine.
                assert!(matches!(out.code, 0 | 1), "restart {w}: {out:?}");
                "mode"
            }
            55..=64 => {
                delay = if delay == 20 { 30 } else { 20 };
                write_units(&dir, delay);
                init.ctl(&["reload"]).expect(0);
                "good reload"
            }
            65..=72 => {
                let before: Vec<String> =
                    init.status().units.iter().map(|u| u.unit.clone()).collect();
                dir.unit("bad", "unit: bad\nexec-start: [unclosed\n");
                init.ctl(&["reload"]).expect(1);
                dir.remove_unit("bad");
                let after: Vec<String> =
                    init.status().units.iter().map(|u| u.unit.clone()).collect();
                assert_eq!(
                    before, after,
                    "a refused reload changed the unit set (seed {seed})"
                );
                "bad reload"
            }
            73..=84 => {
                let t = ["default", "small", "other"][rng.below(3)];
                init.ctl(&["set-target", t]).expect(0);
                "switch"
            }
            85..=94 => {
                control_flood(&init, &mut rng, 150);
                "control flood"
            }
            _ if !reexec => "nothing",
            _ => {
                let out = init.ctl(&["reexec"]);
                out.expect(0);
                assert!(out.stdout.starts_with("re-executed "), "{out:?}");
                assert!(procs::alive(init.pid));
                "reexec"
            }
        };
        eprintln!("chaos: {action} {w}");
        *counts.entry(action).or_default() += 1;
    }

    // The chaos stops: every worker back to plain sleeping, the target
    // default; the system settles with exactly one process per worker.
    for n in names() {
        std::fs::write(dir.join(&format!("mode-{n}")), "sleep").unwrap();
    }
    init.ctl(&["set-target", "default"]).expect(0);
    for n in names() {
        init.ctl(&["restart", &n]).expect(0);
    }
    let deadline = Instant::now() + WAIT * 2;
    let settled = loop {
        let st = watch.check(&init, seed);
        let mains: Vec<i32> = st
            .units
            .iter()
            .filter(|u| u.unit.starts_with('w') && u.state == UnitState::Running)
            .filter_map(|u| u.pid)
            .collect();
        let below = procs::descendants(init.pid);
        if mains.len() == WORKERS
            && below.len() == WORKERS
            && mains.iter().all(|p| below.contains(p))
        {
            break st;
        }
        if Instant::now() > deadline {
            let procs: Vec<String> = below
                .iter()
                .map(|&p| format!("{p} {:?} {}", cgroup_of(p), procs::cmdline(p)))
                .collect();
            panic!(
                "seed {seed}: not settled: {st:?}\nprocesses: {procs:#?}\n{}",
                init.output()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(settled.target_state, UnitState::Running);
    // Settled as at the start, the init holds what it held then: a
    // descriptor kept past the chaos is a leak.
    let deadline = Instant::now() + WAIT;
    let fds_at_end = loop {
        let (_, fds) = footprint(init.pid);
        if fds <= fds_at_start || Instant::now() > deadline {
            break fds;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let held: Vec<String> = std::fs::read_dir(format!("/proc/{}/fd", init.pid))
        .map(|d| {
            d.flatten()
                .map(|e| format!("{:?}", std::fs::read_link(e.path())))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        fds_at_end <= fds_at_start,
        "seed {seed}: the init held {fds_at_start} descriptors at the start, {fds_at_end} once settled: {held:#?}"
    );
    let mut summary: Vec<String> = counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
    summary.sort();
    eprintln!(
        "chaos: seed {seed}: {} checks; actions: {}; init max RSS {} KiB, descriptors {} at the start, {} at most",
        watch.checks,
        summary.join(", "),
        watch.max_rss,
        fds_at_start,
        watch.max_fds
    );
}
