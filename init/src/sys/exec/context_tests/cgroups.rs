//! The cgroup half of the context tests: membership, kill, signals,
//! limits without their controller, and redis-server in the whole sandbox
//! of its Debian unit. They need a writable cgroup2 (this host's hybrid hierarchy has
//! one at `/sys/fs/cgroup/unified`, without controllers: the limits are
//! checked in the VM, `tests/tests/vm_context.rs`).

use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use flotilla_units::context::{Key, ServiceContext};

use super::{argv, child_context, ctx, env, ns, pipe, sleeper, status, stop};
use crate::sys::cgroup::{Cgroups, UnitCgroup};
use crate::sys::context::{ChildContext, Params};
use crate::sys::dirs::{self, PrivateTmp};
use crate::sys::real::RealSys;
use crate::sys::tests::{process_lock, wait_for};
use crate::sys::*;

/// A cgroup manager below the init's own cgroup2 directory, in a
/// directory of this test process's own.
fn test_cgroups(name: &str) -> (Cgroups, PathBuf) {
    let host = Cgroups::discover().expect("a writable cgroup2 (this host: /sys/fs/cgroup/unified)");
    let dir = host
        .base()
        .join(format!("flotilla-test-{name}-{}", std::process::id()));
    let _ = std::fs::create_dir(&dir);
    (Cgroups::at(dir.clone()).unwrap(), dir)
}

/// The cgroup of unit `unit` below [`test_cgroups`]`(test)`, and the
/// context of a child born in it.
fn unit_cgroup(test: &str, unit: &str) -> (UnitCgroup, PathBuf, ChildContext) {
    let (cgroups, dir) = test_cgroups(test);
    let cg = cgroups
        .create(unit, &Default::default(), None, 0, 0)
        .unwrap_or_else(|(k, e)| panic!("{k:?}: {e}"));
    let cc = child_context(
        &ServiceContext::default(),
        &Params {
            cgroup: Some(&cg),
            ..Params::default()
        },
    );
    (cg, dir, cc)
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn cleanup(cg: &UnitCgroup, dir: &Path) {
    let _ = cg.kill();
    wait_until("the cgroup to empty", || !cg.populated());
    cg.remove().unwrap();
    // The slices' directories go with the last unit below them.
    Cgroups::at(dir.to_path_buf()).unwrap().release(cg);
    std::fs::remove_dir(dir).unwrap();
}

/// A unit's cgroup is in its slice's (`system.slice` by default), each
/// dash of the slice's name a level; the slices' directories are made
/// at the start and removed with the last unit below them.
#[test]
fn a_unit_is_placed_in_its_slice_and_the_empty_slices_go_at_its_end() {
    let (cgroups, dir) = test_cgroups("slices");
    let nested = ctx(&[("Slice", "system-foo-bar.slice")]);
    let a = cgroups
        .create("a.service", &nested.resources, None, 0, 0)
        .unwrap_or_else(|(k, e)| panic!("{k:?}: {e}"));
    let b = cgroups
        .create("b.service", &Default::default(), None, 0, 0)
        .unwrap_or_else(|(k, e)| panic!("{k:?}: {e}"));
    let foo = dir.join("system.slice/system-foo.slice");
    assert_eq!(a.dir(), foo.join("system-foo-bar.slice/a.service"));
    assert_eq!(b.dir(), dir.join("system.slice/b.service"));
    assert!(a.dir().is_dir() && b.dir().is_dir());
    a.remove().unwrap();
    cgroups.release(&a);
    assert!(
        !foo.exists(),
        "the empty slices below system.slice are gone"
    );
    assert!(dir.join("system.slice").is_dir(), "b is still in it");
    cleanup(&b, &dir);
}

#[test]
fn the_child_joins_its_cgroup_and_a_kill_takes_a_double_forked_grandchild() {
    let _g = process_lock();
    let (cg, dir, cc) = unit_cgroup("kill", "web.service");
    assert!(!cc.is_empty());
    let sys = RealSys::new();
    // The shell forks a subshell that forks `sleep` and exits at once: the
    // sleep is a grandchild the init never saw, re-parented away from it.
    let a = argv(&["/bin/sh", "-c", "(sleep 600 &); exec sleep 600"]);
    let e = env();
    let pid = sys.spawn(&SpawnRequest::new(&a, &e).context(&cc)).unwrap();
    wait_until("two processes in the cgroup", || cg.pids().len() == 2);
    let pids = cg.pids();
    assert!(pids.contains(&pid), "{pids:?}");
    let grandchild = *pids.iter().find(|&&p| p != pid).unwrap();
    let own = std::fs::read_to_string(format!("/proc/{grandchild}/cgroup")).unwrap();
    assert!(own.contains("/web.service"), "{own}");
    assert!(cg.populated());
    let stats = cg.stats();
    assert!(stats.cpu_usec.is_some(), "{stats:?}");
    cg.kill().unwrap();
    assert_eq!(
        wait_for(&sys, pid),
        ExitStatus::Signaled {
            signal: libc::SIGKILL,
            core_dumped: false
        }
    );
    wait_until("the grandchild to die", || {
        !Path::new(&format!("/proc/{grandchild}/cgroup")).exists() || !cg.populated()
    });
    wait_until("the cgroup to empty", || !cg.populated());
    cleanup(&cg, &dir);
}

#[test]
fn without_clone_into_cgroup_the_child_joins_by_writing_cgroup_procs() {
    let _g = process_lock();
    let (cg, dir, cc) = unit_cgroup("procs", "old-kernel");
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            super::set_clone_into_cgroup(true);
        }
    }
    let _restore = Restore;
    super::set_clone_into_cgroup(false);
    let pid = sleeper(&cc, None);
    let own = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let pids = cg.pids();
    stop(pid);
    assert!(own.contains("/old-kernel"), "{own}");
    assert_eq!(pids, [pid]);
    cleanup(&cg, &dir);
}

#[test]
fn a_context_that_sets_nothing_is_the_join_made_at_each_spawn() {
    let _g = process_lock();
    let (cg, dir, prepared) = unit_cgroup("joining", "plain");
    // What a unit that sets nothing prepares is what a run makes at each
    // spawn instead of keeping it (unitrun.rs).
    assert!(prepared.is_joining());
    let joining = ChildContext::joining(&cg);
    assert!(joining.is_joining());
    assert_eq!(joining.to_string(), prepared.to_string());
    assert_eq!(joining.cgroup_dir(), prepared.cgroup_dir());
    assert!(
        joining.cgroup_dir().is_some(),
        "a fresh cgroup is born into"
    );
    // Born in it, and (without CLONE_INTO_CGROUP) joining it by its own
    // write.
    for born in [true, false] {
        super::set_clone_into_cgroup(born);
        let pid = sleeper(&ChildContext::joining(&cg), None);
        let own = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
        let pids = cg.pids();
        stop(pid);
        super::set_clone_into_cgroup(true);
        assert!(own.contains("/plain"), "{own}");
        assert_eq!(pids, [pid]);
    }
    // A context that sets something is kept whole.
    let nice = child_context(
        &ctx(&[("Nice", "5")]),
        &Params {
            cgroup: Some(&cg),
            ..Params::default()
        },
    );
    assert!(!nice.is_joining());
    cleanup(&cg, &dir);
}

#[test]
fn a_killed_cgroup_is_made_again_or_joined_never_born_into() {
    let _g = process_lock();
    let (cgroups, dir) = test_cgroups("rekill");
    let make = || {
        cgroups
            .create("svc", &Default::default(), None, 0, 0)
            .unwrap_or_else(|(k, e)| panic!("{k:?}: {e}"))
    };
    let cg = make();
    assert!(cg.fresh());
    // Killed and empty: the next start removes it and makes it again.
    cg.kill().unwrap();
    let cg = make();
    assert!(cg.fresh());
    // Killed, with an empty cgroup the unit made below it: both removed,
    // made again.
    std::fs::create_dir(cg.dir().join("sub")).unwrap();
    cg.kill().unwrap();
    let cg = make();
    assert!(cg.fresh() && !cg.dir().join("sub").exists());
    // Killed while it cannot be removed (a process below it, as while
    // killed processes are still dying): reused, and its child joins it
    // (one born in it would be killed before its execve: the spawn
    // would fail).
    std::fs::create_dir(cg.dir().join("sub")).unwrap();
    cg.kill().unwrap();
    let plain = child_context(&ServiceContext::default(), &Params::default());
    let busy = sleeper(&plain, None);
    std::fs::write(cg.dir().join("sub/cgroup.procs"), busy.to_string()).unwrap();
    let cg = make();
    assert!(!cg.fresh());
    let cc = child_context(
        &ServiceContext::default(),
        &Params {
            cgroup: Some(&cg),
            ..Params::default()
        },
    );
    let pid = sleeper(&cc, None);
    let own = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap();
    let name = status(pid, "Name");
    stop(pid);
    stop(busy);
    assert!(own.ends_with("/svc\n"), "{own}");
    assert_eq!(name, "sleep");
    wait_until("the cgroup below to empty", || {
        std::fs::read_to_string(cg.dir().join("sub/cgroup.procs")).is_ok_and(|p| p.is_empty())
    });
    std::fs::remove_dir(cg.dir().join("sub")).unwrap();
    cleanup(&cg, &dir);
}

#[test]
fn a_signal_reaches_every_process_of_the_cgroup() {
    let _g = process_lock();
    let (cg, dir, cc) = unit_cgroup("signal", "db");
    let sys = RealSys::new();
    let a = argv(&["/bin/sh", "-c", "sleep 600 & sleep 600 & wait"]);
    let e = env();
    let pid = sys.spawn(&SpawnRequest::new(&a, &e).context(&cc)).unwrap();
    wait_until("three processes in the cgroup", || cg.pids().len() == 3);
    assert_eq!(cg.signal(libc::SIGTERM), 3);
    assert_eq!(
        wait_for(&sys, pid),
        ExitStatus::Signaled {
            signal: libc::SIGTERM,
            core_dumped: false
        }
    );
    wait_until("the cgroup to empty", || !cg.populated());
    cleanup(&cg, &dir);
}

/// A process in a cgroup below the unit's own (a delegated unit's
/// manager's, or one `AttachProcessesToUnit` moved there) gets the
/// unit's signal too, as under systemd.
#[test]
fn a_signal_reaches_the_cgroups_below_the_units_own() {
    let _g = process_lock();
    let (cg, dir, cc) = unit_cgroup("below", "deleg");
    let sys = RealSys::new();
    let a = argv(&["/bin/sleep", "600"]);
    let e = env();
    let pid = sys.spawn(&SpawnRequest::new(&a, &e).context(&cc)).unwrap();
    let sub = cg.dir().join("app.slice");
    std::fs::create_dir(&sub).unwrap();
    /// Killed by its PID at the end, whatever happens.
    struct Below(std::process::Child);
    impl Drop for Below {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut below = Below(
        std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap(),
    );
    std::fs::write(sub.join("cgroup.procs"), below.0.id().to_string()).unwrap();
    assert_eq!(
        cg.pids(),
        vec![pid],
        "only the unit's own process at its top"
    );
    assert_eq!(cg.signal_but(0, Reached::default()), 2);
    assert_eq!(cg.signal(libc::SIGTERM), 2);
    assert_eq!(
        wait_for(&sys, pid),
        ExitStatus::Signaled {
            signal: libc::SIGTERM,
            core_dumped: false
        }
    );
    let st = below.0.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&st),
        Some(libc::SIGTERM)
    );
    wait_until("the cgroup to empty", || !cg.populated());
    cleanup(&cg, &dir);
}

/// What a group or leader kill reached already is spared: no process of
/// the unit gets one signal twice (a daemon may take a second `SIGTERM`
/// as "stop now").
#[test]
fn a_signal_spares_what_the_group_kill_reached() {
    let _g = process_lock();
    let (cg, dir, cc) = unit_cgroup("spare", "db");
    let sys = RealSys::new();
    let a = argv(&["/bin/sh", "-c", "sleep 600 & setsid sleep 600 & wait"]);
    let e = env();
    let pid = sys.spawn(&SpawnRequest::new(&a, &e).context(&cc)).unwrap();
    // The shell leads its own group; the setsid sleep leaves it once
    // `setsid` has run.
    // SAFETY: getpgid(2) takes no pointers.
    let outside = || {
        cg.pids()
            .into_iter()
            .filter(|&p| unsafe { libc::getpgid(p) } != pid)
            .count()
    };
    wait_until("three processes, one outside the group", || {
        cg.pids().len() == 3 && outside() == 1
    });
    let group = Reached {
        group: Some(pid),
        process: None,
    };
    assert_eq!(
        cg.signal_but(0, group),
        1,
        "only the one that left the group"
    );
    let leader = Reached {
        group: None,
        process: Some(pid),
    };
    assert_eq!(cg.signal_but(0, leader), 2);
    assert_eq!(cg.signal_but(0, Reached::default()), 3);
    assert_eq!(cg.signal(libc::SIGKILL), 3);
    wait_for(&sys, pid);
    wait_until("the cgroup to empty", || !cg.populated());
    cleanup(&cg, &dir);
}

#[test]
fn limits_without_their_controller_name_the_key() {
    let (cgroups, dir) = test_cgroups("limits");
    let c = ctx(&[("MemoryMax", "64M")]);
    match cgroups.create("mem", &c.resources, None, 1 << 30, 1000) {
        // This host's cgroup2 has no controllers: the error names the key.
        Err((key, e)) => {
            assert_eq!(key, Some(Key::MemoryMax));
            assert!(e.contains("memory controller"), "{e}");
        }
        // A host with the memory controller: the limit is written.
        Ok(cg) => {
            let max = std::fs::read_to_string(cg.dir().join("memory.max")).unwrap();
            assert_eq!(max.trim(), (64u64 << 20).to_string());
            cg.remove().unwrap();
            cgroups.release(&cg);
        }
    }
    std::fs::remove_dir(&dir).unwrap();
}

/// The context of Debian's own `redis-server.service` (the package
/// installs it), every key flotilla has, as the unit file writes them; but
/// `LimitNOFILE=`, lowered from 65535 (raising the hard limit needs
/// `CAP_SYS_RESOURCE`, which the machines the suite runs on do not give
/// root), and a runtime directory of the test's own.
fn redis_context(runtime: &str) -> ServiceContext {
    let path = "/lib/systemd/system/redis-server.service";
    let text = std::fs::read_to_string(path)
        .expect("Debian's redis-server.service (apt-get install redis-server)");
    let unit = flotilla_systemd::parse(&text);
    let mut c = ServiceContext::from_service_options(&unit.options).unwrap();
    assert_eq!(
        c.directories.runtime.names,
        [PathBuf::from("redis")],
        "{path} changed"
    );
    c.set(Key::RuntimeDirectory, "").unwrap();
    c.set(Key::RuntimeDirectory, runtime).unwrap();
    c.set(Key::from_systemd("LimitNOFILE").unwrap(), "16384")
        .unwrap();
    c
}

#[test]
fn redis_runs_in_the_sandbox_of_its_debian_unit() {
    use std::io::Write;
    let _g = process_lock();
    let sys = RealSys::new();
    let user = sys
        .lookup_user("redis")
        .expect("the redis user (apt-get install redis-server)");
    let runtime = format!("flotilla-test-redis-{}", std::process::id());
    let c = redis_context(&runtime);
    let env_vars = dirs::environment(&c.directories);
    let run_dir = Path::new("/run").join(&runtime);
    let base = tempfile::tempdir().unwrap();
    let tmp = PrivateTmp::create(base.path(), "redis-server.service").unwrap();
    let (cgroups, cg_dir) = test_cgroups("redis");
    let cg = cgroups
        .create("redis-server.service", &c.resources, None, 0, 0)
        .unwrap_or_else(|(k, e)| panic!("{k:?}: {e}"));
    let params = Params {
        uid: Some(user.uid),
        cgroup: Some(&cg),
        private_tmp: Some(tmp.dir()),
        owner: Some((user.uid, user.gid)),
        credentials: None,
    };
    let cc = child_context(&c, &params);
    let socket = run_dir.join("redis.sock");
    let a = argv(&[
        "/usr/bin/redis-server",
        "--port",
        "0",
        "--unixsocket",
        socket.to_str().unwrap(),
        "--dir",
        run_dir.to_str().unwrap(),
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
    ]);
    let mut e = env();
    for (k, v) in &env_vars {
        e.set(k, v).unwrap();
    }
    let creds = user.credentials(None);
    let (r, w) = pipe();
    let req = SpawnRequest::new(&a, &e)
        .credentials(&creds)
        .stdout(Stdio::Fd(w.as_fd()))
        .stderr(Stdio::Fd(w.as_fd()))
        .context(&cc);
    let pid = sys
        .spawn(&req)
        .unwrap_or_else(|e| panic!("spawn redis: {e}"));
    drop(w);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut conn = loop {
        match std::os::unix::net::UnixStream::connect(&socket) {
            Ok(s) => break s,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(err) => {
                stop(pid);
                let mut out = String::new();
                let _ = std::fs::File::from(r).read_to_string(&mut out);
                panic!("redis never listened on {}: {err}\n{out}", socket.display());
            }
        }
    };
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    conn.write_all(b"PING\r\n").unwrap();
    let mut reply = [0u8; 7];
    conn.read_exact(&mut reply).unwrap();
    let fields: Vec<String> = ["NoNewPrivs", "CapBnd", "CapEff", "Seccomp", "Uid"]
        .iter()
        .map(|f| status(pid, f))
        .collect();
    let (mine, theirs) = (ns("self", "mnt"), ns(&pid.to_string(), "mnt"));
    let mountinfo = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
    let in_cgroup = cg.pids();
    stop(pid);
    let mut out = String::new();
    std::fs::File::from(r).read_to_string(&mut out).unwrap();
    assert_eq!(&reply, b"+PONG\r\n", "{out}");
    assert_eq!(fields[0], "1");
    assert_eq!(fields[1], "0000000000000000");
    assert_eq!(fields[2], "0000000000000000");
    assert_eq!(fields[3], "2");
    assert!(
        fields[4].starts_with(&user.uid.to_string()),
        "{}",
        fields[4]
    );
    assert_ne!(mine, theirs);
    let last_opts = |mp: &str| {
        mountinfo
            .lines()
            .rfind(|l| l.split(' ').nth(4) == Some(mp))
            .and_then(|l| l.split(' ').nth(5))
            .map(str::to_string)
    };
    assert!(last_opts("/").is_some_and(|o| o.starts_with("ro")));
    assert!(last_opts("/usr").is_none_or(|o| o.starts_with("ro")));
    assert!(last_opts("/tmp").is_some_and(|o| o.starts_with("rw")));
    assert!(last_opts(run_dir.to_str().unwrap()).is_some_and(|o| o.starts_with("rw")));
    assert_eq!(in_cgroup, [pid]);
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(&run_dir).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o7777), (user.uid, 0o2755));
    dirs::remove_runtime(&c.directories).unwrap();
    tmp.remove().unwrap();
    wait_until("the cgroup to empty", || !cg.populated());
    cleanup(&cg, &cg_dir);
}
