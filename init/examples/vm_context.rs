//! The cgroup limits and the sandbox, checked in a VM where this program is
//! PID 1 (`tests/tests/vm_context.rs` boots it, static, as `rdinit=`):
//! cgroup v2 with every controller, which the hybrid hosts the tests run
//! on do not give a writable cgroup2 with.
//!
//! As PID 1 it mounts the API file systems and cgroup2, makes a unit
//! cgroup with `MemoryMax=`, `MemoryHigh=`, `CPUWeight=`, `CPUQuota=`,
//! `TasksMax=` and `IOWeight=`, and runs itself in it (through the init's
//! spawn path, with a context) to allocate past the memory limit, fork
//! past the task limit and spin against the CPU quota; then a sandboxed
//! child, to check the seccomp filter and the mount namespace in the static
//! musl build. Each check prints `vm-context: ok …` or `vm-context: FAIL
//! …` on the console, then `vm-context: done`, and the machine powers off.
//!
//! Run as a child, the first argument says what to do: `alloc MIB`,
//! `fork N`, `spin MS`, `sleep`, `nofile N` (exit 0 if its soft and hard
//! limit on open files are both N).

use std::path::Path;
use std::time::{Duration, Instant};

use flotilla_init::sys::cgroup::{Cgroups, UnitCgroup};
use flotilla_init::sys::context::{prepare, ChildContext, Host, Params};
use flotilla_init::sys::real::RealSys;
use flotilla_init::sys::{Env, ExitStatus, Pid, SpawnRequest, Sys};
use flotilla_units::context::{Key, ServiceContext};

type BoxError = Box<dyn std::error::Error>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let code = match args.get(1).map(String::as_str) {
        Some("alloc") => alloc(args.get(2)),
        Some("fork") => fork(args.get(2)),
        Some("spin") => spin(args.get(2)),
        Some("nofile") => nofile(args.get(2)),
        Some("sleep") => {
            std::thread::sleep(Duration::from_secs(600));
            0
        }
        _ => {
            if let Err(e) = pid1() {
                println!("vm-context: FAIL {e}");
            }
            println!("vm-context: done");
            // SAFETY: sync(2) and reboot(2) take no pointers.
            unsafe {
                libc::sync();
                libc::reboot(libc::RB_POWER_OFF);
            }
            1
        }
    };
    std::process::exit(code);
}

fn number(arg: Option<&String>) -> usize {
    arg.and_then(|a| a.parse().ok()).unwrap_or(0)
}

/// Allocates and touches `MIB` MiB; exits 0 if it got them all.
fn alloc(arg: Option<&String>) -> i32 {
    let mut blocks = Vec::new();
    for _ in 0..number(arg) {
        blocks.push(vec![1u8; 1 << 20]);
    }
    i32::from(blocks.is_empty())
}

/// Forks up to `N` children that wait; exits with how many it got.
fn fork(arg: Option<&String>) -> i32 {
    let mut got = 0;
    for _ in 0..number(arg) {
        // SAFETY: fork(2) in a single-threaded process; the child only
        // pauses until it is killed.
        match unsafe { libc::fork() } {
            0 => loop {
                // SAFETY: pause(2) takes nothing.
                unsafe { libc::pause() };
            },
            p if p > 0 => got += 1,
            _ => break,
        }
    }
    got
}

/// Spins for `MS` milliseconds of wall-clock time.
fn spin(arg: Option<&String>) -> i32 {
    let end = Instant::now() + Duration::from_millis(number(arg) as u64);
    let mut x = 0u64;
    while Instant::now() < end {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
    }
    i32::from(x == 42)
}

fn nofile(arg: Option<&String>) -> i32 {
    let want = number(arg) as u64;
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes the struct it is given.
    let r = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    i32::from(r != 0 || lim.rlim_cur != want || lim.rlim_max != want)
}

fn mount(source: &str, target: &str, fstype: &str) -> Result<(), BoxError> {
    std::fs::create_dir_all(target)?;
    nix::mount::mount(
        Some(source),
        target,
        Some(fstype),
        nix::mount::MsFlags::empty(),
        None::<&str>,
    )
    .map_err(|e| format!("mount {target}: {e}"))?;
    Ok(())
}

fn ok(what: &str) {
    println!("vm-context: ok {what}");
}

fn fail(what: &str) {
    println!("vm-context: FAIL {what}");
}

fn check(cond: bool, what: &str) {
    if cond {
        ok(what);
    } else {
        fail(what);
    }
}

fn context(pairs: &[(&str, &str)]) -> Result<ServiceContext, BoxError> {
    let mut c = ServiceContext::default();
    for (k, v) in pairs {
        let key = Key::from_name(k).ok_or_else(|| format!("no key {k}"))?;
        c.set(key, v).map_err(|e| format!("{k}={v}: {e}"))?;
    }
    Ok(c)
}

/// Runs this program with `args` in `ctx` and waits for it.
fn run(sys: &RealSys, ctx: &ChildContext, args: &[&str]) -> Result<ExitStatus, BoxError> {
    let pid = start(sys, ctx, args)?;
    wait(sys, pid)
}

fn start(sys: &RealSys, ctx: &ChildContext, args: &[&str]) -> Result<Pid, BoxError> {
    let mut argv = vec!["/init".to_string()];
    argv.extend(args.iter().map(|a| a.to_string()));
    let env = Env::new();
    Ok(sys.spawn(&SpawnRequest::new(&argv, &env).context(ctx))?)
}

fn wait(sys: &RealSys, pid: Pid) -> Result<ExitStatus, BoxError> {
    loop {
        match sys.wait_any()? {
            Some((p, status)) if p == pid => return Ok(status),
            Some(_) => {}
            None => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

fn read(cg: &UnitCgroup, file: &str) -> String {
    std::fs::read_to_string(cg.dir().join(file))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The value of `key` in a flat-keyed cgroup file (`memory.events`).
fn field(cg: &UnitCgroup, file: &str, key: &str) -> u64 {
    read(cg, file)
        .lines()
        .find_map(|l| l.strip_prefix(key).and_then(|v| v.trim().parse().ok()))
        .unwrap_or(0)
}

fn pid1() -> Result<(), BoxError> {
    mount("proc", "/proc", "proc")?;
    mount("sysfs", "/sys", "sysfs")?;
    mount("devtmpfs", "/dev", "devtmpfs")?;
    mount("cgroup2", "/sys/fs/cgroup", "cgroup2")?;
    mount("tmpfs", "/run", "tmpfs")?;
    mount("tmpfs", "/tmp", "tmpfs")?;
    println!("vm-context: start");
    let sys = RealSys::new();
    sys.raise_nofile_limit()?;
    let host = Host::probe();
    // `LimitNOFILE=infinity` (containerd.service) is more than the kernel
    // allows anyone: the unit gets the most it does, `fs.nr_open`.
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")?;
    let unbounded = prepare(
        &context(&[("LimitNOFILE", "infinity")])?,
        &Params::default(),
        &host,
    )?;
    let st = run(&sys, &unbounded, &["nofile", nr_open.trim()])?;
    check(
        st.success(),
        &format!(
            "LimitNOFILE=infinity: the unit's limit is fs.nr_open ({}): {st}",
            nr_open.trim()
        ),
    );
    let cgroups = Cgroups::discover()?;
    check(
        cgroups.base() == Path::new("/sys/fs/cgroup"),
        "PID 1's units go below the root cgroup",
    );
    check(cgroups.has_kill(), "the kernel has cgroup.kill");
    let limits = context(&[
        ("MemoryMax", "32M"),
        ("MemoryHigh", "24M"),
        ("CPUWeight", "50"),
        ("CPUQuota", "20%"),
        ("TasksMax", "8"),
        ("IOWeight", "200"),
    ])?;
    let cg = cgroups
        .create("limits.service", &limits.resources, None, 256 << 20, 4096)
        .map_err(|(k, e)| format!("{k:?}: {e}"))?;
    for (file, want) in [
        ("memory.max", "33554432"),
        ("memory.high", "25165824"),
        ("cpu.weight", "50"),
        ("cpu.max", "20000 100000"),
        ("pids.max", "8"),
    ] {
        let got = read(&cg, file);
        check(got == want, &format!("{file} is {got} (want {want})"));
    }
    let io = read(&cg, "io.weight");
    check(io.contains("default 200"), &format!("io.weight is {io:?}"));
    let ctx = prepare(
        &ServiceContext::default(),
        &Params {
            cgroup: Some(&cg),
            ..Params::default()
        },
        &host,
    )?;

    // The memory test in a cgroup without MemoryHigh=, whose throttling
    // (with no swap to reclaim to) would take a minute to reach the OOM.
    let memory = context(&[("MemoryMax", "32M")])?;
    let mem_cg = cgroups
        .create("memory.service", &memory.resources, None, 256 << 20, 4096)
        .map_err(|(k, e)| format!("{k:?}: {e}"))?;
    let mem_ctx = prepare(
        &ServiceContext::default(),
        &Params {
            cgroup: Some(&mem_cg),
            ..Params::default()
        },
        &host,
    )?;
    let st = run(&sys, &mem_ctx, &["alloc", "64"])?;
    let ooms = field(&mem_cg, "memory.events", "oom_kill ");
    check(
        st == ExitStatus::Signaled {
            signal: libc::SIGKILL,
            core_dumped: false,
        } && ooms >= 1,
        &format!("MemoryMax=32M: allocating 64 MiB {st}, oom_kill {ooms}"),
    );
    let st = run(&sys, &mem_ctx, &["alloc", "8"])?;
    check(
        st.success(),
        &format!("MemoryMax=32M: allocating 8 MiB {st}"),
    );

    mem_cg.remove()?;
    cgroups.release(&mem_cg);
    delegated(&cgroups)?;
    sliced(&cgroups)?;

    let pid = start(&sys, &ctx, &["fork", "20"])?;
    let st = wait(&sys, pid)?;
    // The forker and at most 7 children fit in TasksMax=8.
    check(
        st == ExitStatus::Exited(7),
        &format!("TasksMax=8: forked {st} (want exited with status 7)"),
    );
    let left = cg.pids().len();
    cg.kill()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while cg.populated() && Instant::now() < deadline {
        let _ = sys.wait_any();
        std::thread::sleep(Duration::from_millis(10));
    }
    check(
        left == 7 && !cg.populated(),
        &format!("cgroup.kill took the {left} orphans"),
    );

    let before = field(&cg, "cpu.stat", "usage_usec ");
    let st = run(&sys, &ctx, &["spin", "1000"])?;
    let used = field(&cg, "cpu.stat", "usage_usec ") - before;
    let throttled = field(&cg, "cpu.stat", "nr_throttled ");
    check(
        st.success() && used < 400_000 && throttled > 0,
        &format!(
            "CPUQuota=20%: 1 s of spinning used {} ms of CPU, throttled {throttled} times",
            used / 1000
        ),
    );
    let stats = cg.stats();
    check(
        stats.memory.is_some() && stats.cpu_usec.is_some() && stats.tasks == Some(0),
        &format!("stats {stats:?}"),
    );

    sandboxed(&sys, &host, &cg)?;
    cg.remove()?;
    cgroups.release(&cg);
    // The last unit is gone: so are `system.slice` and every controller
    // the init turned on for the units.
    let root = std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control").unwrap_or_default();
    check(
        root.trim().is_empty() && !Path::new("/sys/fs/cgroup/system.slice").exists(),
        &format!(
            "no unit left: the root's subtree_control is {:?}, system.slice gone",
            root.trim()
        ),
    );
    Ok(())
}

/// `Slice=` three levels deep with `IOAccounting=yes`: `io` is turned on
/// down the slices for the unit, and the slices go with it; the `io`
/// that `limits.service` (`IOWeight=`, still running) needs stays on in
/// `system.slice`'s parent.
fn sliced(cgroups: &Cgroups) -> Result<(), BoxError> {
    let c = context(&[("Slice", "system-foo-bar.slice"), ("IOAccounting", "yes")])?;
    let cg = cgroups
        .create("acct.service", &c.resources, None, 256 << 20, 4096)
        .map_err(|(k, e)| format!("{k:?}: {e}"))?;
    let slices = Path::new("/sys/fs/cgroup/system.slice/system-foo.slice");
    check(
        cg.dir() == slices.join("system-foo-bar.slice/acct.service"),
        &format!(
            "Slice=system-foo-bar.slice: the cgroup is {}",
            cg.dir().display()
        ),
    );
    let offered = read(&cg, "cgroup.controllers");
    check(
        offered.split_whitespace().any(|c| c == "io"),
        &format!("IOAccounting=yes: the unit's cgroup offers {offered:?}"),
    );
    cg.remove()?;
    cgroups.release(&cg);
    let root = std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control").unwrap_or_default();
    check(
        !slices.exists() && root.split_whitespace().any(|c| c == "io"),
        &format!("the empty slices are gone, io stays on for limits.service: the root's {root:?}"),
    );
    Ok(())
}

/// `Delegate=pids memory` with an owner: the unit's cgroup offers those
/// controllers for it to enable below, belongs to the owner, and its
/// removal takes the cgroups made below it.
fn delegated(cgroups: &Cgroups) -> Result<(), BoxError> {
    use std::os::unix::fs::MetadataExt;
    let nobody = 65534;
    let c = context(&[("Delegate", "pids memory")])?;
    let cg = cgroups
        .create(
            "deleg.service",
            &c.resources,
            Some((nobody, nobody)),
            256 << 20,
            4096,
        )
        .map_err(|(k, e)| format!("{k:?}: {e}"))?;
    let offered = read(&cg, "cgroup.controllers");
    check(
        offered.split_whitespace().any(|c| c == "pids")
            && offered.split_whitespace().any(|c| c == "memory"),
        &format!("Delegate=pids memory: the unit's cgroup offers {offered:?}"),
    );
    let owned = [
        "",
        "cgroup.procs",
        "cgroup.subtree_control",
        "cgroup.threads",
    ]
    .iter()
    .all(|f| std::fs::metadata(cg.dir().join(f)).is_ok_and(|m| m.uid() == nobody));
    check(
        owned,
        "Delegate=: the cgroup and its three files belong to the unit's user",
    );
    std::fs::create_dir(cg.dir().join("work"))?;
    std::fs::write(cg.dir().join("cgroup.subtree_control"), "+pids")?;
    let below = std::fs::read_to_string(cg.dir().join("work/pids.max")).unwrap_or_default();
    check(
        below.trim() == "max",
        &format!(
            "Delegate=: a cgroup below the unit's has pids.max {:?}",
            below.trim()
        ),
    );
    cg.remove()?;
    cgroups.release(&cg);
    check(
        !cg.dir().exists(),
        "the delegated subtree is removed with the unit's cgroup",
    );
    Ok(())
}

/// A sandboxed child in the static build: its filter and namespace.
fn sandboxed(sys: &RealSys, host: &Host, cg: &UnitCgroup) -> Result<(), BoxError> {
    let c = context(&[
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("PrivateDevices", "yes"),
        ("ProtectKernelTunables", "yes"),
        ("ProtectKernelLogs", "yes"),
        ("InaccessiblePaths", "-/proc/kcore"),
        ("CapabilityBoundingSet", "CAP_NET_BIND_SERVICE"),
        ("SystemCallFilter", "@system-service"),
        ("RestrictNamespaces", "yes"),
    ])?;
    let ctx = prepare(
        &c,
        &Params {
            cgroup: Some(cg),
            ..Params::default()
        },
        host,
    )?;
    let pid = start(sys, &ctx, &["sleep"])?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let mountinfo = std::fs::read_to_string(format!("/proc/{pid}/mountinfo"))?;
    let own = std::fs::read_link("/proc/self/ns/mnt")?;
    let theirs = std::fs::read_link(format!("/proc/{pid}/ns/mnt"))?;
    let line = |f: &str| {
        status
            .lines()
            .find(|l| l.starts_with(f))
            .unwrap_or("")
            .to_string()
    };
    check(line("Seccomp:").ends_with('2'), &line("Seccomp:"));
    check(line("NoNewPrivs:").ends_with('1'), &line("NoNewPrivs:"));
    check(
        line("CapBnd:").ends_with("0000000000000400"),
        &line("CapBnd:"),
    );
    check(
        own != theirs,
        "the sandboxed child has its own mount namespace",
    );
    let root_ro = mountinfo.lines().any(|l| {
        l.split(' ').nth(4) == Some("/") && l.split(' ').nth(5).is_some_and(|o| o.starts_with("ro"))
    });
    check(root_ro, "ProtectSystem=strict: / is read-only in it");
    let joined = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))?;
    check(
        joined.contains("/limits.service"),
        &format!("born in its cgroup: {}", joined.trim()),
    );
    sys.kill(pid, libc::SIGKILL)?;
    let st = wait(sys, pid)?;
    check(
        matches!(st, ExitStatus::Signaled { .. }),
        &format!("the sandboxed child {st}"),
    );
    Ok(())
}
