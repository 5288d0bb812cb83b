//! Spawn micro-benchmark: starts N (default 1000) `/bin/sleep 60` through
//! [`RealSys::spawn`] and through a bare `posix_spawn(3)` loop (argv and
//! envp prepared once, no file actions), kills and reaps each batch, and
//! prints the timings.
//!
//! The floor is the bare loop with `POSIX_SPAWN_SETSID`: children that stay
//! in the spawner's process group make every spawn measurably slower (about
//! 10% with 1000 of them on the machine this was written on), and the
//! init's children always get their own group, so comparing against the
//! loop without it would flatter the init.
//!
//! ```text
//! cargo run --release --example spawn_bench [N] [ROUNDS] [FDS]
//! ```
//!
//! `FDS` (default 0) extra close-on-exec descriptors are held open by the
//! benchmark while it spawns (copies of one `/dev/null`), as the init holds
//! two output pipes per running process: a spawn path that copies the
//! spawner's descriptor table into each child slows down with them, one
//! that does not stays flat. The soft `RLIMIT_NOFILE` is raised to the hard
//! limit for them.
//!
//! Variants of the init's path:
//! - `sys.spawn, stdio inherited`: the same work as the floor, plus what the
//!   init always adds (PATH resolution, argv/envp built per call, signal
//!   mask and dispositions reset, `closefrom(3)`);
//! - `sys.spawn, stdout+stderr to pipes`: as units run, stdin on
//!   `/dev/null` and both output streams on a pipe (one shared pipe here,
//!   so that 1000 children fit in the descriptor limit).
//!
//! Rounds alternate between the variants; the best round of each is
//! reported (the least disturbed by the rest of the machine), with the
//! median. On a loaded machine wall-clock times swing; so each variant also
//! gets its CPU time per spawn (`getrusage(2)`, medians): the spawner's own
//! while spawning (user + system: `clone`, a copy of the descriptor table
//! if any), and its children's, counted once they are reaped (their
//! `execve`, closing what they inherited, the loader, until killed).

use std::ffi::{c_char, CString};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use flotilla_init::outpipe::{OutPipe, Stream};
use flotilla_init::sys::real::RealSys;
use flotilla_init::sys::{Env, Pid, SpawnRequest, Stdio, Sys};

#[path = "support/cpu.rs"]
mod cpu;

type BoxError = Box<dyn std::error::Error>;

/// One way of starting a process.
type SpawnFn<'a> = &'a dyn Fn() -> Result<Pid, BoxError>;

fn main() -> Result<(), BoxError> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(1000);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5);
    let extra: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(0);
    let sys = RealSys::new();
    let _extra_fds = hold_descriptors(&sys, extra)?;
    let argv: Vec<String> = vec!["/bin/sleep".into(), "60".into()];
    let env = Env::from_current();

    // The floor: everything prepared once.
    let c_argv: Vec<CString> = argv
        .iter()
        .map(|a| CString::new(a.as_str()))
        .collect::<Result<_, _>>()?;
    let c_env: Vec<CString> = env
        .iter()
        .map(|(k, v)| CString::new([k, b"=", v].concat()))
        .collect::<Result<_, _>>()?;
    let mut p_argv: Vec<*mut c_char> = c_argv.iter().map(|c| c.as_ptr().cast_mut()).collect();
    p_argv.push(std::ptr::null_mut());
    let mut p_env: Vec<*mut c_char> = c_env.iter().map(|c| c.as_ptr().cast_mut()).collect();
    p_env.push(std::ptr::null_mut());
    let path = CString::new("/bin/sleep")?;

    // The floor: posix_spawn(3) with nothing but `attr` (NULL or SETSID).
    let bare = |setsid: bool| -> Result<Pid, BoxError> {
        let mut pid: libc::pid_t = 0;
        // SAFETY: valid NUL-terminated path and NULL-terminated arrays that
        // outlive the call; the attributes are initialised before use and
        // destroyed once; NULL file actions and attributes are allowed.
        let r = unsafe {
            let mut attr: libc::posix_spawnattr_t = std::mem::zeroed();
            let attrp: *const libc::posix_spawnattr_t = if setsid {
                libc::posix_spawnattr_init(&mut attr);
                libc::posix_spawnattr_setflags(&mut attr, libc::POSIX_SPAWN_SETSID);
                &attr
            } else {
                std::ptr::null()
            };
            let r = libc::posix_spawn(
                &mut pid,
                path.as_ptr(),
                std::ptr::null(),
                attrp,
                p_argv.as_ptr(),
                p_env.as_ptr(),
            );
            if setsid {
                libc::posix_spawnattr_destroy(&mut attr);
            }
            r
        };
        if r != 0 {
            return Err(format!("posix_spawn: error {r}").into());
        }
        Ok(pid)
    };
    let plain = || bare(false);
    let plain_setsid = || bare(true);
    let inherit = || -> Result<Pid, BoxError> {
        let req = SpawnRequest::new(&argv, &env)
            .stdin(Stdio::Inherit)
            .stdout(Stdio::Inherit)
            .stderr(Stdio::Inherit);
        Ok(sys.spawn(&req)?)
    };
    let pipe = OutPipe::new(Stream::Stdout)?;
    let writer = pipe.writer().ok_or("pipe has no writer")?;
    let piped = || -> Result<Pid, BoxError> {
        let w = writer.as_fd();
        let req = SpawnRequest::new(&argv, &env)
            .stdout(Stdio::Fd(w))
            .stderr(Stdio::Fd(w));
        Ok(sys.spawn(&req)?)
    };

    let variants: [(&str, SpawnFn<'_>); 4] = [
        ("posix_spawn, no attributes", &plain),
        ("posix_spawn + SETSID (the floor)", &plain_setsid),
        ("sys.spawn, stdio inherited", &inherit),
        ("sys.spawn, stdout+stderr to pipes", &piped),
    ];
    // Warm-up: page in the binaries and the allocator.
    for (_, f) in &variants {
        batch(&sys, *f, 20)?;
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); variants.len()];
    let mut cpus: Vec<Vec<(Duration, Duration)>> = vec![Vec::new(); variants.len()];
    for _ in 0..rounds {
        for (((_, f), t), c) in variants.iter().zip(times.iter_mut()).zip(cpus.iter_mut()) {
            let (wall, cpu) = batch(&sys, *f, n)?;
            t.push(wall);
            c.push(cpu);
        }
    }
    println!(
        "spawning {n} x /bin/sleep 60, {rounds} rounds, {extra} extra descriptors open \
         (best / median per process):"
    );
    let mut floor = None;
    for (i, (((name, _), t), c)) in variants
        .iter()
        .zip(times.iter_mut())
        .zip(cpus.iter_mut())
        .enumerate()
    {
        t.sort();
        let mut own: Vec<Duration> = c.iter().map(|x| x.0).collect();
        let mut kids: Vec<Duration> = c.iter().map(|x| x.1).collect();
        own.sort();
        kids.sort();
        let own = own.get(own.len() / 2).copied().unwrap_or_default();
        let kids = kids.get(kids.len() / 2).copied().unwrap_or_default();
        let best = t.first().copied().unwrap_or_default();
        let median = t.get(t.len() / 2).copied().unwrap_or_default();
        let per = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
        if i == 1 {
            floor = Some((best, median));
        }
        let ratio = match floor {
            Some((fb, fm)) if i > 1 => format!(
                "  {:.2}x / {:.2}x the floor",
                best.as_secs_f64() / fb.as_secs_f64(),
                median.as_secs_f64() / fm.as_secs_f64()
            ),
            _ => String::new(),
        };
        println!(
            "  {name:<36} {:>8.1} ms total, {:>6.1} us / {:>6.1} us per spawn{ratio}",
            best.as_secs_f64() * 1e3,
            per(best),
            per(median)
        );
        println!(
            "  {:<36} cpu per spawn: spawner {:>6.1} us, child {:>6.1} us",
            "",
            per(own),
            per(kids)
        );
    }
    drop(pipe);
    Ok(())
}

/// Opens `n` close-on-exec copies of `/dev/null`, kept open until dropped.
fn hold_descriptors(sys: &RealSys, n: usize) -> Result<Vec<std::os::fd::OwnedFd>, BoxError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let limit = sys.raise_nofile_limit()?;
    if (n as u64).saturating_add(64) > limit {
        return Err(format!("{n} descriptors do not fit in RLIMIT_NOFILE {limit}").into());
    }
    let null = std::fs::File::open("/dev/null")?;
    let mut fds = Vec::with_capacity(n);
    for _ in 0..n {
        fds.push(null.as_fd().try_clone_to_owned()?);
    }
    Ok(fds)
}

/// Starts `n` processes with `spawn` (timed), then kills and reaps them
/// (not timed). Returns the wall-clock time of the spawns and the CPU time
/// (the spawner's while spawning, the children's).
fn batch(
    sys: &RealSys,
    spawn: &dyn Fn() -> Result<Pid, BoxError>,
    n: usize,
) -> Result<(Duration, (Duration, Duration)), BoxError> {
    let mut pids = Vec::with_capacity(n);
    let kids_before = cpu::rusage(libc::RUSAGE_CHILDREN);
    let own_before = cpu::rusage(libc::RUSAGE_SELF);
    let start = Instant::now();
    for _ in 0..n {
        pids.push(spawn()?);
    }
    let took = start.elapsed();
    let own = cpu::rusage(libc::RUSAGE_SELF).saturating_sub(own_before);
    for &pid in &pids {
        sys.kill(pid, libc::SIGKILL)?;
    }
    for &pid in &pids {
        let mut status = 0;
        // SAFETY: waitpid(2) on our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
    let kids = cpu::rusage(libc::RUSAGE_CHILDREN).saturating_sub(kids_before);
    Ok((took, (own, kids)))
}
