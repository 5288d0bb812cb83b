//! Planner benchmark: prints figures, not a timed test.
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo bench -p flotilla-units --bench planner [-- SIZES...]
//! ```
//!
//! For 1k, 10k and 100k units (or the sizes given), it builds a random DAG
//! with every dependency kind and a mix of unit types, then measures with a
//! simulated world that answers every action at once (a spawn is reported
//! `Spawned` at once; a `foreground-notified` main process sends `READY=1`
//! at once; a `oneshot`, a pre command and a stop command exit 0 at once; a
//! kill makes the process exit by that signal at once):
//!
//! - `graph build`: [`Graph::build`] of the unit set (names sorted, cycles
//!   checked, edges linked) — reported apart, it is not part of the plan;
//! - `full plan`: [`Planner::new`] with the target `default` (which requires
//!   every unit) and the facts until nothing is left to do and the target
//!   is active;
//! - `switch -> rescue`: [`Planner::set_target`] to a target that requires
//!   a third to a half of the units, and the facts until the others have
//!   stopped (dependents first);
//! - `switch -> default`: back, until everything runs again;
//! - `shutdown`: [`Planner::shutdown`] and the facts until every unit is
//!   `disabled`;
//! - `per fact`: each plan's time divided by the facts it took, and two
//!   single facts on a running system, each sampled on many units: a
//!   `STATUS=` message (the cheapest fact: no state moves) and the main
//!   process of a running unit dying (`Exited` by SIGKILL: failure, its
//!   hard dependents stopped, a restart scheduled), timed alone.
//!
//! Every figure is the median of several runs (the minimum in brackets).
//! With `PLANNER_BENCH_PLAN_ONLY` set, the single-fact samples are left
//! out (their degraded cascades dominate a profile of the plans).
//! The graph generator is seeded: the same graph each run.

use flotilla_units::graph::{Graph, UnitId};
use flotilla_units::planner::{Action, ExitStatus, Fact, Notify, Planner, PlannerOptions, Role};
use flotilla_units::spec::{Command, Origin, UnitSpec, UnitType};
use flotilla_units::state::UnitState;
use flotilla_units::time::Instant;
use std::collections::VecDeque;
use std::time::{Duration, Instant as Clock};

/// splitmix64: a small deterministic generator (no dependency needed).
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
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// A random DAG of `n` units plus two virtual target units.
///
/// Unit `i` depends on 1–3 units among the 200 before it (a service stack
/// is local) and, one time in ten, on one of 20 "base" units (the network,
/// the file systems); 50% of the edges are `depends-on`, 25% `depends-ms`,
/// 25% `waits-for`. Types: 60% `foreground-supervised`, 20%
/// `foreground-notified`, 10% `oneshot`, 10% `virtual`; one process unit
/// in 20 has an `exec-start-pre`. `default` (virtual) depends on every unit
/// nothing depends on, so it requires them all; `rescue` on those in the
/// first half, so it requires about a third to a half.
fn make_units(n: usize, seed: u64) -> Vec<(UnitSpec, Origin)> {
    let mut rng = Rng(seed);
    let name = |i: usize| format!("u{i:06}");
    let mut has_dependent = vec![false; n];
    let mut units = Vec::with_capacity(n + 2);
    for i in 0..n {
        let kind = match rng.below(10) {
            0..=5 => UnitType::ForegroundSupervised,
            6 | 7 => UnitType::ForegroundNotified,
            8 => UnitType::Oneshot,
            _ => UnitType::Virtual,
        };
        let mut s = UnitSpec::new(name(i), kind);
        if kind != UnitType::Virtual {
            s.exec_start = Some(Command::new(["/bin/sleep", "infinity"]));
            if rng.chance(5) {
                s.exec_start_pre = vec![Command::new(["/bin/true"])].into();
            }
        }
        let mut deps: Vec<usize> = Vec::new();
        if i > 0 {
            let k = 1 + rng.below(3);
            for _ in 0..k {
                let lo = i.saturating_sub(200);
                deps.push(lo + rng.below(i - lo));
            }
            if i > 20 && rng.chance(10) {
                deps.push(rng.below(20));
            }
        }
        deps.sort_unstable();
        deps.dedup();
        for d in deps {
            has_dependent[d] = true;
            let list = match rng.below(4) {
                0 | 1 => &mut s.depends_on,
                2 => &mut s.depends_ms,
                _ => &mut s.waits_for,
            };
            list.push(name(d));
        }
        units.push((s, Origin::unplaced(format!("{}.yaml", name(i)))));
    }
    let mut all = UnitSpec::new("zz-default", UnitType::Virtual);
    all.provides = vec!["default".into()].into();
    let mut rescue = UnitSpec::new("zz-rescue", UnitType::Virtual);
    rescue.provides = vec!["rescue".into()].into();
    for (i, _) in has_dependent.iter().enumerate().filter(|(_, &d)| !d) {
        all.depends_on.push(name(i));
        if i < n / 2 {
            rescue.depends_on.push(name(i));
        }
    }
    units.push((all, Origin::unplaced("zz-default.yaml")));
    units.push((rescue, Origin::unplaced("zz-rescue.yaml")));
    units
}

/// The simulated world: answers every action at once.
struct World {
    next_pid: i32,
    alive: Vec<bool>,
    clock: u64,
    facts: usize,
    /// Units whose status changed (state, degraded, status text).
    changed: usize,
    /// The actions to carry out (kept: its buffer is reused).
    queue: VecDeque<Action>,
}

impl World {
    fn new() -> World {
        World {
            next_pid: 2,
            alive: vec![false; 2],
            clock: 1_000_000_000,
            facts: 0,
            changed: 0,
            queue: VecDeque::new(),
        }
    }

    fn now(&mut self) -> Instant {
        self.clock += 1_000;
        Instant(self.clock)
    }

    fn feed(&mut self, p: &mut Planner, f: Fact) {
        self.facts += 1;
        let now = self.now();
        p.fact(f, now);
    }

    fn exit(&mut self, p: &mut Planner, pid: i32, status: ExitStatus) {
        if let Some(a) = self.alive.get_mut(pid as usize) {
            if *a {
                *a = false;
                self.feed(p, Fact::Exited { pid, status });
            }
        }
    }

    /// Carries out actions (and the facts they cause) until there are none.
    fn settle(&mut self, p: &mut Planner) {
        let mut queue = std::mem::take(&mut self.queue);
        p.drain_actions_into(&mut queue);
        while let Some(a) = queue.pop_front() {
            match a {
                Action::Spawn {
                    unit, role, spec, ..
                } => {
                    let pid = self.next_pid;
                    self.next_pid += 1;
                    self.alive.push(true);
                    self.feed(p, Fact::Spawned { unit, role, pid });
                    match role {
                        Role::Main => match spec.kind {
                            UnitType::ForegroundNotified => self.feed(
                                p,
                                Fact::Notify {
                                    unit,
                                    msg: Notify::Ready,
                                },
                            ),
                            UnitType::Oneshot | UnitType::BackgroundScripted => {
                                self.exit(p, pid, ExitStatus::Code(0))
                            }
                            _ => {}
                        },
                        _ => self.exit(p, pid, ExitStatus::Code(0)),
                    }
                }
                Action::Kill { whom, signal, .. } => {
                    self.exit(p, whom.pid(), ExitStatus::Signal(signal.0));
                }
                Action::CheckConditions { unit, .. } => {
                    let outcome = flotilla_units::planner::CheckOutcome::Hold;
                    self.feed(p, Fact::Checked { unit, outcome });
                }
                Action::ReadPidfile { unit, .. } | Action::GuessMainPid { unit } => {
                    self.feed(
                        p,
                        Fact::Pidfile {
                            unit,
                            result: Err("not simulated".into()),
                        },
                    );
                }
                Action::SaveTimerStamp { .. }
                | Action::Disarm { .. }
                | Action::Adopt { .. }
                | Action::AwaitEmpty { .. } => {}
                Action::Arm { unit, .. } => self.feed(
                    p,
                    Fact::Armed {
                        unit,
                        result: Ok(()),
                    },
                ),
            }
            p.drain_actions_into(&mut queue);
        }
        self.queue = queue;
        self.changed += p.take_changed().len();
    }
}

fn count(p: &Planner, f: impl Fn(UnitState) -> bool) -> usize {
    p.graph().ids().filter(|&i| f(p.state(i))).count()
}

#[derive(Default)]
struct Samples(Vec<Duration>);

impl Samples {
    fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    fn sorted(&self) -> Vec<Duration> {
        let mut v = self.0.clone();
        v.sort();
        v
    }

    fn median(&self) -> Duration {
        let v = self.sorted();
        v.get(v.len() / 2).copied().unwrap_or_default()
    }

    fn min(&self) -> Duration {
        self.sorted().first().copied().unwrap_or_default()
    }

    fn pct(&self, p: f64) -> Duration {
        let v = self.sorted();
        let i = ((v.len() as f64 - 1.0) * p).round() as usize;
        v.get(i).copied().unwrap_or_default()
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn us(d: Duration) -> String {
    format!("{:.2} us", d.as_secs_f64() * 1e6)
}

fn bench(n: usize, runs: usize) {
    let units = make_units(n, 0x5eed_0000 + n as u64);
    let edges: usize = units
        .iter()
        .map(|(s, _)| s.depends_on.len() + s.depends_ms.len() + s.waits_for.len())
        .sum();
    let mut build = Samples::default();
    let mut plan = Samples::default();
    let mut to_rescue = Samples::default();
    let mut to_default = Samples::default();
    let mut shutdown = Samples::default();
    let mut per_fact = Samples::default();
    let mut new_only = Samples::default();
    let mut cascade: Vec<usize> = Vec::new();
    let mut death_all = Samples::default();
    let mut touched: Vec<usize> = Vec::new();
    let mut status_fact = Samples::default();
    let mut death_fact = Samples::default();
    let mut facts_plan = 0;
    let mut facts_rescue = 0;
    let mut rescue_required = 0;
    for run in 0..runs {
        let input = units.clone();
        let t = Clock::now();
        let (graph, diags) = Graph::build(input);
        build.push(t.elapsed());
        assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
        assert_eq!(graph.len(), n + 2);

        // Full plan from scratch.
        let mut w = World::new();
        let t = Clock::now();
        let now = w.now();
        let mut p = Planner::new(graph, "default", now, PlannerOptions::default());
        new_only.push(t.elapsed());
        w.settle(&mut p);
        let took = t.elapsed();
        plan.push(took);
        per_fact.push(took / w.facts.max(1) as u32);
        facts_plan = w.facts;
        assert_eq!(p.target_state(), Some(UnitState::Running));
        assert_eq!(count(&p, |s| s.is_active()), n + 1, "everything but rescue");

        // Single facts on the running system (timed alone), a few runs only.
        if run < 3 && std::env::var_os("PLANNER_BENCH_PLAN_ONLY").is_none() {
            let mut rng = Rng(run as u64 + 7);
            for _ in 0..200 {
                let u = UnitId(rng.below(n) as u32);
                let Some(pid) = p.view(u).and_then(|v| v.pid) else {
                    continue;
                };
                let now = w.now();
                let f = Fact::Notify {
                    unit: u,
                    msg: Notify::Status("busy".into()),
                };
                let t = Clock::now();
                p.fact(f, now);
                status_fact.push(t.elapsed());
                p.take_changed();
                let now = w.now();
                w.changed = 0;
                let t = Clock::now();
                w.alive[pid as usize] = false;
                p.fact(
                    Fact::Exited {
                        pid,
                        status: ExitStatus::Signal(9),
                    },
                    now,
                );
                death_fact.push(t.elapsed());
                w.settle(&mut p);
                death_all.push(t.elapsed());
                // The unit and the hard dependents it took down.
                cascade.push(
                    p.graph()
                        .ids()
                        .filter(|&i| p.is_required(i) && !p.state(i).is_active())
                        .count(),
                );
                // Every unit whose status moved: also those now `degraded`
                // (any dependency, transitive, not active).
                touched.push(w.changed);
                // The restart (after its delay) and whatever it brings back.
                w.clock += 120_000_000_000;
                let now = w.now();
                p.tick(now);
                w.settle(&mut p);
            }
            assert_eq!(count(&p, |s| s.is_active()), n + 1);
        }

        // Target switch: to half, and back.
        let before = w.facts;
        let t = Clock::now();
        let now = w.now();
        p.set_target("rescue", now).expect("rescue is provided");
        w.settle(&mut p);
        to_rescue.push(t.elapsed());
        facts_rescue = w.facts - before;
        rescue_required = p.graph().ids().filter(|&i| p.is_required(i)).count();
        assert_eq!(count(&p, |s| s.is_active()), rescue_required);

        let t = Clock::now();
        let now = w.now();
        p.set_target("default", now).expect("default is provided");
        w.settle(&mut p);
        to_default.push(t.elapsed());
        assert_eq!(count(&p, |s| s.is_active()), n + 1);

        let t = Clock::now();
        let now = w.now();
        p.shutdown(now);
        w.settle(&mut p);
        shutdown.push(t.elapsed());
        assert!(p.drained());
    }
    let line = |what: &str, s: &Samples, extra: String| {
        println!(
            "  {what:<22} {:>12}  (min {:>10}){extra}",
            ms(s.median()),
            ms(s.min())
        );
    };
    println!(
        "{n} units ({} with the two target units, {edges} edges), {runs} runs, median (min):",
        n + 2
    );
    line("graph build", &build, String::new());
    line(
        "full plan",
        &plan,
        format!("  {facts_plan} facts, {}/fact", us(per_fact.median())),
    );
    line("  of which Planner::new", &new_only, String::new());
    line(
        "switch -> rescue",
        &to_rescue,
        format!("  {facts_rescue} facts; rescue requires {rescue_required}"),
    );
    line("switch -> default", &to_default, String::new());
    line("shutdown (drain)", &shutdown, String::new());
    cascade.sort_unstable();
    touched.sort_unstable();
    let nth_of = |v: &[usize], p: f64| {
        v.get(((v.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0)
    };
    let nth = |p: f64| nth_of(&cascade, p);
    println!(
        "  one fact on the running system ({} samples):",
        death_fact.0.len()
    );
    println!(
        "    STATUS=               median {:>10}  p99 {:>10}",
        us(status_fact.median()),
        us(status_fact.pct(0.99)),
    );
    println!(
        "    main process killed   median {:>10}  p99 {:>10}  max {:>10}  (units taken down: median {}, p99 {}, max {})",
        us(death_fact.median()),
        us(death_fact.pct(0.99)),
        us(death_fact.pct(1.0)),
        nth(0.5),
        nth(0.99),
        nth(1.0),
    );
    println!(
        "    ... and its cascade   median {:>10}  p99 {:>10}  max {:>10}  (every stop fact until they wait)",
        us(death_all.median()),
        us(death_all.pct(0.99)),
        us(death_all.pct(1.0)),
    );
    println!(
        "    units whose status changed (taken down or now degraded): median {}, p99 {}, max {}",
        nth_of(&touched, 0.5),
        nth_of(&touched, 0.99),
        nth_of(&touched, 1.0),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; anything numeric is a size.
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 10_000, 100_000]
    } else {
        sizes
    };
    for n in sizes {
        let runs = match n {
            0..=2_000 => 21,
            2_001..=20_000 => 9,
            _ => 5,
        };
        bench(n, runs);
    }
}
