//! What a service context costs a spawn: starts N (default 300)
//! `/bin/sleep 60` through [`RealSys::spawn`] with stdout and stderr on a
//! pipe, as units run, once per context below, kills and reaps each batch,
//! and prints the timings (best and median round, per spawn, and the
//! spawner's CPU time: the init's loop waits that long, since the child is
//! a `CLONE_VFORK` child).
//!
//! ```text
//! cargo run --release --example context_bench [N] [ROUNDS]
//! ```
//!
//! Needs root, and a writable cgroup2 for the cgroup variants (as PID 1 or
//! on a host with a unified hierarchy; this machine's hybrid one has
//! `/sys/fs/cgroup/unified`). Variants:
//! - `no context`: the plain spawn, the reference;
//! - `cgroup`: the child joins the unit's cgroup (writes `0` to its
//!   `cgroup.procs`) before `execve`;
//! - `limits`: `LimitNOFILE=`, `UMask=`, `Nice=`, `OOMScoreAdjust=`;
//! - `seccomp`: `SystemCallFilter=@system-service` and the other filters
//!   of Debian's `redis-server.service`;
//! - `directory`: a `RuntimeDirectory=`, which the child makes after the
//!   spawn has handed it off (a fork of the init's memory with
//!   `CLONE_PARENT`, so that the init does not wait on a disk with it);
//! - `redis sandbox`: every key of that unit flotilla has (its runtime
//!   directory, mount namespace with `ProtectSystem=strict`, private
//!   `/tmp` and `/dev`, the kernel keys, capabilities, filters) and the
//!   cgroup.
//!
//! It also times [`prepare`], done once per unit start, and, with spawns
//! 20 ms apart (as units start in real life, not back to back), the two
//! ways into a cgroup: `CLONE_INTO_CGROUP` (the default) and the child
//! writing `cgroup.procs` (the fall-back for kernels before 5.7), whose
//! task migration waits for an RCU grace period unless another one just
//! happened.

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use flotilla_init::outpipe::{OutPipe, Stream};
use flotilla_init::sys::cgroup::Cgroups;
use flotilla_init::sys::context::{prepare, ChildContext, Host, Params};
use flotilla_init::sys::dirs::PrivateTmp;
use flotilla_init::sys::real::RealSys;
use flotilla_init::sys::{Env, Pid, SpawnRequest, Stdio, Sys};
use flotilla_units::context::{Key, ServiceContext};

#[path = "support/cpu.rs"]
mod cpu;

type BoxError = Box<dyn std::error::Error>;

/// The context of Debian's own `redis-server.service` (the redis-server
/// package installs it), with a runtime directory of the benchmark's own
/// and `LimitNOFILE=` lowered from 65535 (raising the hard limit needs
/// `CAP_SYS_RESOURCE`, which the machines this runs on may not give root).
fn redis() -> Result<ServiceContext, BoxError> {
    let text = std::fs::read_to_string("/lib/systemd/system/redis-server.service")?;
    let unit = flotilla_systemd::parse(&text);
    let mut c = ServiceContext::from_service_options(&unit.options)?;
    c.set(Key::RuntimeDirectory, "")?;
    c.set(Key::RuntimeDirectory, "flotilla-bench-redis")?;
    c.set(
        Key::from_name("LimitNOFILE").ok_or("no LimitNOFILE")?,
        "16384",
    )?;
    Ok(c)
}

/// The system call keys of `redis` alone.
fn seccomp_only(redis: &ServiceContext) -> ServiceContext {
    let r = &redis.sandbox;
    let mut c = ServiceContext::default();
    c.sandbox.lock_personality = r.lock_personality;
    c.sandbox.memory_deny_write_execute = r.memory_deny_write_execute;
    c.sandbox.restrict_address_families = r.restrict_address_families.clone();
    c.sandbox.restrict_namespaces = r.restrict_namespaces;
    c.sandbox.restrict_suid_sgid = r.restrict_suid_sgid;
    c.sandbox.system_call_architectures = r.system_call_architectures.clone();
    c.sandbox.system_call_filter = r.system_call_filter.clone();
    c
}

fn context(pairs: &[(&str, &str)]) -> Result<ServiceContext, BoxError> {
    let mut c = ServiceContext::default();
    for (k, v) in pairs {
        let key = Key::from_name(k).ok_or_else(|| format!("no key {k}"))?;
        c.set(key, v).map_err(|e| format!("{k}={v}: {e}"))?;
    }
    Ok(c)
}

fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(300);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5);
    let sys = RealSys::new();
    let host = Host::probe();
    let argv: Vec<String> = vec!["/bin/sleep".into(), "60".into()];
    let env = Env::from_current();
    let pipe = OutPipe::new(Stream::Stdout)?;
    let writer = pipe.writer().ok_or("pipe has no writer")?;

    let cgroups = Cgroups::discover()?;
    let base = cgroups
        .base()
        .join(format!("flotilla-bench-{}", std::process::id()));
    std::fs::create_dir(&base)?;
    let cgroups = Cgroups::at(base.clone())?;
    let cg = cgroups
        .create("bench.service", &Default::default(), None, 0, 0)
        .map_err(|(_, e)| e)?;
    let private =
        std::env::temp_dir().join(format!("flotilla-bench-private-{}", std::process::id()));
    let tmp = PrivateTmp::create(&private, "bench.service")?;

    let redis = redis()?;
    let seccomp = seccomp_only(&redis);
    let limits = context(&[
        ("LimitNOFILE", "16384"),
        ("UMask", "007"),
        ("Nice", "1"),
        ("OOMScoreAdjust", "100"),
    ])?;
    let none = ServiceContext::default();
    let directory = context(&[(
        "RuntimeDirectory",
        &format!("flotilla-bench-dir-{}", std::process::id()),
    )])?;
    let with_cg = Params {
        cgroup: Some(&cg),
        ..Params::default()
    };
    let sandbox = Params {
        cgroup: Some(&cg),
        private_tmp: Some(tmp.dir()),
        ..Params::default()
    };

    let t = Instant::now();
    let prepared_redis = prepare(&redis, &sandbox, &host)?;
    let prepare_took = t.elapsed();
    let contexts: Vec<(&str, ChildContext)> = vec![
        ("no context", prepare(&none, &Params::default(), &host)?),
        ("cgroup", prepare(&none, &with_cg, &host)?),
        ("limits", prepare(&limits, &Params::default(), &host)?),
        ("seccomp", prepare(&seccomp, &Params::default(), &host)?),
        ("directory", prepare(&directory, &Params::default(), &host)?),
        ("redis sandbox", prepared_redis),
    ];
    let spawn = |ctx: &ChildContext| -> Result<Pid, BoxError> {
        let w = writer.as_fd();
        let req = SpawnRequest::new(&argv, &env)
            .stdout(Stdio::Fd(w))
            .stderr(Stdio::Fd(w))
            .context(ctx);
        Ok(sys.spawn(&req)?)
    };
    for (_, c) in &contexts {
        batch(&sys, &|| spawn(c), 10)?;
    }
    let mut times: Vec<Vec<(Duration, Duration)>> = vec![Vec::new(); contexts.len()];
    for _ in 0..rounds {
        for ((_, c), t) in contexts.iter().zip(times.iter_mut()) {
            t.push(batch(&sys, &|| spawn(c), n)?);
        }
    }
    println!(
        "spawning {n} x /bin/sleep 60 with a context, {rounds} rounds (best / median per spawn):"
    );
    let per = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
    for ((name, c), t) in contexts.iter().zip(times.iter_mut()) {
        let mut walls: Vec<Duration> = t.iter().map(|x| x.0).collect();
        let mut cpus: Vec<Duration> = t.iter().map(|x| x.1).collect();
        walls.sort();
        cpus.sort();
        let best = walls.first().copied().unwrap_or_default();
        let median = walls.get(walls.len() / 2).copied().unwrap_or_default();
        let cpu = cpus.get(cpus.len() / 2).copied().unwrap_or_default();
        let steps = c.to_string().lines().count();
        println!(
            "  {name:<16} {steps:>3} steps {:>7.1} us / {:>7.1} us per spawn, spawner cpu {:>6.1} us",
            per(best),
            per(median),
            per(cpu)
        );
    }
    println!(
        "  prepare (once per unit start) of the redis sandbox: {:.1} us",
        prepare_took.as_secs_f64() * 1e6
    );
    if let [(_, none), (_, cgroup), ..] = contexts.as_slice() {
        spaced(&sys, none, cgroup)?;
    }
    drop(pipe);
    flotilla_init::sys::dirs::remove_runtime(&redis.directories)?;
    flotilla_init::sys::dirs::remove_runtime(&directory.directories)?;
    tmp.remove()?;
    let _ = std::fs::remove_dir(&private);
    cg.remove()?;
    std::fs::remove_dir(&base)?;
    Ok(())
}

/// Spawns `/bin/true` 100 times per way, 20 ms apart, the ways taking
/// turns, and prints the time each spawn call took (the init's loop waits
/// that long).
fn spaced(sys: &RealSys, none: &ChildContext, cgroup: &ChildContext) -> Result<(), BoxError> {
    let argv: Vec<String> = vec!["/bin/true".into()];
    let env = Env::from_current();
    let ways: [(&str, &ChildContext, bool); 3] = [
        ("no cgroup", none, true),
        ("CLONE_INTO_CGROUP", cgroup, true),
        ("cgroup.procs write", cgroup, false),
    ];
    let mut took: Vec<Vec<Duration>> = vec![Vec::new(); ways.len()];
    for _ in 0..100 {
        for ((_, ctx, clone3), t) in ways.iter().zip(took.iter_mut()) {
            std::thread::sleep(Duration::from_millis(20));
            flotilla_init::sys::set_clone_into_cgroup(*clone3);
            let start = Instant::now();
            let pid = sys.spawn(&SpawnRequest::new(&argv, &env).context(ctx))?;
            t.push(start.elapsed());
            let mut status = 0;
            // SAFETY: waitpid(2) on our own child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        }
    }
    flotilla_init::sys::set_clone_into_cgroup(true);
    println!("spawning /bin/true 100 times per way, 20 ms apart (min / median / 90th percentile):");
    for ((name, _, _), t) in ways.iter().zip(took.iter_mut()) {
        t.sort();
        let at = |q: usize| {
            t.get(t.len() * q / 100)
                .copied()
                .unwrap_or_default()
                .as_secs_f64()
                * 1e6
        };
        println!(
            "  {name:<20} {:>8.0} us {:>8.0} us {:>8.0} us",
            at(0),
            at(50),
            at(90)
        );
    }
    Ok(())
}

/// Starts `n` processes (timed), then kills and reaps them. Returns the
/// wall-clock time and the spawner's CPU time.
fn batch(
    sys: &RealSys,
    spawn: &dyn Fn() -> Result<Pid, BoxError>,
    n: usize,
) -> Result<(Duration, Duration), BoxError> {
    let mut pids = Vec::with_capacity(n);
    let before = cpu::rusage(libc::RUSAGE_SELF);
    let start = Instant::now();
    for _ in 0..n {
        pids.push(spawn()?);
    }
    let took = start.elapsed();
    let own = cpu::rusage(libc::RUSAGE_SELF).saturating_sub(before);
    for &pid in &pids {
        sys.kill(pid, libc::SIGKILL)?;
    }
    for &pid in &pids {
        let mut status = 0;
        // SAFETY: waitpid(2) on our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
    Ok((took, own))
}
