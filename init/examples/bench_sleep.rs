//! End-to-end benchmark of the real `init` in supervisor mode: 1000 `sleep`
//! units in a 10-layer DAG, started by `set-target` through the control
//! socket, next to the floor (a bare `posix_spawn(3)` loop starting the same
//! 1000 processes); the init's memory with them running; and the restart
//! latency of a killed unit. Prints figures (docs/performance.md has them).
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo build --release -p flotilla-init --bin init --example bench_sleep
//! /work/target-bench/release/examples/bench_sleep [ROUNDS]
//! ```
//!
//! `FLOTILLA_INIT=PATH` measures another init binary; `FLOTILLA_INIT=musl`
//! the static build in the same target directory (`cargo build --release
//! --target x86_64-unknown-linux-musl -p flotilla-init --bin init`), the
//! one to deploy as PID 1. `BENCH_SLEEP_SMAPS=DIR` copies the init's
//! `/proc/PID/smaps` with the units running to `DIR/smaps-running-ROUND`.
//!
//! `BENCH_SLEEP_LOG_DIR=DIR` runs each round with `--log-dir DIR/round-N`
//! and the log writer (`flotilla-logd`, beside the init binary, or
//! `FLOTILLA_LOGD=PATH`) as a unit that both targets wait for, so that it
//! runs before the launch: the units' lines go to 1000 new files during
//! it. Point `DIR` at a slow file system to see that the launch does not
//! wait for it (`scripts/slowfs` makes one; `docs/performance.md`). Each
//! round then also launches without a log directory (and without the
//! writer), before or after (in turn), and the two launches are compared
//! round by round:
//! on a shared machine the noise between rounds is larger than what is
//! measured.
//!
//! The graph: layers 0..9 of 100 units each, `l<L>-<NN>`, type
//! `foreground-supervised` (running once its process has exec'd), `exec-start: /usr/bin/sleep
//! 3600` (the program named by its path, as in the floor loop),
//! `restart-delay: 0s`. Each unit of layer L > 0 `depends-on` two units of
//! layer L-1: the one with its own number (so every unit is required) and a
//! random other one. The virtual unit `all` depends on the 100 units of
//! layer 9; the virtual unit `idle` depends on nothing.
//!
//! Each round starts a fresh `init --units DIR --target idle --control SOCK`
//! (its console on /dev/null) and measures:
//!
//! 1. **launch**: from writing `{"op":"set-target","target":"all"}` on the
//!    control socket to the reply to a `status all` poll (one request per
//!    millisecond on a second connection) saying `running`; also the init's
//!    own figure (`analyze`: target set -> target active, its monotonic
//!    clock), and odd rounds use `set-target` with `wait` (what `initctl
//!    set-target --wait` does) until the `settled` reply instead of polling;
//! 2. **memory**: `VmRSS`, `VmHWM`, `RssAnon`, `RssFile` and open
//!    descriptors of the init, idle (before) and with the 1000 units
//!    running (read once they run, after a `status` round trip and before
//!    the `analyze` request: with no reply in flight);
//! 3. **restart latency**: for each layer-9 unit in turn (each once per
//!    round, so the back-off never grows), SIGKILL its main process and time
//!    until a `subscribe` connection reports it `running` with a new PID;
//! 4. **shutdown**: SIGTERM to the init until it has exited (every unit
//!    stopped, dependents first).
//!
//! The floor loop runs in the same rounds: 1000 x
//! `posix_spawn("/usr/bin/sleep", ["sleep", "3600"])` with
//! `POSIX_SPAWN_SETSID` (the init's children lead their own session too),
//! argv and envp prepared once, nothing else; the processes are killed and
//! reaped untimed. So does the **ideal starter** (`support/ideal.rs`): the
//! same graph started in its order with nothing but what any starter must
//! do (a `CLONE_VM` clone that calls `setsid` and `execve`, its exec
//! learned from a close-on-exec pipe through epoll; no cgroup, no output
//! captured, no state), timed from its first start to its last exec:
//! what the machine allows, which the init's and dinit's launches are
//! read against; and the same starter giving each child a cgroup of its
//! own (`mkdirat`, the directory opened `O_PATH`,
//! `clone3(CLONE_INTO_CGROUP)`, in a slice below the benchmark's own
//! cgroup): what the machine allows an init that does what this one
//! must. Every figure is the median over the rounds.
//!
//! `BENCH_DINIT=PATH` (a `dinit` binary, `dinitctl` beside it;
//! `scripts/dinit` builds them) adds dinit to each round: the same graph as
//! dinit services in a directory of their own (each unit a `process` service
//! with the same command and `depends-on` the same two; `all` an `internal`
//! service depending on layer 9, `idle` one with no dependency), a fresh
//! `dinit -u -d DIR -p SOCK -q idle` per round, its descriptions loaded
//! (`dinitctl unpin all`, which starts nothing: the init has loaded its
//! units before `set-target` too), then timed from running `dinitctl start
//! all` until it returns (it waits until `all` has started, that is every
//! service's process has exec'd); its `VmRSS` with the 1000 running, the
//! services counted with `dinitctl list`; and `dinitctl shutdown` until it
//! has exited. The init, the floor, the ideal starters and dinit run in
//! turn in each round, the one first rotating from round to round; the
//! summary gives the init's launch over dinit's, of the medians and round
//! by round.

use std::ffi::{c_char, CString};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use flotilla_units::protocol::{Envelope, Reply, Request};
use flotilla_units::state::UnitState;

#[path = "support/cpu.rs"]
mod cpu;
#[path = "support/ideal.rs"]
mod ideal;
// The init's own `clone3(CLONE_INTO_CGROUP)`, for the ideal starter with
// cgroups.
#[path = "../src/sys/procs/clone3.rs"]
#[allow(dead_code)]
mod clone3;

type BoxError = Box<dyn std::error::Error>;

const LAYERS: usize = 10;
const WIDTH: usize = 100;
const SLEEP: &str = "/usr/bin/sleep";
const MUSL: &str = "x86_64-unknown-linux-musl";

fn main() -> Result<(), BoxError> {
    let rounds: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(5);
    // The init measured: `FLOTILLA_INIT=PATH`; `FLOTILLA_INIT=musl` for the
    // static build beside this one (`--target x86_64-unknown-linux-musl`);
    // by default the host build beside this example.
    let release = std::env::current_exe()?
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or("no directory for the init binary")?;
    let (init, build) = match std::env::var_os("FLOTILLA_INIT") {
        Some(p) if p == "musl" => {
            let profile = release.file_name().ok_or("no profile directory")?;
            let target = release.parent().ok_or("no target directory")?;
            (
                target.join(MUSL).join(profile).join("init"),
                format!("cargo build --release --target {MUSL} -p flotilla-init --bin init"),
            )
        }
        Some(p) => (PathBuf::from(p), "FLOTILLA_INIT names it".to_string()),
        None => (
            release.join("init"),
            "cargo build --release -p flotilla-init --bin init".to_string(),
        ),
    };
    if !init.exists() {
        return Err(format!("{} not found: {build}", init.display()).into());
    }
    let log_dir = std::env::var_os("BENCH_SLEEP_LOG_DIR").map(PathBuf::from);
    let logd = match std::env::var_os("FLOTILLA_LOGD") {
        Some(p) => PathBuf::from(p),
        None => init.with_file_name("flotilla-logd"),
    };
    if log_dir.is_some() && !logd.exists() {
        return Err(format!(
            "{} not found: cargo build --release -p flotilla-logd (or FLOTILLA_LOGD=PATH)",
            logd.display()
        )
        .into());
    }
    let dir = tempfile::tempdir()?;
    let units = dir.path().join("units");
    write_units(&units, log_dir.as_ref().map(|_| logd.as_path()))?;
    let plain = dir.path().join("units-plain");
    if log_dir.is_some() {
        write_units(&plain, None)?;
    }
    let dinit = match std::env::var_os("BENCH_DINIT") {
        Some(p) => Some(Dinit::new(PathBuf::from(p), dir.path())?),
        None => None,
    };
    // (without, with) a log directory, per round: launch as the client
    // saw it, and on the init's own clock.
    let mut pairs: Vec<(Duration, Duration, Duration, Duration)> = Vec::new();
    // The init's CPU over the launch: (without, with).
    let mut cpus: Vec<(Duration, Duration)> = Vec::new();
    let n = LAYERS * WIDTH;
    println!(
        "{n} x {SLEEP} 3600 in {LAYERS} layers (each unit depends-on two of the layer below), {rounds} rounds, init {}",
        init.display()
    );
    match &log_dir {
        Some(d) => println!(
            "log directory {}/round-N, written by {}",
            d.display(),
            logd.display()
        ),
        None => println!("no log directory"),
    }
    if let Some(d) = &dinit {
        println!(
            "and {} ({}): the same graph as process services, `dinitctl start all` timed",
            d.bin.display(),
            d.version
        );
    }

    let mut floor = Vec::new();
    let mut ideal = Vec::new();
    let mut ideal_cpu = Vec::new();
    // The ideal starter giving each child a cgroup of its own.
    let mut ideal_cg = Vec::new();
    let mut ideal_cg_cpu = Vec::new();
    let mut ideal_children_cpu = Vec::new();
    let mut launch_poll = Vec::new();
    let mut launch_wait = Vec::new();
    let mut inside = Vec::new();
    let mut restarts = Vec::new();
    let mut shutdowns = Vec::new();
    let mut mem: Vec<(Mem, Mem)> = Vec::new();
    // The init's CPU over the launch, each round.
    let mut init_cpu = Vec::new();
    let mut init_children_cpu = Vec::new();
    let mut dinit_rounds: Vec<DinitRound> = Vec::new();
    // Per round: the init's launch (as the client saw it) over dinit's.
    let mut over_dinit: Vec<f64> = Vec::new();
    // The same for the ideal starter: what the machine allows any starter.
    let mut ideal_over_dinit: Vec<f64> = Vec::new();
    let mut ideal_cg_over_dinit: Vec<f64> = Vec::new();
    // Warm-up: page the binaries in.
    spawn_floor(20)?;
    for round in 0..rounds {
        let logs = log_dir.as_ref().map(|d| d.join(format!("round-{round}")));
        // Which goes first alternates: each launch then follows the other
        // as often, and whatever the one before leaves (exits to reap,
        // pages to reclaim) weighs on both alike.
        let plain_round = |init: &Path| match log_dir {
            Some(_) => init_round(
                init,
                dir.path(),
                &plain,
                None,
                rounds + round,
                round % 2 == 1,
            )
            .map(Some),
            None => Ok(None),
        };
        // The init, the floor, the ideal starter and dinit in each round,
        // in turn first: the order rotates from one round to the next, for
        // the same reason.
        let (mut f, mut res, mut without, mut dr) = (None, None, None, None);
        for slot in 0..5 {
            match (round + slot) % 5 {
                0 => {
                    if round % 2 == 0 {
                        without = plain_round(&init)?;
                    }
                    res = Some(init_round(
                        &init,
                        dir.path(),
                        &units,
                        logs.as_deref(),
                        round,
                        round % 2 == 1,
                    )?);
                    if round % 2 == 1 {
                        without = plain_round(&init)?;
                    }
                }
                1 => f = Some(spawn_floor(n)?),
                2 => {
                    let r = spawn_ideal(false)?;
                    ideal.push(r.took);
                    ideal_cpu.push(r.own);
                    ideal_children_cpu.push(r.kids);
                }
                3 => {
                    let r = spawn_ideal(true)?;
                    ideal_cg.push(r.took);
                    ideal_cg_cpu.push(r.own);
                }
                _ => {
                    if let Some(d) = &dinit {
                        dr = Some(dinit_round(d, dir.path(), round)?);
                    }
                }
            }
        }
        let (f, r) = match (f, res) {
            (Some(f), Some(r)) => (f, r),
            _ => return Err("a round without the floor or the init".into()),
        };
        floor.push(f);
        if let Some(w) = &without {
            pairs.push((w.launch, r.launch, w.inside, r.inside));
            cpus.push((w.cpu, r.cpu));
            println!(
                "  round {round} without a log directory: init {:.0} ms (init's own clock {:.0} ms), its CPU {:.0} ms; with: its CPU {:.0} ms",
                ms(w.launch),
                ms(w.inside),
                ms(w.cpu),
                ms(r.cpu)
            );
        }
        if round % 2 == 1 {
            launch_wait.push(r.launch);
        } else {
            launch_poll.push(r.launch);
        }
        inside.push(r.inside);
        restarts.extend(r.restarts);
        shutdowns.push(r.shutdown);
        mem.push((r.idle, r.running));
        init_cpu.push(r.cpu);
        init_children_cpu.push(r.children_cpu);
        let dinit_line = match &dr {
            Some(d) => {
                over_dinit.push(r.launch.as_secs_f64() / d.launch.as_secs_f64());
                if let Some(i) = ideal.last() {
                    ideal_over_dinit.push(i.as_secs_f64() / d.launch.as_secs_f64());
                }
                if let Some(i) = ideal_cg.last() {
                    ideal_cg_over_dinit.push(i.as_secs_f64() / d.launch.as_secs_f64());
                }
                format!(
                    "; dinit {:.0} ms, RSS {} KiB running",
                    ms(d.launch),
                    d.running.rss_kib
                )
            }
            None => String::new(),
        };
        dinit_rounds.extend(dr);
        println!(
            "  round {round}: floor {:.0} ms, ideal {:.0} ms (with cgroups {:.0} ms), init {:.0} ms ({}; init's own clock {:.0} ms), RSS {} KiB running, shutdown {:.0} ms{dinit_line}",
            ms(f),
            ideal.last().map_or(0.0, |d| ms(*d)),
            ideal_cg.last().map_or(0.0, |d| ms(*d)),
            ms(r.launch),
            if round % 2 == 1 { "set-target --wait" } else { "status polled" },
            ms(r.inside),
            r.running.rss_kib,
            ms(r.shutdown),
        );
    }
    let fl = median(&floor);
    let lp = median(&launch_poll);
    let dl = (!dinit_rounds.is_empty())
        .then(|| median(&dinit_rounds.iter().map(|d| d.launch).collect::<Vec<_>>()));
    // "N.NNx the floor", and ", N.NNx dinit" with dinit measured.
    let ratios = |d: Duration| {
        let mut r = format!("{:.2}x the floor", d.as_secs_f64() / fl.as_secs_f64());
        if let Some(dl) = dl {
            r.push_str(&format!(
                ", {:.2}x dinit",
                d.as_secs_f64() / dl.as_secs_f64()
            ));
        }
        r
    };
    println!();
    println!("launch (set-target -> all {n} running), median of {rounds} rounds:");
    println!("  floor (posix_spawn loop)       {:>8.1} ms", ms(fl));
    let il = median(&ideal);
    println!(
        "  ideal starter (support/ideal.rs){:>7.1} ms   {}",
        ms(il),
        ratios(il)
    );
    let icl = median(&ideal_cg);
    println!(
        "  the same, a cgroup per child    {:>8.1} ms   {}",
        ms(icl),
        ratios(icl)
    );
    println!(
        "  init, status polled            {:>8.1} ms   {}",
        ms(lp),
        ratios(lp)
    );
    if !launch_wait.is_empty() {
        let lw = median(&launch_wait);
        println!(
            "  init, set-target --wait        {:>8.1} ms   {}",
            ms(lw),
            ratios(lw)
        );
    }
    println!(
        "  init's own clock (analyze)     {:>8.1} ms   {}",
        ms(median(&inside)),
        ratios(median(&inside))
    );
    if let (Some(dl), Some(d)) = (dl, &dinit) {
        println!(
            "  dinit, dinitctl start all      {:>8.1} ms   {:.2}x the floor ({})",
            ms(dl),
            dl.as_secs_f64() / fl.as_secs_f64(),
            d.version
        );
        for (who, ratios) in [
            ("init (as the client saw it)", &mut over_dinit),
            ("the ideal starter", &mut ideal_over_dinit),
            ("the ideal starter with cgroups", &mut ideal_cg_over_dinit),
        ] {
            ratios.sort_by(f64::total_cmp);
            println!(
                "  {who} / dinit, per round: median {:.2} (from {:.2} to {:.2})",
                ratios.get(ratios.len() / 2).copied().unwrap_or(0.0),
                ratios.first().copied().unwrap_or(0.0),
                ratios.last().copied().unwrap_or(0.0)
            );
        }
        println!(
            "  CPU over the launch: init {:.0} ms, dinit {:.0} ms; dinit's load of the descriptions (dinitctl unpin all, untimed above) {:.1} ms (medians)",
            ms(median(&init_cpu)),
            ms(median(
                &dinit_rounds.iter().map(|d| d.cpu).collect::<Vec<_>>()
            )),
            ms(median(
                &dinit_rounds.iter().map(|d| d.load).collect::<Vec<_>>()
            ))
        );
        // A launch ends no earlier than all the CPU work it needs spread
        // over every core: the children's own start (their `execve`, the
        // program's loader) is most of it, and the same for both inits.
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let kids = median(&init_children_cpu);
        let dinit_kids = median(
            &dinit_rounds
                .iter()
                .map(|d| d.children_cpu)
                .collect::<Vec<_>>(),
        );
        let bound = |own: Duration, kids: Duration| (own + kids) / cores as u32;
        let init_bound = bound(median(&init_cpu), kids);
        let dinit_bound = bound(
            median(&dinit_rounds.iter().map(|d| d.cpu).collect::<Vec<_>>()),
            dinit_kids,
        );
        println!(
            "  the children's CPU from clone to the launch's end: init's {:.0} ms, dinit's {:.0} ms (medians); \
             so on {cores} cores no launch ends before (own + children's CPU) / {cores}: \
             init {:.0} ms ({:.2}x dinit's launch), dinit {:.0} ms",
            ms(kids),
            ms(dinit_kids),
            ms(init_bound),
            init_bound.as_secs_f64() / dl.as_secs_f64(),
            ms(dinit_bound),
        );
        let ideal_bound = bound(median(&ideal_cpu), median(&ideal_children_cpu));
        println!(
            "  the ideal starter the same way: its CPU {:.0} ms, its children's {:.0} ms, its bound {:.0} ms ({:.2}x dinit's launch)",
            ms(median(&ideal_cpu)),
            ms(median(&ideal_children_cpu)),
            ms(ideal_bound),
            ideal_bound.as_secs_f64() / dl.as_secs_f64(),
        );
        println!(
            "  the ideal starter with a cgroup per child: its CPU {:.0} ms (median)",
            ms(median(&ideal_cg_cpu)),
        );
    }
    let pick = |f: fn(&(Mem, Mem)) -> u64| {
        let mut v: Vec<u64> = mem.iter().map(f).collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    println!("init memory, median of {rounds} rounds:");
    println!(
        "  idle (units loaded, none running): VmRSS {} KiB, RssAnon {} KiB, RssFile {} KiB, {} fds",
        pick(|m| m.0.rss_kib),
        pick(|m| m.0.anon_kib),
        pick(|m| m.0.file_kib),
        pick(|m| m.0.fds)
    );
    println!(
        "  {n} units running:               VmRSS {} KiB, VmHWM {} KiB, RssAnon {} KiB, RssFile {} KiB, {} fds",
        pick(|m| m.1.rss_kib),
        pick(|m| m.1.hwm_kib),
        pick(|m| m.1.anon_kib),
        pick(|m| m.1.file_kib),
        pick(|m| m.1.fds)
    );
    restarts.sort();
    let pct = |p: f64| {
        restarts
            .get(((restarts.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or_default()
    };
    println!(
        "restart latency (SIGKILL -> subscribe reports running, new PID), {} samples: median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        restarts.len(),
        ms(pct(0.5)),
        ms(pct(0.9)),
        ms(pct(0.99)),
        ms(pct(1.0))
    );
    println!(
        "shutdown (SIGTERM -> init exited, {n} units stopped): median {:.1} ms",
        ms(median(&shutdowns))
    );
    if !dinit_rounds.is_empty() {
        let pick = |f: fn(&DinitRound) -> u64| {
            let mut v: Vec<u64> = dinit_rounds.iter().map(f).collect();
            v.sort_unstable();
            v.get(v.len() / 2).copied().unwrap_or(0)
        };
        println!("dinit memory, median of {rounds} rounds:");
        println!(
            "  idle (nothing loaded): VmRSS {} KiB; {n} running: VmRSS {} KiB, VmHWM {} KiB, RssAnon {} KiB, RssFile {} KiB, {} fds",
            pick(|d| d.idle.rss_kib),
            pick(|d| d.running.rss_kib),
            pick(|d| d.running.hwm_kib),
            pick(|d| d.running.anon_kib),
            pick(|d| d.running.file_kib),
            pick(|d| d.running.fds)
        );
        println!(
            "dinit shutdown (dinitctl shutdown -> dinit exited, {n} services stopped): median {:.1} ms",
            ms(median(
                &dinit_rounds.iter().map(|d| d.shutdown).collect::<Vec<_>>()
            ))
        );
    }
    if !pairs.is_empty() {
        let pick = |f: fn(&(Duration, Duration, Duration, Duration)) -> Duration| {
            median(&pairs.iter().map(f).collect::<Vec<_>>())
        };
        let mut ratios: Vec<f64> = pairs
            .iter()
            .map(|p| p.3.as_secs_f64() / p.2.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        println!("launch with the log directory against without, the same round each, median of {rounds}:");
        println!(
            "  without: {:.1} ms ({:.1} ms on the init's clock); with: {:.1} ms ({:.1} ms)",
            ms(pick(|p| p.0)),
            ms(pick(|p| p.2)),
            ms(pick(|p| p.1)),
            ms(pick(|p| p.3))
        );
        println!(
            "  the init's CPU over the launch: without {:.0} ms, with {:.0} ms (medians)",
            ms(median(&cpus.iter().map(|c| c.0).collect::<Vec<_>>())),
            ms(median(&cpus.iter().map(|c| c.1).collect::<Vec<_>>()))
        );
        println!(
            "  with / without, per round on the init's clock: median {:.3} (from {:.3} to {:.3})",
            ratios.get(ratios.len() / 2).copied().unwrap_or(0.0),
            ratios.first().copied().unwrap_or(0.0),
            ratios.last().copied().unwrap_or(0.0)
        );
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn name(layer: usize, i: usize) -> String {
    format!("l{layer}-{i:02}")
}

/// The unit files; with `logd`, the log writer's unit too, which both
/// targets wait for.
/// The graph, layer by layer: each unit's name and, above layer 0, the two
/// units of the layer below it depends on (the one with its own number and a
/// random other one); the same on every run.
fn graph() -> Vec<(String, Option<[String; 2]>)> {
    let mut seed = 0x5eed_u64;
    let mut rand = |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) % n as u64) as usize
    };
    let mut units = Vec::with_capacity(LAYERS * WIDTH);
    for layer in 0..LAYERS {
        for i in 0..WIDTH {
            let providers = (layer > 0).then(|| {
                let mut other = rand(WIDTH - 1);
                if other >= i {
                    other += 1;
                }
                [name(layer - 1, i), name(layer - 1, other)]
            });
            units.push((name(layer, i), providers));
        }
    }
    units
}

fn write_units(dir: &Path, logd: Option<&Path>) -> Result<(), BoxError> {
    std::fs::create_dir_all(dir)?;
    for (unit, providers) in graph() {
        let mut text = format!("unit: {unit}\nexec-start: {SLEEP} 3600\nrestart-delay: 0s\n");
        if let Some([own, other]) = providers {
            text.push_str(&format!("depends-on: [{own}, {other}]\n"));
        }
        std::fs::write(dir.join(format!("{unit}.yaml")), text)?;
    }
    let top: Vec<String> = (0..WIDTH).map(|i| name(LAYERS - 1, i)).collect();
    let writer = match logd {
        Some(p) => {
            std::fs::write(
                dir.join("flotilla-logd.yaml"),
                format!(
                    "unit: flotilla-logd\nprovides: log-writer\nexec-start: {}\nrestart: always\n",
                    p.display()
                ),
            )?;
            "waits-for: log-writer\n"
        }
        None => "",
    };
    std::fs::write(
        dir.join("all.yaml"),
        format!(
            "unit: all\ntype: virtual\ndepends-on: [{}]\n{writer}",
            top.join(", ")
        ),
    )?;
    std::fs::write(
        dir.join("idle.yaml"),
        format!("unit: idle\ntype: virtual\n{writer}"),
    )?;
    Ok(())
}

/// `sleep 3600` as `execve` takes it, with this process's environment:
/// the strings, and the arrays pointing into them.
struct SleepExec {
    path: CString,
    _strings: Vec<CString>,
    argv: Vec<*mut c_char>,
    envp: Vec<*mut c_char>,
}

fn sleep_exec() -> Result<SleepExec, BoxError> {
    let path = CString::new(SLEEP)?;
    let args = [CString::new("sleep")?, CString::new("3600")?];
    let env: Vec<CString> = std::env::vars_os()
        .filter_map(|(k, v)| {
            let mut kv = k.into_encoded_bytes();
            kv.push(b'=');
            kv.extend(v.into_encoded_bytes());
            CString::new(kv).ok()
        })
        .collect();
    let mut argv: Vec<*mut c_char> = args.iter().map(|c| c.as_ptr().cast_mut()).collect();
    argv.push(std::ptr::null_mut());
    let mut envp: Vec<*mut c_char> = env.iter().map(|c| c.as_ptr().cast_mut()).collect();
    envp.push(std::ptr::null_mut());
    // The arrays point into the strings' heap buffers, which do not move
    // when the `CString`s themselves do.
    let strings = args.into_iter().chain(env).collect();
    Ok(SleepExec {
        path,
        _strings: strings,
        argv,
        envp,
    })
}

/// Kills and reaps the benchmark's own children (untimed).
fn kill_all(pids: &[libc::pid_t]) {
    for &pid in pids {
        // SAFETY: kill(2) and waitpid(2) on our own children.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    for &pid in pids {
        let mut status = 0;
        // SAFETY: as above.
        unsafe {
            libc::waitpid(pid, &mut status, 0);
        }
    }
}

/// The ideal starter (`support/ideal.rs`) over the graph.
fn spawn_ideal(cgroups: bool) -> Result<IdealRound, BoxError> {
    let units = graph();
    let index: std::collections::HashMap<&str, usize> = units
        .iter()
        .enumerate()
        .map(|(i, (u, _))| (u.as_str(), i))
        .collect();
    let providers: Vec<Vec<usize>> = units
        .iter()
        .map(|(_, ps)| {
            ps.iter()
                .flatten()
                .filter_map(|p| index.get(p.as_str()).copied())
                .collect()
        })
        .collect();
    let e = sleep_exec()?;
    let mut cg = if cgroups {
        Some(ideal::Cgroups::make(&format!(
            "bench-ideal-{}.slice",
            std::process::id()
        ))?)
    } else {
        None
    };
    // The ideal starter runs on this thread.
    let own0 = cpu::rusage(libc::RUSAGE_THREAD);
    let (took, pids) = ideal::launch(
        &providers,
        e.path.as_ptr(),
        e.argv.as_ptr(),
        e.envp.as_ptr(),
        cg.as_mut(),
    )?;
    let own = cpu::rusage(libc::RUSAGE_THREAD).saturating_sub(own0);
    let kids = cpu::children_run_time(std::process::id())?;
    kill_all(&pids);
    drop(cg);
    Ok(IdealRound { took, own, kids })
}

/// The ideal starter's launch, its own CPU and its children's.
struct IdealRound {
    took: Duration,
    own: Duration,
    kids: Duration,
}

/// The floor: `n` bare `posix_spawn(3)` calls with `POSIX_SPAWN_SETSID`.
fn spawn_floor(n: usize) -> Result<Duration, BoxError> {
    let SleepExec {
        path, argv, envp, ..
    } = &sleep_exec()?;
    let mut pids = Vec::with_capacity(n);
    let start = Instant::now();
    for _ in 0..n {
        let mut pid: libc::pid_t = 0;
        // SAFETY: valid NUL-terminated path and NULL-terminated arrays that
        // outlive the call; the attributes are initialised before use and
        // destroyed once; NULL file actions are allowed.
        let r = unsafe {
            let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
            libc::posix_spawnattr_init(&mut attr);
            libc::posix_spawnattr_setflags(&mut attr, libc::POSIX_SPAWN_SETSID);
            let r = libc::posix_spawn(
                &mut pid,
                path.as_ptr(),
                std::ptr::null(),
                &attr,
                argv.as_ptr(),
                envp.as_ptr(),
            );
            libc::posix_spawnattr_destroy(&mut attr);
            r
        };
        if r != 0 {
            return Err(format!("posix_spawn: error {r}").into());
        }
        pids.push(pid);
    }
    let took = start.elapsed();
    kill_all(&pids);
    Ok(took)
}

/// A control connection: one JSON request per line, replies per line.
struct Conn {
    w: UnixStream,
    r: BufReader<UnixStream>,
    line: String,
}

impl Conn {
    fn open(sock: &Path) -> Result<Conn, BoxError> {
        let w = UnixStream::connect(sock)?;
        let r = BufReader::new(w.try_clone()?);
        Ok(Conn {
            w,
            r,
            line: String::new(),
        })
    }

    fn send(&mut self, req: Request) -> Result<(), BoxError> {
        let mut line = serde_json::to_vec(&Envelope::new(req))?;
        line.push(b'\n');
        self.w.write_all(&line)?;
        Ok(())
    }

    fn recv(&mut self) -> Result<Reply, BoxError> {
        self.line.clear();
        if self.r.read_line(&mut self.line)? == 0 {
            return Err("control connection closed".into());
        }
        Ok(serde_json::from_str(&self.line)?)
    }

    fn ask(&mut self, req: Request) -> Result<Reply, BoxError> {
        self.send(req)?;
        self.recv()
    }

    fn unit(&mut self, name: &str) -> Result<(UnitState, Option<i32>), BoxError> {
        match self.ask(Request::Status {
            name: Some(name.to_string()),
        })? {
            Reply::Unit(s) => Ok((s.state, s.pid)),
            other => Err(format!("status {name}: {other:?}").into()),
        }
    }
}

/// What keeps `all` from running: the units' states counted, and the first
/// few units not running.
fn stuck(conn: &mut Conn) -> Result<String, BoxError> {
    let s = match conn.ask(Request::Status { name: None })? {
        Reply::Status(s) => s,
        other => return Err(format!("status: {other:?}").into()),
    };
    let mut counts: Vec<(String, usize)> = Vec::new();
    for u in &s.units {
        let state = format!("{:?}", u.state);
        match counts.iter_mut().find(|(k, _)| *k == state) {
            Some((_, c)) => *c += 1,
            None => counts.push((state, 1)),
        }
    }
    let first: Vec<String> = s
        .units
        .iter()
        .filter(|u| u.state != UnitState::Running)
        .take(5)
        .map(|u| {
            format!(
                "{} {:?} ({}; blocked by {:?}; {} restarts)",
                u.unit, u.state, u.status, u.blocked_by, u.restarts
            )
        })
        .collect();
    Ok(format!(
        "target {} {:?}, units by state {counts:?}; not running: {}",
        s.target,
        s.target_state,
        first.join(", ")
    ))
}

#[derive(Debug, Clone, Copy, Default)]
struct Mem {
    rss_kib: u64,
    hwm_kib: u64,
    anon_kib: u64,
    file_kib: u64,
    fds: u64,
}

fn mem_of(pid: u32) -> Result<Mem, BoxError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |key: &str| -> u64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))?.count() as u64;
    Ok(Mem {
        rss_kib: field("VmRSS:"),
        hwm_kib: field("VmHWM:"),
        anon_kib: field("RssAnon:"),
        file_kib: field("RssFile:"),
        fds,
    })
}

struct RoundResult {
    launch: Duration,
    inside: Duration,
    /// The init's own CPU time (user + system) over the launch.
    cpu: Duration,
    /// Its children's, from their clone until the launch's end.
    children_cpu: Duration,
    idle: Mem,
    running: Mem,
    restarts: Vec<Duration>,
    shutdown: Duration,
}

/// Stops the init at the end of a round, also when the round failed.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn init_round(
    init: &Path,
    dir: &Path,
    units: &Path,
    log_dir: Option<&Path>,
    round: usize,
    wait: bool,
) -> Result<RoundResult, BoxError> {
    let sock = dir.join(format!("control-{round}.sock"));
    let mut cmd = Command::new(init);
    if let Some(d) = log_dir {
        cmd.arg("--log-dir").arg(d);
    }
    let child = cmd
        .arg("--units")
        .arg(units)
        .args(["--target", "idle", "--control"])
        .arg(&sock)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let mut guard = Guard(child);
    let pid = guard.0.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut ctl = loop {
        match Conn::open(&sock) {
            Ok(c) => break c,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("init did not open {}: {e}", sock.display()).into()),
        }
    };
    if ctl.unit("idle")?.0 != UnitState::Running {
        return Err("target idle is not running".into());
    }
    // The log writer connected: it runs before the launch, as in a boot.
    while log_dir.is_some() {
        let connected = match ctl.ask(Request::Status { name: None })? {
            Reply::Status(s) => s.log_writer.is_some_and(|l| l.connected),
            other => return Err(format!("status: {other:?}").into()),
        };
        if connected {
            break;
        }
        if Instant::now() > deadline {
            return Err("the log writer never connected".into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let idle = mem_of(pid)?;

    // Launch.
    let mut poll = Conn::open(&sock)?;
    let cpu0 = cpu::cpu_time(pid)?;
    let start = Instant::now();
    ctl.send(Request::SetTarget {
        target: "all".into(),
        wait,
        isolate: false,
    })?;
    let launch = if wait {
        loop {
            match ctl.recv()? {
                Reply::Progress(_) => {}
                Reply::Settled { ok: true, .. } => break start.elapsed(),
                other => return Err(format!("set-target --wait: {other:?}").into()),
            }
        }
    } else {
        match ctl.recv()? {
            Reply::Accepted { .. } => {}
            other => return Err(format!("set-target: {other:?}").into()),
        }
        loop {
            if poll.unit("all")?.0 == UnitState::Running {
                break start.elapsed();
            }
            if start.elapsed() > Duration::from_secs(120) {
                return Err(
                    format!("all did not start within 120 s: {}", stuck(&mut poll)?).into(),
                );
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    // Memory first: the `analyze` reply below is about 270 KB of JSON for
    // 1000 units, and the init may still be sending it (and so holding it)
    // when the client has read it. The same holds for the last `progress`
    // replies of `set-target --wait`: one `status` round trip first, so
    // that the init is between requests.
    let cpu = cpu::cpu_time(pid)?.saturating_sub(cpu0);
    let children_cpu = cpu::children_run_time(pid)?;
    poll.unit("all")?;
    let running = mem_of(pid)?;
    if let Some(dir) = std::env::var_os("BENCH_SLEEP_SMAPS") {
        std::fs::copy(
            format!("/proc/{pid}/smaps"),
            Path::new(&dir).join(format!("smaps-running-{round}")),
        )?;
    }
    let inside = match poll.ask(Request::Analyze)? {
        Reply::Analyze(a) => {
            let active = a.target_active_ms.ok_or("target never active")?;
            Duration::from_millis(active.saturating_sub(a.target_set_ms))
        }
        other => return Err(format!("analyze: {other:?}").into()),
    };

    // Restart latency: each layer-9 unit once.
    let mut sub = Conn::open(&sock)?;
    sub.send(Request::Subscribe)?;
    let mut restarts = Vec::with_capacity(WIDTH);
    for i in 0..WIDTH {
        let unit = name(LAYERS - 1, i);
        let (state, pid) = poll.unit(&unit)?;
        let old = match (state, pid) {
            (UnitState::Running, Some(p)) => p,
            _ => return Err(format!("{unit} is {state:?} before the kill").into()),
        };
        let t = Instant::now();
        // SAFETY: kill(2) of the unit's main process (a child of the init).
        if unsafe { libc::kill(old, libc::SIGKILL) } != 0 {
            return Err(format!("kill {old}: {}", std::io::Error::last_os_error()).into());
        }
        loop {
            match sub.recv()? {
                Reply::Changed(s)
                    if s.unit == unit
                        && s.state == UnitState::Running
                        && s.pid.is_some_and(|p| p != old) =>
                {
                    restarts.push(t.elapsed());
                    break;
                }
                _ => {}
            }
            if t.elapsed() > Duration::from_secs(10) {
                return Err(format!("{unit} did not restart within 10 s").into());
            }
        }
        // Let `all` come back before the next kill.
        while poll.unit("all")?.0 != UnitState::Running {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    drop(sub);
    drop(poll);
    drop(ctl);

    // Shutdown.
    let t = Instant::now();
    // SAFETY: kill(2) of our own child.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGTERM);
    }
    let status = guard.0.wait()?;
    let shutdown = t.elapsed();
    if !status.success() {
        return Err(format!("init exited with {status}").into());
    }
    Ok(RoundResult {
        launch,
        inside,
        cpu,
        children_cpu,
        idle,
        running,
        restarts,
        shutdown,
    })
}

/// dinit, measured beside the init when `BENCH_DINIT` names its binary.
struct Dinit {
    bin: PathBuf,
    /// `dinitctl`, beside `dinit`.
    ctl: PathBuf,
    /// The first line of `dinit --version`.
    version: String,
    /// The service directory: the same graph as the units.
    services: PathBuf,
}

struct DinitRound {
    /// `dinitctl unpin all`: the 1001 descriptions `all` needs loaded, none
    /// started.
    load: Duration,
    /// `dinitctl start all` until it returns: all 1000 started.
    launch: Duration,
    /// dinit's CPU time (user + system) over the launch.
    cpu: Duration,
    /// Its children's, from their clone until the launch's end.
    children_cpu: Duration,
    idle: Mem,
    running: Mem,
    /// `dinitctl shutdown` until dinit has exited.
    shutdown: Duration,
}

impl Dinit {
    fn new(bin: PathBuf, dir: &Path) -> Result<Dinit, BoxError> {
        let ctl = bin.with_file_name("dinitctl");
        if !bin.exists() || !ctl.exists() {
            return Err(format!(
                "{} or dinitctl beside it not found: scripts/dinit builds them",
                bin.display()
            )
            .into());
        }
        let out = Command::new(&bin).arg("--version").output()?;
        let version = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("dinit, version unknown")
            .trim_end_matches('.')
            .to_string();
        let services = dir.join("dinit.d");
        write_dinit_services(&services)?;
        Ok(Dinit {
            bin,
            ctl,
            version,
            services,
        })
    }

    /// `dinitctl --quiet -p SOCK ARGS`, its output discarded.
    fn ctl(&self, sock: &Path, args: &[&str]) -> Result<bool, BoxError> {
        Ok(Command::new(&self.ctl)
            .arg("--quiet")
            .arg("-p")
            .arg(sock)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?
            .success())
    }
}

/// The units' graph as dinit services: each unit a `process` service
/// running the same command, with `depends-on` the same two services;
/// `all` (internal) depends on the layer-9 services, `idle` on nothing.
fn write_dinit_services(dir: &Path) -> Result<(), BoxError> {
    std::fs::create_dir_all(dir)?;
    for (unit, providers) in graph() {
        let mut text = format!("type = process\ncommand = {SLEEP} 3600\nrestart = yes\n");
        for p in providers.iter().flatten() {
            text.push_str(&format!("depends-on = {p}\n"));
        }
        std::fs::write(dir.join(unit), text)?;
    }
    let mut all = "type = internal\n".to_string();
    for i in 0..WIDTH {
        all.push_str(&format!("depends-on = {}\n", name(LAYERS - 1, i)));
    }
    std::fs::write(dir.join("all"), all)?;
    std::fs::write(dir.join("idle"), "type = internal\n")?;
    Ok(())
}

/// Polls `done` every millisecond until it says yes or `limit` has passed.
fn poll_until(
    limit: Duration,
    what: &str,
    mut done: impl FnMut() -> Result<bool, BoxError>,
) -> Result<(), BoxError> {
    let deadline = Instant::now() + limit;
    while !done()? {
        if Instant::now() > deadline {
            return Err(format!("{what}: not within {limit:?}").into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// Stops dinit at the end of a round, also when the round failed (SIGTERM:
/// it stops its services and exits; SIGKILL if it has not within 10 s),
/// then kills any of its services' processes still there.
struct DinitGuard {
    child: Child,
    /// The services' main processes, from `dinitctl list`.
    pids: Vec<i32>,
}

impl Drop for DinitGuard {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            // SAFETY: kill(2) of our own child, not yet reaped.
            unsafe {
                libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
            }
            let exited = poll_until(Duration::from_secs(10), "dinit exit", || {
                Ok(self.child.try_wait()?.is_some())
            });
            if exited.is_err() {
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
        let sleep_cmd = format!("{SLEEP}\x003600\x00");
        for &pid in &self.pids {
            // Only if that PID is still one of our `sleep`s (not a zombie).
            let ours = std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c == sleep_cmd);
            if ours {
                // SAFETY: kill(2) of a process the benchmark had dinit start.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
}

fn dinit_round(d: &Dinit, dir: &Path, round: usize) -> Result<DinitRound, BoxError> {
    let sock = dir.join(format!("dinit-{round}.sock"));
    let child = Command::new(&d.bin)
        .arg("-u")
        .arg("-d")
        .arg(&d.services)
        .arg("-p")
        .arg(&sock)
        .args(["-q", "idle"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let mut guard = DinitGuard {
        child,
        pids: Vec::new(),
    };
    let pid = guard.child.id();
    poll_until(Duration::from_secs(30), "dinit: idle started", || {
        if guard.child.try_wait()?.is_some() {
            return Err("dinit exited at start".into());
        }
        Ok(sock.exists() && d.ctl(&sock, &["is-started", "idle"])?)
    })?;
    let idle = mem_of(pid)?;
    // Loaded first, as the init loads its units before `set-target`:
    // dinit loads a service's description (and its dependencies') when it
    // is first named; `unpin` names it and starts nothing.
    let t = Instant::now();
    if !d.ctl(&sock, &["unpin", "all"])? {
        return Err("dinitctl unpin all failed".into());
    }
    let load = t.elapsed();

    // Launch: `dinitctl start` returns once `all` has started.
    let cpu0 = cpu::cpu_time(pid)?;
    let start = Instant::now();
    if !d.ctl(&sock, &["start", "all"])? {
        return Err("dinitctl start all failed".into());
    }
    let launch = start.elapsed();
    let cpu = cpu::cpu_time(pid)?.saturating_sub(cpu0);
    let children_cpu = cpu::children_run_time(pid)?;
    let running = mem_of(pid)?;

    // Every service started, each with its process.
    let out = Command::new(&d.ctl)
        .arg("-p")
        .arg(&sock)
        .arg("list")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()?;
    guard.pids = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains("{+}"))
        .filter_map(|l| l.split_once("(pid: "))
        .filter_map(|(_, p)| p.trim_end_matches(')').parse().ok())
        .collect();
    if guard.pids.len() != LAYERS * WIDTH {
        return Err(format!(
            "dinit: {} services started with a process, not {}",
            guard.pids.len(),
            LAYERS * WIDTH
        )
        .into());
    }

    // Shutdown.
    let t = Instant::now();
    if !d.ctl(&sock, &["shutdown"])? {
        return Err("dinitctl shutdown failed".into());
    }
    poll_until(Duration::from_secs(30), "dinit exit", || {
        Ok(guard.child.try_wait()?.is_some())
    })?;
    let shutdown = t.elapsed();
    Ok(DinitRound {
        load,
        launch,
        cpu,
        children_cpu,
        idle,
        running,
        shutdown,
    })
}
