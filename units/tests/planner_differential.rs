//! The planner against a frozen copy of itself from before the third
//! optimisation pass (`reference/planner_v2.rs`): the same random unit sets,
//! facts in random order, target switches, restarts, reloads, unit-set
//! replacements, timers and shutdowns, fed to both; after every step the
//! actions, the changed units, every unit's view (state, status text,
//! `blocked_by`, times), the deadlines and the other queries must be
//! identical. The optimisations change the planner's bookkeeping, never
//! what it decides or says.

#[path = "reference/planner_v2.rs"]
mod reference;

use flotilla_units::graph::{Graph, UnitId};
use flotilla_units::planner::{Action, ExitStatus, Fact, Notify, Planner, PlannerOptions};
use flotilla_units::spec::{Command, Origin, RestartPolicy, UnitSpec, UnitType};
use flotilla_units::time::Instant;
use std::collections::BTreeMap;
use std::time::Duration;

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn ms(&mut self, max: u64) -> Duration {
        Duration::from_millis(self.next() % max.max(1))
    }
}

fn cmd(rng: &mut Rng, what: &str) -> Command {
    let mut c = if rng.chance(20) {
        Command::new(["/bin/sim", what, "$MAINPID", "x${MAINPID}y"])
    } else {
        Command::new(["/bin/sim", what])
    };
    c.ignore_failure = rng.chance(20);
    c
}

/// A random unit set over `n` names (unit `i` depends only on units with a
/// larger index, or on a target nothing provides), every type and option
/// the planner looks at.
fn random_set(rng: &mut Rng, n: usize) -> Vec<(UnitSpec, Origin)> {
    let mut units = Vec::new();
    for i in 0..n {
        if rng.chance(8) {
            continue;
        }
        let kind = match rng.below(9) {
            0 => UnitType::Virtual,
            1 => UnitType::Oneshot,
            2 | 3 => UnitType::ForegroundNotified,
            4 => UnitType::BackgroundScripted,
            5 => UnitType::BackgroundPidfile,
            _ => UnitType::ForegroundSupervised,
        };
        let name = format!("u{i:02}");
        let mut s = UnitSpec::new(name.clone(), kind);
        if kind != UnitType::Virtual {
            if !rng.chance(3) {
                s.exec_start = Some(cmd(rng, &name));
            }
            for _ in 0..[0, 0, 0, 1, 2][rng.below(5)] {
                s.exec_start_pre.push(cmd(rng, "pre"));
            }
            if rng.chance(25) {
                s.exec_stop = Some(cmd(rng, "stop"));
            }
            for _ in 0..[0, 0, 0, 1, 2][rng.below(5)] {
                s.exec_stop_post.push(cmd(rng, "post"));
            }
            if rng.chance(25) {
                s.exec_reload = Some(cmd(rng, "reload"));
            }
            if kind == UnitType::ForegroundSupervised {
                if rng.chance(20) {
                    s.ready_wait = Some(rng.ms(3000));
                } else if rng.chance(15) {
                    s.ready_grep = Some("up".into());
                }
            }
            if kind == UnitType::BackgroundPidfile && !rng.chance(10) {
                s.pidfile = Some(format!("/run/{name}.pid").into());
            }
        }
        s.restart = match rng.below(3) {
            0 => RestartPolicy::No,
            1 => RestartPolicy::OnFailure,
            _ => RestartPolicy::Always,
        };
        s.restart_delay = rng.ms(400);
        s.restart_max_delay = rng.ms(3000);
        s.start_timeout = Duration::from_millis(200) + rng.ms(4000);
        s.stop_timeout = Duration::from_millis(200) + rng.ms(4000);
        if rng.chance(10) {
            s.kill_signal = flotilla_units::spec::Signal(2);
        }
        if rng.chance(25) {
            s.provides.push(format!("t{}", rng.below(3)));
        }
        for _ in 0..rng.below(4) {
            let t = if rng.chance(6) {
                format!("missing{}", rng.below(2))
            } else if rng.chance(10) {
                format!("t{}", rng.below(3))
            } else if i + 1 < n {
                format!("u{:02}", i + 1 + rng.below(n - i - 1))
            } else {
                continue;
            };
            let list = match rng.below(4) {
                0 | 1 => &mut s.depends_on,
                2 => &mut s.depends_ms,
                _ => &mut s.waits_for,
            };
            if !list.contains(&t) && t != name {
                list.push(t);
            }
        }
        units.push((s, Origin::unplaced(format!("{name}.yaml"))));
    }
    units
}

/// Small changes to a unit set, for `replace_units`.
fn mutate(rng: &mut Rng, units: &[(UnitSpec, Origin)], n: usize) -> Vec<(UnitSpec, Origin)> {
    let mut out: Vec<(UnitSpec, Origin)> = Vec::new();
    for (s, o) in units {
        if rng.chance(10) {
            continue;
        }
        let mut s = s.clone();
        if rng.chance(15) {
            s.start_timeout += Duration::from_millis(1);
        }
        if rng.chance(5) {
            s.depends_on.clear();
            s.waits_for.clear();
        }
        out.push((s, o.clone()));
    }
    // Sometimes a new unit, or one from a fresh random set.
    if rng.chance(40) {
        let extra = random_set(rng, n + 3);
        for (s, o) in extra {
            if !out.iter().any(|(x, _)| x.name == s.name) && rng.chance(30) {
                out.push((s, o));
            }
        }
    }
    out
}

/// A live process of the simulated world (its unit follows replacements).
struct Proc {
    unit: UnitId,
}

struct Pair {
    a: Planner,
    b: reference::Planner,
    now: Instant,
    pending: Vec<Action>,
    procs: BTreeMap<i32, Proc>,
    next_pid: i32,
    names: Vec<String>,
    steps: usize,
}

impl Pair {
    fn check(&mut self, what: &str) {
        self.steps += 1;
        let ctx = || format!("after {what}");
        let (a, b) = (self.a.take_actions(), self.b.take_actions());
        assert_eq!(a, b, "actions {}", ctx());
        self.pending.extend(a);
        assert_eq!(
            self.a.take_changed(),
            self.b.take_changed(),
            "changed {}",
            ctx()
        );
        let g = self.a.graph();
        assert_eq!(g.len(), self.b.graph().len());
        for u in g.ids() {
            assert_eq!(self.a.view(u), self.b.view(u), "view of {u:?} {}", ctx());
            assert_eq!(self.a.state(u), self.b.state(u));
            assert_eq!(self.a.is_required(u), self.b.is_required(u));
            assert_eq!(self.a.coincidental(u), self.b.coincidental(u), "{}", ctx());
        }
        assert_eq!(self.a.next_deadline(), self.b.next_deadline(), "{}", ctx());
        assert_eq!(self.a.target(), self.b.target());
        assert_eq!(self.a.target_state(), self.b.target_state());
        assert_eq!(self.a.target_settled(), self.b.target_settled());
        assert_eq!(self.a.target_times(), self.b.target_times());
        assert_eq!(self.a.degraded(), self.b.degraded());
        assert_eq!(self.a.failed_units(), self.b.failed_units());
        assert_eq!(self.a.drained(), self.b.drained());
        assert_eq!(self.a.shutting_down(), self.b.shutting_down());
        for &pid in self.procs.keys() {
            assert_eq!(self.a.owner(pid), self.b.owner(pid), "owner {}", ctx());
        }
    }

    fn fact(&mut self, f: Fact) {
        let what = format!("{f:?}");
        self.a.fact(f.clone(), self.now);
        self.b.fact(f, self.now);
        self.check(&what);
    }

    fn exit(&mut self, pid: i32, status: ExitStatus) {
        if self.procs.remove(&pid).is_some() {
            self.fact(Fact::Exited { pid, status });
        }
    }

    /// Carries out the pending action at `k`.
    fn act(&mut self, rng: &mut Rng, k: usize) {
        let a = self.pending.remove(k);
        match a {
            Action::Spawn { unit, role, .. } => {
                if rng.chance(4) {
                    self.fact(Fact::SpawnFailed {
                        unit,
                        role,
                        error: "no such file".into(),
                    });
                    return;
                }
                let pid = self.next_pid;
                self.next_pid += 1;
                self.procs.insert(pid, Proc { unit });
                self.fact(Fact::Spawned { unit, role, pid });
            }
            Action::Kill { whom, signal, .. } => {
                if signal.0 == 9 || rng.chance(80) {
                    self.exit(whom.pid(), ExitStatus::Signal(signal.0));
                }
            }
            Action::ReadPidfile { unit, .. } => {
                let result = if rng.chance(60) {
                    let pid = self.next_pid;
                    self.next_pid += 1;
                    self.procs.insert(pid, Proc { unit });
                    Ok(pid)
                } else {
                    Err("no such file".to_string())
                };
                self.fact(Fact::Pidfile { unit, result });
            }
        }
    }

    fn random_unit(&self, rng: &mut Rng) -> UnitId {
        UnitId(rng.below(self.a.graph().len()) as u32)
    }

    fn random_name(&self, rng: &mut Rng) -> String {
        if rng.chance(5) {
            return "nope".into();
        }
        self.names[rng.below(self.names.len())].clone()
    }

    fn step(&mut self, rng: &mut Rng, n: usize, units: &mut Vec<(UnitSpec, Origin)>) {
        let len = self.a.graph().len();
        match rng.below(100) {
            // Mostly: carry out what the planner asked, in any order.
            0..=44 if !self.pending.is_empty() => {
                let k = if rng.chance(70) {
                    0
                } else {
                    rng.below(self.pending.len())
                };
                self.act(rng, k);
            }
            45..=54 if !self.procs.is_empty() => {
                // A process ends by itself.
                let pids: Vec<i32> = self.procs.keys().copied().collect();
                let pid = pids[rng.below(pids.len())];
                let status = match rng.below(4) {
                    0 | 1 => ExitStatus::Code(0),
                    2 => ExitStatus::Code(1),
                    _ => ExitStatus::Signal(9),
                };
                self.exit(pid, status);
            }
            55..=66 if len > 0 => {
                let unit = self.random_unit(rng);
                let msg = match rng.below(9) {
                    0..=3 => Notify::Ready,
                    4 => Notify::Reloading,
                    5 => Notify::Stopping,
                    6 => Notify::Status(format!("busy {}", rng.below(3))),
                    7 => Notify::Errno(rng.below(5) as i32),
                    _ => {
                        if rng.chance(50) {
                            Notify::ExtendTimeout(rng.ms(5000))
                        } else {
                            let pid = self.next_pid;
                            self.next_pid += 1;
                            self.procs.insert(pid, Proc { unit });
                            Notify::MainPid(pid)
                        }
                    }
                };
                self.fact(Fact::Notify { unit, msg });
            }
            67..=69 if len > 0 => {
                let unit = self.random_unit(rng);
                self.fact(Fact::ReadyLine { unit });
            }
            70..=79 => {
                // Time passes: to the next deadline, or a little.
                let d = self.a.next_deadline();
                self.now = match d {
                    Some(t) if rng.chance(70) && t > self.now => t,
                    _ => self.now.after(rng.ms(700)),
                };
                self.a.tick(self.now);
                self.b.tick(self.now);
                self.check("tick");
            }
            80..=84 => {
                let t = match rng.below(6) {
                    0 => "t0".to_string(),
                    1 => "t1".to_string(),
                    2 => "nothing".to_string(),
                    _ => self.random_name(rng),
                };
                let (x, y) = (
                    self.a.set_target(&t, self.now),
                    self.b.set_target(&t, self.now),
                );
                assert_eq!(x, y);
                self.check(&format!("set_target {t}"));
            }
            85..=88 => {
                let name = self.random_name(rng);
                let (x, y) = (
                    self.a.restart(&name, self.now),
                    self.b.restart(&name, self.now),
                );
                assert_eq!(x, y);
                self.check(&format!("restart {name}"));
            }
            89..=91 => {
                let name = self.random_name(rng);
                let (x, y) = (
                    self.a.reload_unit(&name, self.now),
                    self.b.reload_unit(&name, self.now),
                );
                assert_eq!(x, y);
                self.check(&format!("reload {name}"));
            }
            92..=95 => {
                let set = mutate(rng, units, n);
                let strict = rng.chance(50);
                let x = self.a.replace_units(set.clone(), strict, self.now);
                let y = self.b.replace_units(set.clone(), strict, self.now);
                assert_eq!(format!("{x:?}"), format!("{y:?}"));
                if let Ok((_, map)) = x {
                    *units = set;
                    self.names = units.iter().map(|(s, _)| s.name.clone()).collect();
                    if self.names.is_empty() {
                        self.names.push("nope".into());
                    }
                    // The pending actions were remapped by the planner; ours
                    // follow the same map (those of removed units dropped).
                    self.pending = std::mem::take(&mut self.pending)
                        .into_iter()
                        .filter_map(|mut a| {
                            let (Action::Spawn { unit, .. }
                            | Action::Kill { unit, .. }
                            | Action::ReadPidfile { unit, .. }) = &mut a;
                            *unit = map.get(unit.index()).copied().flatten()?;
                            Some(a)
                        })
                        .collect();
                    for p in self.procs.values_mut() {
                        if let Some(Some(u)) = map.get(p.unit.index()) {
                            p.unit = *u;
                        }
                    }
                }
                self.check("replace_units");
            }
            96 if rng.chance(20) => {
                self.a.shutdown(self.now);
                self.b.shutdown(self.now);
                self.check("shutdown");
            }
            _ => {}
        }
    }
}

fn scenario(seed: u64, steps: usize) {
    let mut rng = Rng(seed);
    let n = 2 + rng.below(14);
    let mut units = random_set(&mut rng, n);
    let (ga, da) = Graph::build(units.clone());
    let (gb, db) = Graph::build(units.clone());
    assert_eq!(format!("{da:?}"), format!("{db:?}"));
    let opts = PlannerOptions {
        max_concurrent_starts: if rng.chance(20) {
            Some(1 + rng.below(3))
        } else {
            None
        },
    };
    let target = match rng.below(4) {
        0 => "t0".to_string(),
        1 => "nothing".to_string(),
        _ => format!("u{:02}", rng.below(n)),
    };
    let now = Instant(1_000_000_000);
    let a = Planner::new(ga, &target, now, opts);
    let b = reference::Planner::new(gb, &target, now, opts);
    let mut names: Vec<String> = units.iter().map(|(s, _)| s.name.clone()).collect();
    if names.is_empty() {
        names.push("nope".into());
    }
    let mut pair = Pair {
        a,
        b,
        now,
        pending: Vec::new(),
        procs: BTreeMap::new(),
        next_pid: 100,
        names,
        steps: 0,
    };
    pair.check("new");
    for _ in 0..steps {
        pair.step(&mut rng, n, &mut units);
    }
    // Drain: everything it asked for, then shutdown to the end.
    pair.a.shutdown(pair.now);
    pair.b.shutdown(pair.now);
    pair.check("final shutdown");
    for _ in 0..10_000 {
        if pair.pending.is_empty() {
            let Some(t) = pair.a.next_deadline() else {
                break;
            };
            pair.now = t;
            pair.a.tick(t);
            pair.b.tick(t);
            pair.check("final tick");
            continue;
        }
        pair.act(&mut rng, 0);
    }
}

/// Many random scenarios; `PLANNER_DIFF_CASES` sets how many.
#[test]
fn planner_matches_the_reference() {
    let cases: u64 = std::env::var("PLANNER_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1500);
    for seed in 0..cases {
        let r = std::panic::catch_unwind(|| scenario(0xd1ff_0000 + seed, 250));
        if let Err(e) = r {
            eprintln!("scenario seed {seed} failed");
            std::panic::resume_unwind(e);
        }
    }
}
