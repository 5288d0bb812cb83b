//! Real-process tests of the service context: processes spawned as root
//! with a context, checked from `/proc/PID/*` and from what they can do.
//! They need root (the suite runs as root); the cgroup tests, in
//! `context_tests/cgroups.rs`, a writable cgroup2.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::io::Read;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use flotilla_units::context::{Key, ServiceContext};

use crate::sys::context::{prepare, ChildContext, Host, Params};
use crate::sys::dirs::PrivateTmp;
use crate::sys::real::RealSys;
use crate::sys::tests::{process_lock, wait_for};
use crate::sys::*;

fn ctx(pairs: &[(&str, &str)]) -> ServiceContext {
    let mut c = ServiceContext::default();
    for (k, v) in pairs {
        let key = Key::from_name(k).unwrap_or_else(|| panic!("no key {k}"));
        c.set(key, v).unwrap_or_else(|e| panic!("{k}={v}: {e}"));
    }
    c
}

fn child_context(c: &ServiceContext, params: &Params<'_>) -> ChildContext {
    prepare(c, params, &Host::probe()).unwrap_or_else(|e| panic!("prepare: {e}"))
}

fn argv(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn env() -> Env {
    let mut env = Env::new();
    env.set("PATH", "/usr/sbin:/usr/bin:/sbin:/bin").unwrap();
    env
}

/// A pipe: (read end, write end).
fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2(2) into a valid array.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: fresh descriptors.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// Runs `cmd` in `context` (and `creds`), stdout and stderr into one pipe;
/// returns the exit status and the output.
fn run(cmd: &[&str], context: &ChildContext, creds: Option<&Credentials>) -> (ExitStatus, String) {
    let sys = RealSys::new();
    let (r, w) = pipe();
    let a = argv(cmd);
    let e = env();
    let mut req = SpawnRequest::new(&a, &e)
        .stdout(Stdio::Fd(w.as_fd()))
        .stderr(Stdio::Fd(w.as_fd()))
        .context(context);
    req.credentials = creds;
    let pid = sys
        .spawn(&req)
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    drop(w);
    let mut out = String::new();
    std::fs::File::from(r).read_to_string(&mut out).unwrap();
    (wait_for(&sys, pid), out)
}

/// Why a spawn of `/bin/true` in `context` fails (it must).
fn spawn_error(context: &ChildContext) -> String {
    let a = argv(&["/bin/true"]);
    let e = env();
    RealSys::new()
        .spawn(&SpawnRequest::new(&a, &e).context(context))
        .unwrap_err()
        .to_string()
}

/// Spawns `/bin/sleep 60` in `context`; the caller kills it.
fn sleeper(context: &ChildContext, creds: Option<&Credentials>) -> Pid {
    let a = argv(&["/bin/sleep", "60"]);
    let e = env();
    let mut req = SpawnRequest::new(&a, &e).context(context);
    req.credentials = creds;
    RealSys::new().spawn(&req).unwrap()
}

fn stop(pid: Pid) {
    let sys = RealSys::new();
    let _ = sys.kill(pid, libc::SIGKILL);
    wait_for(&sys, pid);
}

/// `FIELD:\tvalue` from `/proc/PID/status`.
fn status(pid: Pid, field: &str) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(field).and_then(|r| r.strip_prefix(':')))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| panic!("no {field} in status of {pid}"))
}

#[test]
fn privileges_capabilities_and_seccomp_show_in_status() {
    let _g = process_lock();
    let c = ctx(&[
        ("NoNewPrivileges", "yes"),
        ("CapabilityBoundingSet", "CAP_CHOWN CAP_NET_BIND_SERVICE"),
        ("SystemCallFilter", "@system-service"),
        ("RestrictAddressFamilies", "AF_UNIX AF_INET"),
    ]);
    let cc = child_context(&c, &Params::default());
    let pid = sleeper(&cc, None);
    let nnp = status(pid, "NoNewPrivs");
    let bnd = status(pid, "CapBnd");
    let mode = status(pid, "Seccomp");
    let filters = status(pid, "Seccomp_filters");
    stop(pid);
    assert_eq!(nnp, "1");
    assert_eq!(bnd, "0000000000000401");
    assert_eq!(mode, "2");
    // The allow list, and EAFNOSUPPORT for the families.
    assert_eq!(filters, "2");
}

#[test]
fn ambient_capabilities_reach_a_non_root_user() {
    let _g = process_lock();
    let c = ctx(&[("AmbientCapabilities", "CAP_NET_BIND_SERVICE")]);
    let params = Params {
        uid: Some(65534),
        ..Params::default()
    };
    let cc = child_context(&c, &params);
    let creds = Credentials {
        uid: Some(65534),
        gid: Some(65534),
        groups: Some(vec![65534]),
    };
    let pid = sleeper(&cc, Some(&creds));
    let (amb, eff, uid) = (
        status(pid, "CapAmb"),
        status(pid, "CapEff"),
        status(pid, "Uid"),
    );
    stop(pid);
    assert_eq!(amb, "0000000000000400");
    assert_eq!(eff, "0000000000000400");
    assert!(uid.starts_with("65534"), "{uid}");
    // And it can do what the capability allows: bind a port below 1024.
    let (st, out) = run(
        &[
            "python3",
            "-c",
            "import socket; s=socket.socket(); s.bind(('127.0.0.1', 981)); print('bound')",
        ],
        &cc,
        Some(&creds),
    );
    assert!(st.success() && out.contains("bound"), "{st}: {out}");
}

#[test]
fn limits_umask_nice_and_oom_score() {
    let _g = process_lock();
    let c = ctx(&[
        ("LimitNOFILE", "1234:2345"),
        ("LimitCORE", "0"),
        ("UMask", "0027"),
        ("Nice", "7"),
        ("OOMScoreAdjust", "321"),
    ]);
    let cc = child_context(&c, &Params::default());
    let pid = sleeper(&cc, None);
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let umask = status(pid, "Umask");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let oom = std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj")).unwrap();
    stop(pid);
    let line = |name: &str| {
        limits
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap()
    };
    assert_eq!(line("Max open files"), "Max open files 1234 2345 files");
    assert_eq!(line("Max core file size"), "Max core file size 0 0 bytes");
    assert_eq!(umask, "0027");
    // Field 19 of stat, counted after the command's closing parenthesis.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    assert_eq!(after.split(' ').nth(16), Some("7"), "{stat}");
    assert_eq!(oom.trim(), "321");
}

#[test]
fn a_syscall_filter_refuses_calls_with_an_error_or_kills() {
    let _g = process_lock();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("made");
    let t = target.to_str().unwrap();
    let c = ctx(&[("SystemCallFilter", "~mkdir:EACCES mkdirat:EACCES")]);
    let cc = child_context(&c, &Params::default());
    let (st, out) = run(&["/bin/mkdir", t], &cc, None);
    assert!(!st.success(), "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    assert!(!target.exists());
    // Without a context the same call works.
    let (st, _) = run(
        &["/bin/mkdir", t],
        &child_context(&ServiceContext::default(), &Params::default()),
        None,
    );
    assert!(st.success() && target.exists());
    // The default action kills with SIGSYS.
    let c = ctx(&[("SystemCallFilter", "~uname")]);
    let (st, _) = run(
        &["/bin/uname"],
        &child_context(&c, &Params::default()),
        None,
    );
    assert!(
        matches!(
            st,
            ExitStatus::Signaled {
                signal: libc::SIGSYS,
                ..
            }
        ),
        "{st}"
    );
    // SystemCallErrorNumber= gives the error instead.
    let c = ctx(&[
        ("SystemCallFilter", "~uname"),
        ("SystemCallErrorNumber", "EPERM"),
    ]);
    let (st, out) = run(
        &["/bin/uname"],
        &child_context(&c, &Params::default()),
        None,
    );
    assert!(
        !st.success() && out.contains("Operation not permitted"),
        "{st}: {out}"
    );
}

#[test]
fn address_families_and_personality_are_restricted() {
    let _g = process_lock();
    let c = ctx(&[
        ("RestrictAddressFamilies", "AF_UNIX"),
        ("LockPersonality", "yes"),
    ]);
    let cc = child_context(&c, &Params::default());
    let script = "import socket, errno, ctypes\n\
        socket.socket(socket.AF_UNIX).close(); print('unix ok')\n\
        try:\n    socket.socket(socket.AF_INET)\nexcept OSError as e:\n    print('inet', errno.errorcode[e.errno])\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        print('personality', libc.personality(0x0040000), errno.errorcode.get(ctypes.get_errno()))\n";
    let (st, out) = run(&["python3", "-c", script], &cc, None);
    assert!(st.success(), "{st}: {out}");
    assert!(out.contains("unix ok"), "{out}");
    assert!(out.contains("inet EAFNOSUPPORT"), "{out}");
    assert!(out.contains("personality -1 EPERM"), "{out}");
}

#[test]
fn memory_write_execute_and_suid_bits_are_refused() {
    let _g = process_lock();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    std::fs::write(&f, "").unwrap();
    let c = ctx(&[
        ("MemoryDenyWriteExecute", "yes"),
        ("RestrictSUIDSGID", "yes"),
    ]);
    let cc = child_context(&c, &Params::default());
    let script = format!(
        "import mmap, os, errno\n\
         try:\n    mmap.mmap(-1, 4096, prot=mmap.PROT_READ|mmap.PROT_WRITE|mmap.PROT_EXEC)\nexcept OSError as e:\n    print('wx', errno.errorcode[e.errno])\n\
         try:\n    os.chmod('{p}', 0o4755)\nexcept OSError as e:\n    print('suid', errno.errorcode[e.errno])\n\
         os.chmod('{p}', 0o755); print('plain ok')\n",
        p = f.display()
    );
    let (st, out) = run(&["python3", "-c", &script], &cc, None);
    assert!(st.success(), "{st}: {out}");
    assert!(out.contains("wx EPERM"), "{out}");
    assert!(out.contains("suid EPERM"), "{out}");
    assert!(out.contains("plain ok"), "{out}");
}

#[test]
fn restrict_namespaces_refuses_new_ones() {
    let _g = process_lock();
    let c = ctx(&[("RestrictNamespaces", "~net")]);
    let cc = child_context(&c, &Params::default());
    let (st, out) = run(&["unshare", "--net", "true"], &cc, None);
    assert!(
        !st.success() && out.contains("Operation not permitted"),
        "{st}: {out}"
    );
    let (st, out) = run(&["unshare", "--uts", "true"], &cc, None);
    assert!(st.success(), "{st}: {out}");
}

/// The mount namespace of `pid`, as `/proc/PID/ns/mnt` links it.
fn ns(pid: &str, kind: &str) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/ns/{kind}")).unwrap()
}

#[test]
fn protect_system_strict_private_tmp_and_paths() {
    let _g = process_lock();
    let base = tempfile::tempdir().unwrap();
    let unit = format!("ctx-test-{}", std::process::id());
    let tmp = PrivateTmp::create(base.path(), &unit).unwrap();
    // Not below /tmp or /var/tmp, which the unit sees privately.
    let work = tempfile::tempdir_in("/var/lib").unwrap();
    let rw = work.path().join("rw");
    let secret = work.path().join("secret");
    let secret_file = work.path().join("secret.txt");
    std::fs::create_dir(&rw).unwrap();
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("key"), "hidden").unwrap();
    std::fs::write(&secret_file, "hidden").unwrap();
    let c = ctx(&[
        ("ProtectSystem", "strict"),
        ("PrivateTmp", "yes"),
        ("ReadWritePaths", rw.to_str().unwrap()),
        (
            "InaccessiblePaths",
            &format!(
                "{} {} -/nonexistent",
                secret.display(),
                secret_file.display()
            ),
        ),
        ("ProtectHome", "yes"),
    ]);
    let cc = child_context(
        &c,
        &Params {
            private_tmp: Some(tmp.dir()),
            ..Params::default()
        },
    );
    let pid = sleeper(&cc, None);
    let (mine, theirs) = (ns("self", "mnt"), ns(&pid.to_string(), "mnt"));
    let mountinfo = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
    stop(pid);
    assert_ne!(mine, theirs, "no mount namespace of its own");
    let opts = |mp: &str| {
        mountinfo
            .lines()
            .rfind(|l| l.split(' ').nth(4) == Some(mp))
            .map(|l| l.split(' ').nth(5).unwrap().to_string())
            .unwrap_or_else(|| panic!("{mp} not a mount point:\n{mountinfo}"))
    };
    assert!(opts("/").starts_with("ro"), "{}", opts("/"));
    assert!(opts("/tmp").starts_with("rw"));
    assert!(opts(rw.to_str().unwrap()).starts_with("rw"));
    let script = format!(
        "touch /usr/flotilla-x 2>/dev/null && echo usr-writable; \
         echo a > /tmp/a && echo tmp-ok; ls -A /tmp; \
         echo b > {rw}/b && echo rw-ok; \
         cat {s}/key 2>/dev/null || echo secret-hidden; \
         cat {sf}; echo file-empty; \
         ls /home | wc -l",
        rw = rw.display(),
        s = secret.display(),
        sf = secret_file.display()
    );
    let (st, out) = run(&["/bin/sh", "-c", &script], &cc, None);
    assert!(st.success(), "{st}: {out}");
    assert!(!out.contains("usr-writable"), "{out}");
    assert!(out.contains("tmp-ok"), "{out}");
    assert!(out.contains("rw-ok") && rw.join("b").exists(), "{out}");
    assert!(out.contains("secret-hidden"), "{out}");
    assert!(out.contains("\nfile-empty"), "{out}");
    // The private /tmp is the unit's, kept across its processes and not the
    // host's.
    assert!(tmp.dir().join("tmp/a").exists());
    assert!(!Path::new("/tmp/a").exists() || std::fs::read_to_string("/tmp/a").unwrap() != "a\n");
    tmp.remove().unwrap();
    assert!(!tmp.dir().exists());
}

#[test]
fn kernel_tunables_control_groups_and_hostname_are_read_only() {
    let _g = process_lock();
    let c = ctx(&[
        ("ProtectKernelTunables", "yes"),
        ("ProtectControlGroups", "yes"),
        ("ProtectHostname", "yes"),
        ("ProtectKernelLogs", "yes"),
    ]);
    let cc = child_context(&c, &Params::default());
    let script = "echo 1 > /proc/sys/vm/drop_caches 2>/dev/null || echo sysctl-ro; \
                  mkdir /sys/fs/cgroup/x 2>/dev/null || echo cgroup-ro; \
                  hostname flotilla-test 2>/dev/null || echo hostname-refused; \
                  head -c1 /proc/kmsg 2>/dev/null; echo kmsg-$?";
    let (st, out) = run(&["/bin/sh", "-c", script], &cc, None);
    assert!(st.success(), "{st}: {out}");
    for want in ["sysctl-ro", "cgroup-ro", "hostname-refused", "kmsg-"] {
        assert!(out.contains(want), "{want}: {out}");
    }
    // /proc/kmsg is an empty file now: reading it gives nothing.
    assert!(out.contains("kmsg-0"), "{out}");
}

#[test]
fn private_devices_and_private_network() {
    let _g = process_lock();
    let c = ctx(&[("PrivateDevices", "yes"), ("PrivateNetwork", "yes")]);
    let cc = child_context(&c, &Params::default());
    let pid = sleeper(&cc, None);
    let (mine, theirs) = (ns("self", "net"), ns(&pid.to_string(), "net"));
    let bnd = status(pid, "CapBnd");
    stop(pid);
    assert_ne!(mine, theirs);
    // CAP_MKNOD (27) and CAP_SYS_RAWIO (17) are gone.
    let bnd = u64::from_str_radix(&bnd, 16).unwrap();
    assert_eq!(bnd & (1 << 27 | 1 << 17), 0);
    let (st, out) = run(&["/bin/sh", "-c", "ls /dev; echo x > /dev/null && echo null-ok; cat /proc/net/dev | tail -n +3; ip -o link show lo"], &cc, None);
    assert!(st.success(), "{st}: {out}");
    for dev in [
        "null", "zero", "full", "random", "urandom", "pts", "shm", "fd", "stdout",
    ] {
        assert!(out.lines().any(|l| l == dev), "{dev}: {out}");
    }
    assert!(
        !out.lines()
            .any(|l| l == "kmsg" || l == "mem" || l.starts_with("sd")),
        "{out}"
    );
    assert!(out.contains("null-ok"));
    let ifaces: Vec<&str> = out
        .lines()
        .filter(|l| l.contains(':') && l.contains("  "))
        .collect();
    assert!(out.contains("lo:"), "{out}");
    assert!(
        ifaces
            .iter()
            .all(|l| l.trim_start().starts_with("lo:") || l.contains("link/")),
        "{out}"
    );
    assert!(out.contains("UP"), "loopback is not up: {out}");
}

#[test]
fn a_missing_path_fails_the_spawn_naming_the_key_unless_it_has_a_dash() {
    let _g = process_lock();
    let c = ctx(&[("ReadOnlyPaths", "/nonexistent/flotilla")]);
    let cc = child_context(&c, &Params::default());
    assert_eq!(
        spawn_error(&cc),
        "/bin/true: ReadOnlyPaths= make /nonexistent/flotilla read-only: no such file or directory"
    );
    let c = ctx(&[("ReadOnlyPaths", "-/nonexistent/flotilla")]);
    let (st, _) = run(&["/bin/true"], &child_context(&c, &Params::default()), None);
    assert!(st.success());
}

#[test]
fn unsupported_keys_are_errors_that_name_them_unless_skippable() {
    let mut host = Host::probe();
    host.seccomp = false;
    host.mount_api = false;
    let c = ctx(&[("ProtectClock", "yes"), ("UMask", "0022")]);
    let err = prepare(&c, &Params::default(), &host).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ProtectClock= needs seccomp filters, which this kernel lacks"
    );
    let c = ctx(&[("ProtectSystem", "full")]);
    let err = prepare(&c, &Params::default(), &host).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ProtectSystem= needs the mount API of Linux 5.12 (open_tree, mount_setattr), which this kernel lacks"
    );
    let c = ctx(&[
        ("ProtectClock", "yes"),
        ("ProtectSystem", "full"),
        ("X-SkipUnsupported", "ProtectClock protect-system"),
    ]);
    let cc = prepare(&c, &Params::default(), &host).unwrap();
    assert_eq!(
        cc.notes(),
        [
            "ProtectSystem= skipped: needs the mount API of Linux 5.12 (open_tree, mount_setattr), which this kernel lacks",
            "ProtectClock= skipped: needs seccomp filters, which this kernel lacks",
        ]
    );
    assert!(cc.is_empty());
    let c = ctx(&[("SystemCallArchitectures", "native x86")]);
    let err = prepare(&c, &Params::default(), &Host::probe()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("SystemCallArchitectures= x86 system calls cannot be allowed"),
        "{err}"
    );
    let c = ctx(&[("PrivateTmp", "yes")]);
    let err = prepare(&c, &Params::default(), &Host::probe()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "PrivateTmp= the init made no private /tmp for this unit"
    );
    // Lowering the OOM score needs CAP_SYS_RESOURCE; raising it does not.
    let mut host = Host::probe();
    host.sys_resource = false;
    let err = prepare(
        &ctx(&[("OOMScoreAdjust", "-900"), ("X-Sandbox", "strict")]),
        &Params::default(),
        &host,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "OOMScoreAdjust= needs CAP_SYS_RESOURCE to lower the OOM score below 0, which the init does not hold (sandbox: strict)"
    );
    // As systemd does (the default policy): skipped, and named.
    let cc = prepare(
        &ctx(&[("OOMScoreAdjust", "-900")]),
        &Params::default(),
        &host,
    )
    .unwrap();
    let na = cc.not_applied();
    assert_eq!(na.len(), 1, "{na:?}");
    assert_eq!(na[0].setting, "OOMScoreAdjust");
    assert!(na[0].reason.contains("CAP_SYS_RESOURCE"), "{na:?}");
    assert!(cc.is_empty());
    assert!(prepare(
        &ctx(&[("OOMScoreAdjust", "500")]),
        &Params::default(),
        &host
    )
    .is_ok());
    let c = ctx(&[
        ("OOMScoreAdjust", "-900"),
        ("X-SkipUnsupported", "OOMScoreAdjust"),
        ("X-Sandbox", "strict"),
    ]);
    assert_eq!(
        prepare(&c, &Params::default(), &host).unwrap().notes(),
        ["OOMScoreAdjust= skipped: needs CAP_SYS_RESOURCE to lower the OOM score below 0, which the init does not hold"]
    );
}

#[test]
fn a_filter_that_refuses_execve() {
    let _g = process_lock();
    let a = argv(&["/bin/true"]);
    let e = env();
    // With an error, execve fails in the child: a spawn error.
    let c = ctx(&[("SystemCallFilter", "~execve:EPERM")]);
    let cc = child_context(&c, &Params::default());
    let err = RealSys::new()
        .spawn(&SpawnRequest::new(&a, &e).context(&cc))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "/bin/true: execve: operation not permitted"
    );
    // Killed at execve itself: the process is the unit's, and dies of it.
    let c = ctx(&[("SystemCallFilter", "~execve")]);
    let cc = child_context(&c, &Params::default());
    let sys = RealSys::new();
    let pid = sys.spawn(&SpawnRequest::new(&a, &e).context(&cc)).unwrap();
    assert!(matches!(
        wait_for(&sys, pid),
        ExitStatus::Signaled {
            signal: libc::SIGSYS,
            ..
        }
    ));
    assert!(sys.wait_any().unwrap().is_none());
}

mod cgroups;
mod credentials;
mod exec_users;
mod files;
mod stdin;

#[test]
fn cpu_and_io_scheduling() {
    let _g = process_lock();
    // The policy and real-time priority are fields 41 and 40 of stat; the
    // I/O class and priority are what ioprio_get gives.
    let ioprio = |pid: Pid| unsafe { libc::syscall(libc::SYS_ioprio_get, 1, pid) };
    let sched = |pid: Pid| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let after: Vec<String> = stat[stat.rfind(')').unwrap() + 2..]
            .split(' ')
            .map(str::to_owned)
            .collect();
        (after[37].clone(), after[38].clone())
    };
    let c = ctx(&[
        ("CPUSchedulingPolicy", "idle"),
        ("IOSchedulingClass", "idle"),
    ]);
    let pid = sleeper(&child_context(&c, &Params::default()), None);
    let ((rt, policy), io) = (sched(pid), ioprio(pid));
    stop(pid);
    assert_eq!((rt.as_str(), policy.as_str()), ("0", "5"), "SCHED_IDLE");
    assert_eq!(io, 3 << 13, "IOPRIO_CLASS_IDLE");
    let c = ctx(&[
        ("CPUSchedulingPolicy", "rr"),
        ("CPUSchedulingPriority", "20"),
        ("CPUSchedulingResetOnFork", "yes"),
        ("IOSchedulingPriority", "6"),
    ]);
    let pid = sleeper(&child_context(&c, &Params::default()), None);
    let ((rt, policy), io) = (sched(pid), ioprio(pid));
    stop(pid);
    // SCHED_RESET_ON_FORK does not show in stat's policy field.
    assert_eq!((rt.as_str(), policy.as_str()), ("20", "2"), "SCHED_RR 20");
    assert_eq!(io, 2 << 13 | 6, "best-effort 6");
}

#[test]
fn cpu_affinity_and_numa_policy() {
    let _g = process_lock();
    // The policy shows on each mapping of numa_maps (`bind:0`, `prefer:0`).
    let maps = |pid: Pid| std::fs::read_to_string(format!("/proc/{pid}/numa_maps")).unwrap();
    let c = ctx(&[
        ("CPUAffinity", "0"),
        ("NUMAPolicy", "bind"),
        ("NUMAMask", "0"),
    ]);
    let pid = sleeper(&child_context(&c, &Params::default()), None);
    let (cpus, numa) = (status(pid, "Cpus_allowed_list"), maps(pid));
    stop(pid);
    assert_eq!(cpus, "0");
    assert!(numa.lines().all(|l| l.contains(" bind:0")), "{numa}");
    // `numa`: the CPUs of the mask's nodes, as sysfs lists them; a mask
    // alone is the preferred policy.
    let node0 = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap();
    let c = ctx(&[("CPUAffinity", "numa"), ("NUMAMask", "0")]);
    let pid = sleeper(&child_context(&c, &Params::default()), None);
    let (cpus, numa) = (status(pid, "Cpus_allowed_list"), maps(pid));
    stop(pid);
    assert_eq!(cpus, node0.trim());
    assert!(numa.lines().all(|l| l.contains(" prefer:0")), "{numa}");
    // A policy the kernel would refuse fails the child with systemd's
    // status for it, naming the key.
    let c = ctx(&[("NUMAPolicy", "interleave")]);
    let a = argv(&["/bin/true"]);
    let e = env();
    let cc = child_context(&c, &Params::default());
    let err = RealSys::new()
        .spawn(&SpawnRequest::new(&a, &e).context(&cc))
        .unwrap_err();
    assert_eq!(err.exit_status(), Some(242), "{err}");
    assert!(err.to_string().contains("NUMAPolicy="), "{err}");
}

#[test]
fn realtime_policies_are_refused_and_sigpipe_is_ignored_unless_kept() {
    let _g = process_lock();
    // SCHED_FIFO and SCHED_RR refused, SCHED_BATCH allowed; and SIGPIPE:
    // ignored by default (a write to a closed pipe gets EPIPE), at its
    // default with IgnoreSIGPIPE=no (the writer dies of it).
    let script = "import os, errno\n\
        for name in ('SCHED_FIFO', 'SCHED_RR', 'SCHED_BATCH'):\n\
        \x20   p = getattr(os, name)\n\
        \x20   try:\n\
        \x20       os.sched_setscheduler(0, p, os.sched_param(1 if p != os.SCHED_BATCH else 0)); print(name, 'ok')\n\
        \x20   except OSError as e:\n\
        \x20       print(name, errno.errorcode[e.errno])\n\
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))\n";
    let c = ctx(&[("RestrictRealtime", "yes")]);
    let (st, out) = run(
        &["python3", "-c", script],
        &child_context(&c, &Params::default()),
        None,
    );
    assert!(st.success(), "{st}: {out}");
    assert!(out.contains("SCHED_FIFO EPERM"), "{out}");
    assert!(out.contains("SCHED_RR EPERM"), "{out}");
    assert!(out.contains("SCHED_BATCH ok"), "{out}");
    // Python ignores SIGPIPE itself: grep says what it inherited.
    let (st, out) = run(
        &["/bin/grep", "SigIgn", "/proc/self/status"],
        &child_context(&ServiceContext::default(), &Params::default()),
        None,
    );
    assert!(st.success(), "{st}: {out}");
    let ignored = |out: &str| {
        let mask = out
            .lines()
            .find_map(|l| l.strip_prefix("SigIgn:"))
            .map(|m| u64::from_str_radix(m.trim(), 16).unwrap())
            .unwrap();
        mask & (1 << (libc::SIGPIPE - 1)) != 0
    };
    assert!(ignored(&out), "SIGPIPE ignored by default: {out}");
    let c = ctx(&[("IgnoreSIGPIPE", "no")]);
    let (st, out) = run(
        &["/bin/grep", "SigIgn", "/proc/self/status"],
        &child_context(&c, &Params::default()),
        None,
    );
    assert!(st.success(), "{st}: {out}");
    assert!(!ignored(&out), "IgnoreSIGPIPE=no: {out}");
}

#[test]
fn private_mounts_alone_is_a_mount_namespace_of_its_own() {
    let _g = process_lock();
    let c = ctx(&[("PrivateMounts", "yes")]);
    let cc = child_context(&c, &Params::default());
    let pid = sleeper(&cc, None);
    let theirs = ns(&pid.to_string(), "mnt");
    stop(pid);
    assert_ne!(theirs, ns("self", "mnt"));
}

#[test]
fn protect_proc_hides_other_users_processes_and_proc_subset_the_kernels_files() {
    let _g = process_lock();
    let nobody = Credentials {
        uid: Some(65534),
        gid: Some(65534),
        groups: Some(vec![]),
    };
    let look = "for p in /proc/1 /proc/self /proc/meminfo; do \
                if [ -e $p ]; then echo \"$p seen\"; else echo \"$p hidden\"; fi; done";
    // Without the keys, user nobody sees PID 1 and the kernel's files.
    let (st, out) = run(
        &["/bin/sh", "-c", look],
        &child_context(&ServiceContext::default(), &Params::default()),
        Some(&nobody),
    );
    assert!(st.success(), "{st}: {out}");
    assert!(
        out.contains("/proc/1 seen") && out.contains("/proc/meminfo seen"),
        "{out}"
    );
    let c = ctx(&[("ProtectProc", "invisible"), ("ProcSubset", "pid")]);
    let (st, out) = run(
        &["/bin/sh", "-c", look],
        &child_context(&c, &Params::default()),
        Some(&nobody),
    );
    assert!(st.success(), "{st}: {out}");
    assert!(out.contains("/proc/1 hidden"), "{out}");
    assert!(out.contains("/proc/self seen"), "{out}");
    assert!(out.contains("/proc/meminfo hidden"), "{out}");
}

#[test]
fn as_systemd_raises_only_the_ambient_capabilities_the_init_holds() {
    use flotilla_units::context::caps::CapSet;
    let mut host = Host::probe();
    host.permitted = CapSet(1 << 10); // CAP_NET_BIND_SERVICE alone
    let c = ctx(&[("AmbientCapabilities", "CAP_NET_BIND_SERVICE CAP_SYS_TIME")]);
    let cc = prepare(&c, &Params::default(), &host).unwrap();
    let na = cc.not_applied();
    assert_eq!(na.len(), 1, "{na:?}");
    assert_eq!(na[0].setting, "AmbientCapabilities");
    assert!(
        na[0].reason.starts_with("CAP_SYS_TIME not applied")
            && na[0].reason.ends_with("CAP_NET_BIND_SERVICE kept"),
        "{na:?}"
    );
    let text = cc.to_string();
    assert!(text.contains("raise CAP_NET_BIND_SERVICE"), "{text}");
    assert!(!text.contains("CAP_SYS_TIME"), "{text}");
    // None held: no ambient step at all.
    host.permitted = CapSet::EMPTY;
    let cc = prepare(&c, &Params::default(), &host).unwrap();
    assert!(!cc.to_string().contains("AmbientCapabilities"), "{cc}");
    assert!(cc.not_applied()[0]
        .reason
        .ends_with("the service runs without ambient capabilities"));
}

#[test]
fn as_systemd_clamps_limits_and_leaves_a_restricting_mount_sandbox_out() {
    let mut host = Host::probe();
    host.sys_resource = false;
    host.sys_admin = false;
    let held = crate::sys::degrade::hard_limit(flotilla_units::context::limits::Rlimit::Nofile);
    let want = held.saturating_add(1000);
    let c = ctx(&[
        ("LimitNOFILE", &want.to_string()),
        ("ProtectSystem", "strict"),
        ("PrivateTmp", "yes"),
        ("ProtectKernelModules", "yes"),
    ]);
    let cc = prepare(&c, &Params::default(), &host).unwrap();
    let na = cc.not_applied();
    let names: Vec<&str> = na.iter().map(|n| n.setting.as_str()).collect();
    assert_eq!(
        names,
        [
            "LimitNOFILE",
            "PrivateTmp",
            "ProtectSystem",
            "ProtectKernelModules"
        ]
    );
    assert!(
        na[0].reason.contains(&format!("set to {held}:{held}")),
        "{na:?}"
    );
    assert!(na[3].reason.starts_with("applied in part"), "{na:?}");
    // No mount namespace step; the limit is set to the hard limit held.
    let text = cc.to_string();
    assert!(!text.contains("mount namespace"), "{text}");
    assert!(text.contains("LimitNOFILE= set the limit"), "{text}");
    // Strict: the same unit is refused, naming the first key.
    let c = ctx(&[("LimitNOFILE", &want.to_string()), ("X-Sandbox", "strict")]);
    let err = prepare(&c, &Params::default(), &host).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("LimitNOFILE= needs CAP_SYS_RESOURCE"),
        "{err}"
    );
    assert!(err.to_string().ends_with("(sandbox: strict)"), "{err}");
}

/// `BindPaths=` adds to what the service sees: where the namespace cannot
/// be made it is never left out with the restricting keys beside it, the
/// start fails naming it (systemd insists on the namespace for it too).
#[test]
fn as_systemd_refuses_a_bind_without_the_namespace() {
    let mut host = Host::probe();
    host.sys_admin = false;
    let c = ctx(&[("PrivateTmp", "yes"), ("BindPaths", "/run/f:/tmp/f")]);
    let err = prepare(&c, &Params::default(), &host).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("BindPaths= needs a private mount namespace"),
        "{err}"
    );
}

/// A refusal the parent did not foresee (here: the host is told it holds
/// `CAP_SYS_RESOURCE`, which this process may lack) is skipped by the
/// child and reported back through the memory it shares with the init.
#[test]
fn a_refused_oom_score_is_skipped_by_the_child_and_reported() {
    let _g = process_lock();
    let eff = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("CapEff:")
                .map(|v| u64::from_str_radix(v.trim(), 16).unwrap())
        })
        .unwrap();
    let mut host = Host::probe();
    host.sys_resource = true;
    let c = ctx(&[("OOMScoreAdjust", "-900")]);
    let cc = prepare(&c, &Params::default(), &host).unwrap();
    assert!(cc.not_applied().is_empty());
    let (st, _) = run(&["/bin/true"], &cc, None);
    assert!(st.success());
    let na = cc.not_applied();
    if eff & (1 << 24) != 0 {
        // With the privilege the kernel accepts it: nothing to report.
        assert!(na.is_empty(), "{na:?}");
    } else {
        assert_eq!(na.len(), 1, "{na:?}");
        assert_eq!(na[0].setting, "OOMScoreAdjust");
        assert!(na[0].reason.contains("denied by the kernel"), "{na:?}");
    }
}

/// `AppArmorProfile=`: a step only where AppArmor is enabled (this host's
/// probe decides; the test sets it both ways). Where no AppArmor takes
/// the request (none here), the child's write fails: a required profile
/// fails the spawn, an optional one (`-`) is passed over.
#[test]
fn apparmor_profile_only_where_apparmor_is_enabled_and_optional_with_a_dash() {
    let _g = process_lock();
    let optional = ctx(&[("AppArmorProfile", "-system_tor")]);
    let mut host = Host::probe();
    host.apparmor = false;
    let cc = prepare(&optional, &Params::default(), &host).unwrap();
    assert!(!cc.to_string().contains("AppArmorProfile"), "{cc}");
    host.apparmor = true;
    let cc = prepare(&optional, &Params::default(), &host).unwrap();
    assert!(
        cc.to_string()
            .contains("AppArmorProfile=-system_tor: change to the profile at execve"),
        "{cc}"
    );
    if Host::probe().apparmor {
        // A machine with AppArmor: the rest is for one without.
        return;
    }
    let (st, out) = run(&["/bin/echo", "ran"], &cc, None);
    assert_eq!((st, out.as_str()), (ExitStatus::Exited(0), "ran\n"));
    let required = ctx(&[("AppArmorProfile", "system_tor")]);
    let cc = prepare(&required, &Params::default(), &host).unwrap();
    let err = spawn_error(&cc);
    assert!(err.contains("AppArmorProfile=system_tor"), "{err}");
}
