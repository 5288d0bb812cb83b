//! A Debian 12 system container with flotilla as PID 1 under a real
//! container engine: Debian's podman with runc, rootful, podman's default
//! capabilities (no `CAP_SYS_ADMIN`, `CAP_SYS_RESOURCE`, `CAP_NET_ADMIN`
//! …). The image is built from the Debian root of contrib/debian/build
//! (the cache the VM test shares) by contrib/container/debian, with
//! `podman import`: no registry is needed.
//!
//! One container, its whole life:
//! 1. `podman start`; `podman exec CTR initctl status --json` until
//!    multi-user.target is up, from Debian's own units: ssh, cron,
//!    rsyslog, and redis and PostgreSQL installed from Debian's packages
//!    (their `postgresql@15-main.service` wanted by Debian's postgresql
//!    generator) running and answering; the units systemd skips in a container skipped by
//!    their own conditions (`ConditionVirtualization=!container`,
//!    `ConditionPathIsReadWrite=/sys`); no failed unit (what podman's
//!    capability set withholds is degraded as systemd degrades it, and
//!    named); `podman exec CTR systemctl status`;
//!    `/run/systemd/container` says `podman`, as systemd's PID 1 writes it.
//! 2. `podman stop`: every unit stopped in reverse order (ssh before the
//!    network target, rsyslog before its socket), the init's own exit well
//!    within the engine's timeout, and exit status 0 (docs/pid1.md: no
//!    unit had failed).
//! 3. `podman logs`: the boot and the stop.
//!
//! 4. Rootless: the same image, moved with `podman save`/`podman load`
//!    to an unprivileged user's storage (the test's user
//!    `flotilla-rootless`, made if missing with a range in `/etc/subuid`
//!    and `/etc/subgid`), boots under that user's podman in a user
//!    namespace to multi-user.target with no failed unit, and stops with
//!    status 0.
//!
//! Between 3 and 4, the same image with Debian's systemd as PID 1
//! (podman's systemd mode, `SIGRTMIN+3` to stop it), for the figures
//! printed side by side with flotilla's: `podman start` to
//! multi-user.target and to sshd answering, PID 1's `VmRSS`, `podman
//! stop`; if systemd cannot run on the host, the output says why (the
//! container's end, its log, systemd's journal). It runs on the test
//! machine (hybrid cgroups, runc): docs/pid1.md has the figures.
//!
//! Then the same image with Debian's `tini` as PID 1 running sshd alone
//! (PID 1's resident memory), and the time to sshd answering (its `SSH-`
//! banner, probed from the host in the container's network namespace)
//! under the three inits: the median of a few fresh boots of each, taken
//! in turn. tini's figure is what podman and runc take with no init work.
//! The containers and the image are removed at the end, on failure too (a
//! guard). scripts/test installs podman, runc and tini.

use crate::pid1_support;

use pid1_support::{bin_dir, report, wait_for, workspace};
use serde_json::Value;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Bounds a boot; a working one takes a second or two.
const BOOT: Duration = Duration::from_secs(120);
/// `podman stop -t`: the engine's SIGKILL comes after this.
const STOP_TIMEOUT: u64 = 30;
/// Runs podman; success, stdout, stderr.
fn podman(args: &[impl AsRef<std::ffi::OsStr>]) -> (bool, String, String) {
    outcome(
        Command::new("podman")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run podman"),
    )
}

/// Success, stdout, stderr.
fn outcome(out: std::process::Output) -> (bool, String, String) {
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The unprivileged user of the rootless run.
const ROOTLESS_USER: &str = "flotilla-rootless";

/// podman run as [`ROOTLESS_USER`], in its own runtime directory (there
/// may be no logind to make one): add the arguments.
fn rootless_podman() -> Command {
    let uid = user_id(ROOTLESS_USER).expect("the rootless user");
    let mut c = Command::new("runuser");
    c.args(["-u", ROOTLESS_USER, "--", "env"])
        .arg(format!("XDG_RUNTIME_DIR=/run/user/{uid}"))
        .arg(format!("HOME=/home/{ROOTLESS_USER}"))
        .arg("podman")
        .current_dir("/");
    c
}

/// Runs podman as [`ROOTLESS_USER`]; success, stdout, stderr.
fn podman_rootless(args: &[impl AsRef<std::ffi::OsStr>]) -> (bool, String, String) {
    outcome(
        rootless_podman()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run podman as the rootless user"),
    )
}

fn user_id(name: &str) -> Option<u32> {
    let out = Command::new("id").args(["-u", name]).output().ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// Makes [`ROOTLESS_USER`] if missing: a home, a range of 65,536
/// subordinate IDs above every other range, a runtime directory.
fn ensure_rootless_user() {
    if user_id(ROOTLESS_USER).is_none() {
        let ok = Command::new("useradd")
            .args(["--create-home", "--shell", "/bin/sh", ROOTLESS_USER])
            .status()
            .expect("run useradd")
            .success();
        assert!(ok, "useradd {ROOTLESS_USER}");
    }
    for file in ["/etc/subuid", "/etc/subgid"] {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        if text
            .lines()
            .any(|l| l.starts_with(&format!("{ROOTLESS_USER}:")))
        {
            continue;
        }
        let start = text
            .lines()
            .filter_map(|l| {
                let mut f = l.split(':').skip(1);
                Some(f.next()?.parse::<u64>().ok()? + f.next()?.parse::<u64>().ok()?)
            })
            .fold(200_000, u64::max);
        let line = format!("{ROOTLESS_USER}:{start}:65536\n");
        std::fs::write(file, text + &line).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    let uid = user_id(ROOTLESS_USER).expect("the rootless user");
    let run = format!("/run/user/{uid}");
    std::fs::create_dir_all(&run).expect("runtime directory");
    let ok = Command::new("chown")
        .args([&format!("{ROOTLESS_USER}:"), run.as_str()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "chown {run}");
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("chmod runtime directory");
}

/// Removes the test's containers and image when dropped, the rootless
/// user's too.
struct Cleanup {
    containers: Vec<String>,
    image: String,
    rootless: bool,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for c in &self.containers {
            podman(&["rm", "--force", "--time", "0", c]);
        }
        podman(&["rmi", "--force", &self.image]);
        if self.rootless {
            for c in &self.containers {
                podman_rootless(&["rm", "--force", "--time", "0", c]);
            }
            podman_rootless(&["rmi", "--force", &self.image]);
        }
    }
}

/// The `--ulimit` options: podman's defaults (nofile 1048576, nproc
/// 4194304) are above the hard limits of a machine without
/// `CAP_SYS_RESOURCE` (runc then fails with EPERM), so the container gets
/// this process's hard nofile limit and a modest nproc (podman lowers its
/// own hard nproc, which runc inherits, to the PID limit).
fn ulimits() -> Vec<String> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct it is given.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    assert_eq!(rc, 0, "getrlimit");
    let nofile = lim.rlim_max.min(1 << 20);
    vec![
        "--ulimit".into(),
        format!("nofile={nofile}:{nofile}"),
        "--ulimit".into(),
        "nproc=4096:4096".into(),
    ]
}

/// `podman create` of the system container `ctr` from `image`: runc,
/// `--systemd=always`, the stop timeout, `extra`, the limits of
/// [`ulimits`].
fn create_args(ctr: &str, image: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "create",
        "--name",
        ctr,
        "--runtime",
        "runc",
        "--systemd=always",
        "--stop-timeout",
        &STOP_TIMEOUT.to_string(),
    ]
    .map(String::from)
    .into();
    args.extend(extra.iter().map(|a| a.to_string()));
    args.extend(ulimits());
    args.push(image.to_string());
    args
}

/// Seconds since the epoch of a time as the init prints it
/// (`2026-11-23T22:06:00.618Z`), read by date(1).
fn epoch_of(stamp: &str) -> f64 {
    let out = Command::new("date")
        .args(["-u", "+%s.%N", "-d", stamp])
        .output()
        .expect("run date");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("date of {stamp:?}: {e}"))
}

fn epoch_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_secs_f64()
}

/// The container's `initctl status --json`, when it answers.
fn status(ctr: &str) -> Option<Value> {
    let (ok, out, _) = podman(&["exec", ctr, "initctl", "status", "--json"]);
    if !ok {
        return None;
    }
    serde_json::from_str(&out).ok()
}

fn unit<'a>(status: &'a Value, name: &str) -> &'a Value {
    status["units"]
        .as_array()
        .and_then(|us| us.iter().find(|u| u["unit"] == name))
        .unwrap_or_else(|| panic!("no unit {name} in the status"))
}

/// When sshd in container `ctr` first answered on TCP port 22 with its
/// `SSH-` banner (a socket listening for a unit that has not started does
/// not count): the time since `t0`, and since PID 1's start. Probed from
/// this host, by a thread that joins the container's network namespace
/// and tries every 2 ms: a `podman exec` per try took about 0.1 s of the
/// two cores the boot runs on, and measured no finer than that.
fn sshd_answering(ctr: &str, t0: Instant) -> Answered {
    let (ok, out, err) = podman(&["inspect", "--format", "{{.State.Pid}}", ctr]);
    assert!(ok, "podman inspect {ctr}: {err}");
    let pid: u32 = out
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{out:?}: {e}"));
    let pid1_start = start_time(pid);
    let ns = std::fs::File::open(format!("/proc/{pid}/ns/net"))
        .unwrap_or_else(|e| panic!("{ctr}'s network namespace: {e}"));
    let what = format!("sshd answering on port 22 in {ctr}");
    let probe = std::thread::spawn(move || {
        // SAFETY: setns(2) with a descriptor this thread owns; a network
        // namespace is joined by this thread alone.
        let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns: {}", std::io::Error::last_os_error());
        let deadline = t0 + BOOT;
        loop {
            if sshd_banner() {
                return (t0.elapsed(), clock_secs(libc::CLOCK_BOOTTIME));
            }
            assert!(
                Instant::now() < deadline,
                "timed out after {BOOT:?} waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    let (since_start, at) = probe
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
    Answered {
        since_start,
        since_pid1: at - pid1_start,
    }
}

/// When sshd first answered, as [`sshd_answering`] saw it.
#[derive(Clone, Copy)]
struct Answered {
    /// Since `podman start` was run.
    since_start: Duration,
    /// Since PID 1 started, in seconds (its start is known to the kernel's
    /// clock tick): the init's own part, without podman's.
    since_pid1: f64,
}

/// Whether something answers on 127.0.0.1:22 of this thread's network
/// namespace with sshd's `SSH-` banner.
fn sshd_banner() -> bool {
    use std::io::Read;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 22));
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut b = [0u8; 4];
    s.read_exact(&mut b).is_ok() && &b == b"SSH-"
}

/// The start of process `pid` (of this host's PID namespace) in seconds of
/// `CLOCK_BOOTTIME`, from its `/proc/PID/stat` (clock ticks since boot).
fn start_time(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_else(|e| panic!("/proc/{pid}/stat: {e}"));
    // The fields after the command, which is in parentheses: the start
    // time is field 22, the 20th after it.
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: f64 = after
        .split_whitespace()
        .nth(19)
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("/proc/{pid}/stat: {stat:?}"));
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks / hz
}

/// Clock `id` in seconds. `CLOCK_BOOTTIME` is the clock of
/// `/proc/PID/stat`'s start; `CLOCK_MONOTONIC` that of systemd's
/// `…TimestampMonotonic` properties (a container has no time namespace of
/// its own under podman).
fn clock_secs(id: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the struct it is given.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// PID 1's resident memory in the container, in KiB.
fn pid1_rss_kib(ctr: &str) -> u64 {
    let (ok, out, err) = podman(&["exec", ctr, "cat", "/proc/1/status"]);
    assert!(ok, "read /proc/1/status: {err}");
    out.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in {out}"))
}

/// Every failed unit of the container with its status and its last log
/// lines (`initctl logs UNIT -n 20`): what a failing check prints, so that
/// a unit failing on a loaded machine is named with why. Empty when none
/// failed.
fn failed_units(ctr: &str) -> String {
    let Some(st) = status(ctr) else {
        return "(initctl status --json did not answer)".to_string();
    };
    let mut out = String::new();
    for u in st["units"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|u| u["state"] == "failed")
    {
        let name = u["unit"].as_str().unwrap_or("?");
        let (_, log, _) = podman(&["exec", ctr, "initctl", "logs", name, "-n", "20"]);
        out.push_str(&format!(
            "{name}: {} (since {})\n{log}\n",
            u["status"], u["since"]
        ));
    }
    out
}

/// Where `needle` first shows in the lines, to compare orders.
fn line_of(lines: &[&str], needle: &str) -> usize {
    lines
        .iter()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in the container's log"))
}

/// Debian's redis and PostgreSQL, from their packages' own units, as the
/// container runs them: both answer, and what podman's capability set
/// withholds from them is named (redis's `LimitNOFILE=65535` above the
/// hard limit the engine gives, PostgreSQL's `OOMScoreAdjust=-900`, which
/// needs `CAP_SYS_RESOURCE`).
fn check_databases(ctr: &str, st: &Value) {
    let named = |u: &Value, setting: &str| {
        u["not_applied"]
            .as_array()
            .is_some_and(|l| l.iter().any(|n| n["setting"] == setting))
    };
    let redis = unit(st, "redis-server.service");
    assert_eq!(redis["state"], "running", "{redis}");
    assert!(named(redis, "LimitNOFILE"), "{redis}");
    let (ok, pong, err) = podman(&["exec", ctr, "redis-cli", "ping"]);
    assert!(ok && pong.trim() == "PONG", "redis-cli ping: {pong} {err}");
    // The cluster the package made, started by the instance Debian's
    // generator wants.
    let (ok, version, err) = podman(&["exec", ctr, "ls", "/etc/postgresql"]);
    assert!(ok, "ls /etc/postgresql: {err}");
    let name = format!("postgresql@{}-main.service", version.trim());
    let pg = wait_for(Duration::from_secs(60), "postgresql running", || {
        status(ctr)
            .map(|s| unit(&s, &name).clone())
            .filter(|u| u["state"] == "running")
    });
    assert!(named(&pg, "OOMScoreAdjust"), "{pg}");
    let answer = wait_for(Duration::from_secs(30), "psql answers", || {
        let (ok, out, _) = podman(&[
            "exec",
            ctr,
            "runuser",
            "-u",
            "postgres",
            "--",
            "psql",
            "-At",
            "-c",
            "select 40 + 2",
        ]);
        ok.then(|| out.trim().to_string())
    });
    assert_eq!(answer, "42");
    // What an administrator does after editing pg_hba.conf: Debian's
    // systemctl reloads postgresql.service, whose reload the cluster's
    // unit takes too (its `ReloadPropagatedFrom=postgresql.service`).
    let (ok, out, err) = podman(&["exec", ctr, "systemctl", "reload", "postgresql"]);
    assert!(ok, "systemctl reload postgresql: {out} {err}");
    let pg = wait_for(Duration::from_secs(30), "the cluster reloaded", || {
        status(ctr)
            .map(|s| unit(&s, &name).clone())
            .filter(|u| u["state"] == "running" && u["status"] == "reloaded")
    });
    assert_eq!(
        pg["pid"],
        unit(st, &name)["pid"],
        "a reload keeps the process"
    );
}

/// The image under the rootless user's podman: moved to its storage,
/// booted in a user namespace to multi-user.target with no failed unit,
/// stopped with status 0. The time to the target and the stop's.
fn boot_rootless(image: &str, ctr: &str) -> (Duration, Duration) {
    let mut save = Command::new("podman")
        .args(["save", image])
        .stdout(Stdio::piped())
        .spawn()
        .expect("podman save");
    let load = rootless_podman()
        .arg("load")
        .stdin(save.stdout.take().expect("save's output"))
        .output()
        .expect("podman load");
    assert!(save.wait().is_ok_and(|s| s.success()), "podman save");
    assert!(
        load.status.success(),
        "podman load as {ROOTLESS_USER}: {}",
        String::from_utf8_lossy(&load.stderr)
    );
    let stop_timeout = STOP_TIMEOUT.to_string();
    let (ok, _, err) = podman_rootless(&create_args(ctr, image, &[]));
    assert!(ok, "podman create (rootless): {err}");
    let t0 = Instant::now();
    let (ok, _, err) = podman_rootless(&["start", ctr]);
    assert!(ok, "podman start (rootless): {err}");
    let st = wait_for(BOOT, "multi-user.target up (rootless)", || {
        let (ok, out, _) = podman_rootless(&["exec", ctr, "initctl", "status", "--json"]);
        let st: Value = serde_json::from_str(&out).ok().filter(|_| ok)?;
        (unit(&st, "multi-user.target")["state"] == "running").then_some(st)
    });
    let up = t0.elapsed();
    let failed: Vec<String> = st["units"]
        .as_array()
        .expect("units")
        .iter()
        .filter(|u| u["state"] == "failed")
        .map(|u| format!("{} {}", u["unit"], u["status"]))
        .collect();
    assert!(failed.is_empty(), "failed units (rootless): {failed:?}");
    // In a user namespace: root inside is the user's subordinate range.
    let (ok, map, err) = podman_rootless(&["exec", ctr, "cat", "/proc/1/uid_map"]);
    assert!(ok, "uid_map: {err}");
    let first = map.split_whitespace().take(3).collect::<Vec<_>>();
    assert_eq!(first.first(), Some(&"0"), "{map}");
    assert_ne!(first.get(1), Some(&"0"), "not in a user namespace: {map}");
    let (ok, out, err) = podman_rootless(&["exec", ctr, "systemctl", "is-system-running"]);
    assert!(
        ok && out.trim() == "running",
        "is-system-running: {out} {err}"
    );
    let t = Instant::now();
    let (ok, _, err) = podman_rootless(&["stop", "--time", &stop_timeout, ctr]);
    assert!(ok, "podman stop (rootless): {err}");
    let stop = t.elapsed();
    let (ok, code, err) = podman_rootless(&["inspect", "--format", "{{.State.ExitCode}}", ctr]);
    assert!(ok, "podman inspect (rootless): {err}");
    assert_eq!(code.trim(), "0", "the init's exit status (rootless)");
    (up, stop)
}

/// `podman create` of `ctr` from `image` with Debian's static tini as PID 1
/// (from the host, read-only) and sshd its only child: what podman and runc
/// take to start sshd with no init work.
fn tini_create_args(ctr: &str, image: &str, limits: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "create",
        "--name",
        ctr,
        "--runtime",
        "runc",
        "--volume",
        "/usr/bin/tini-static:/usr/local/sbin/tini:ro",
        "--entrypoint",
        "/usr/local/sbin/tini",
    ]
    .map(String::from)
    .into();
    args.extend(limits.iter().cloned());
    args.extend(
        [
            image,
            "--",
            "/bin/sh",
            "-c",
            "mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e",
        ]
        .map(String::from),
    );
    args
}

/// How many boots of each init [`sshd_rounds`] takes the median of.
const ROUNDS: usize = 5;

/// Time to sshd answering under flotilla, Debian's systemd and tini (sshd
/// alone), in that order: the median of [`ROUNDS`] boots of each, taken in
/// turn so that each init boots under the same load (the machine's load
/// moves more between minutes than between inits). Each boot is a new
/// container `ctrs[i]`, removed at once: only the time to sshd is wanted.
fn sshd_rounds(image: &str, ctrs: &[String; 3], limits: &[String]) -> [Answered; 3] {
    let systemd = [
        "--stop-signal",
        "RTMIN+3",
        "--entrypoint",
        "/lib/systemd/systemd",
    ];
    let create = [
        create_args(&ctrs[0], image, &[]),
        create_args(&ctrs[1], image, &systemd),
        tini_create_args(&ctrs[2], image, limits),
    ];
    let mut seen: [Vec<Answered>; 3] = Default::default();
    for _ in 0..ROUNDS {
        for (i, args) in create.iter().enumerate() {
            let (ok, _, err) = podman(args);
            assert!(ok, "podman create {}: {err}", ctrs[i]);
            let t0 = Instant::now();
            let (ok, _, err) = podman(&["start", &ctrs[i]]);
            assert!(ok, "podman start {}: {err}", ctrs[i]);
            seen[i].push(sshd_answering(&ctrs[i], t0));
            let (ok, _, err) = podman(&["rm", "--force", "--time", "0", &ctrs[i]]);
            assert!(ok, "podman rm {}: {err}", ctrs[i]);
        }
    }
    seen.map(|mut s| {
        s.sort_by_key(|a| a.since_start);
        let mid = s[s.len() / 2];
        let mut own: Vec<f64> = s.iter().map(|a| a.since_pid1).collect();
        own.sort_by(f64::total_cmp);
        Answered {
            since_start: mid.since_start,
            since_pid1: own[own.len() / 2],
        }
    })
}

/// The same root with Debian's systemd as PID 1, for the figures beside
/// flotilla's.
struct SystemdRun {
    to_target: f64,
    rss: u64,
    stop: Duration,
    exit: String,
    failed: String,
}

/// The image with Debian's systemd as PID 1 (`--entrypoint
/// /lib/systemd/systemd` under podman's systemd mode, with systemd's own
/// stop signal `SIGRTMIN+3`: the image's `SIGTERM` makes systemd re-execute
/// itself): time to multi-user.target (systemd's own
/// `ActiveEnterTimestampMonotonic` of it), PID 1's memory, the stop; or,
/// when systemd cannot run here, why (the container's end, its log, and
/// systemd's own account when it still answers).
fn boot_systemd(image: &str, ctr: &str) -> Result<SystemdRun, String> {
    let args = create_args(
        ctr,
        image,
        &[
            "--stop-signal",
            "RTMIN+3",
            "--entrypoint",
            "/lib/systemd/systemd",
        ],
    );
    let (ok, _, err) = podman(&args);
    assert!(ok, "podman create (systemd): {err}");
    let (t0, m0) = (Instant::now(), clock_secs(libc::CLOCK_MONOTONIC));
    let (ok, _, err) = podman(&["start", ctr]);
    if !ok {
        return Err(format!("podman start failed: {err}"));
    }
    // Polls `probe` until it answers, while the container runs.
    let until = |what: &str, probe: &mut dyn FnMut() -> Option<f64>| -> Result<f64, String> {
        loop {
            if let Some(v) = probe() {
                return Ok(v);
            }
            let (_, running, _) = podman(&["inspect", "--format", "{{.State.Running}}", ctr]);
            if running.trim() != "true" || t0.elapsed() > BOOT {
                return Err(format!("no {what}: {}", why_not(ctr)));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let to_target = until("multi-user.target", &mut || {
        let (_, out, _) = podman(&[
            "exec",
            ctr,
            "systemctl",
            "show",
            "-P",
            "ActiveEnterTimestampMonotonic",
            "multi-user.target",
        ]);
        let us: u64 = out.trim().parse().ok().filter(|&us| us > 0)?;
        Some(us as f64 / 1e6 - m0)
    })?;
    let (_, failed, _) = podman(&[
        "exec",
        ctr,
        "systemctl",
        "list-units",
        "--failed",
        "--plain",
        "--no-legend",
    ]);
    let rss = pid1_rss_kib(ctr);
    let t = Instant::now();
    let (ok, _, err) = podman(&["stop", "--time", &STOP_TIMEOUT.to_string(), ctr]);
    assert!(ok, "podman stop (systemd): {err}");
    let stop = t.elapsed();
    let (_, exit, _) = podman(&["inspect", "--format", "{{.State.ExitCode}}", ctr]);
    Ok(SystemdRun {
        to_target,
        rss,
        stop,
        exit: exit.trim().to_string(),
        failed: failed
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .collect::<Vec<_>>()
            .join(" "),
    })
}

/// Why systemd did not come up in `ctr`: the container's state and exit
/// status, the end of its log, and, while it runs, systemd's own state
/// and the warnings of its journal.
fn why_not(ctr: &str) -> String {
    let (_, state, _) = podman(&[
        "inspect",
        "--format",
        "{{.State.Status}}, exit status {{.State.ExitCode}} {{.State.Error}}",
        ctr,
    ]);
    let (_, out, err) = podman(&["logs", "--tail", "20", ctr]);
    let mut why = format!("container {}; its log:\n{out}{err}", state.trim());
    let (ok, running, _) = podman(&["exec", ctr, "systemctl", "is-system-running"]);
    if ok || !running.is_empty() {
        let (_, journal, _) = podman(&[
            "exec",
            ctr,
            "journalctl",
            "-b",
            "-p",
            "warning",
            "-n",
            "20",
            "--no-pager",
        ]);
        why.push_str(&format!(
            "systemctl is-system-running: {}\n{journal}",
            running.trim()
        ));
    }
    why
}

#[test]
fn debian_system_container_boots_and_stops_under_podman() {
    // One VM or whole system at a time in this binary (`heavy`).
    let _heavy = flotilla_tests::heavy();
    let id = std::process::id();
    let image = format!("localhost/flotilla-test-{id}:latest");
    let ctr = format!("flotilla-test-{id}");
    let tini_ctr = format!("flotilla-tini-{id}");
    let systemd_ctr = format!("flotilla-systemd-{id}");
    let round_ctrs = [&ctr, &systemd_ctr, &tini_ctr].map(|c| format!("{c}-round"));
    let mut cleanup = Cleanup {
        containers: [&ctr, &tini_ctr, &systemd_ctr]
            .into_iter()
            .chain(&round_ctrs)
            .cloned()
            .collect(),
        image: image.clone(),
        rootless: false,
    };

    // The image: the shared Debian root plus flotilla (the musl build of
    // the VM test, in its own target directory).
    let target = bin_dir().parent().expect("target dir").to_path_buf();
    let t = Instant::now();
    let out = Command::new(workspace().join("contrib/container/debian"))
        .arg("--cache")
        .arg(target.join("debian"))
        .args(["--tag", &image])
        .args(["--with", "container"])
        .env("CARGO_TARGET_DIR", target.join("image-build"))
        .stderr(Stdio::inherit())
        .output()
        .expect("run contrib/container/debian");
    assert!(out.status.success(), "contrib/container/debian failed");
    report(&format!(
        "container: image built in {:.1} s",
        t.elapsed().as_secs_f64()
    ));

    let limits = ulimits();
    let stop_timeout = STOP_TIMEOUT.to_string();
    let (ok, _, err) = podman(&create_args(&ctr, &image, &[]));
    assert!(ok, "podman create: {err}");

    // 1. The boot.
    let (t0, e0) = (Instant::now(), epoch_now());
    let (ok, _, err) = podman(&["start", &ctr]);
    assert!(ok, "podman start: {err}");
    let sshd = sshd_answering(&ctr, t0);
    let st = wait_for(BOOT, "multi-user.target up", || {
        status(&ctr).filter(|s| unit(s, "multi-user.target")["state"] == "running")
    });
    // Debian's package names default.target (graphical.target here), as
    // systemd boots it; multi-user.target is part of it.
    assert_eq!(st["target"], "default.target");
    assert_eq!(st["pid1"], true, "{st}");
    let since = unit(&st, "multi-user.target")["since"]
        .as_str()
        .expect("since")
        .to_string();
    let to_target = epoch_of(&since) - e0;
    for name in ["ssh.service", "cron.service", "rsyslog.service"] {
        assert_eq!(unit(&st, name)["state"], "running", "{name}");
    }
    check_databases(&ctr, &st);
    // Skipped by Debian's own conditions, as systemd does in a container.
    for (name, why) in [
        ("acpid.service", "ConditionVirtualization=!container"),
        ("kernel-fs", "ConditionVirtualization=!container"),
        ("systemd-udevd.service", "ConditionPathIsReadWrite=/sys"),
        ("dev-hugepages.mount", "ConditionCapability=CAP_SYS_ADMIN"),
    ] {
        let u = unit(&st, name);
        assert_eq!(u["skipped"], true, "{name}: {u}");
        assert!(u["status"].as_str().unwrap_or("").contains(why), "{u}");
    }
    // No unit fails: what podman's capability set withholds is degraded
    // as systemd degrades it, and named.
    let failed = failed_units(&ctr);
    assert!(failed.is_empty(), "failed units:\n{failed}");
    // journald's device list needs a cgroup the container does not give:
    // it runs without it, as under systemd, and says so.
    let journald = unit(&st, "systemd-journald.service");
    assert_eq!(journald["state"], "running", "{journald}");
    assert!(
        journald["not_applied"]
            .as_array()
            .is_some_and(|l| l.iter().any(|n| n["setting"] == "DeviceAllow")),
        "{journald}"
    );
    // dbus's only setting the container withholds: named too, though it
    // leaves the service nothing else to set up.
    let dbus = unit(&st, "dbus.service");
    assert!(
        dbus["not_applied"]
            .as_array()
            .is_some_and(|l| l.iter().any(|n| n["setting"] == "OOMScoreAdjust")),
        "{dbus}"
    );
    let (ok, out, err) = podman(&["exec", &ctr, "systemctl", "status"]);
    assert!(ok, "systemctl status: {err}");
    // Debian's systemctl, over /run/systemd/private: the machine's state
    // and when its init started.
    // A unit that failed after the status above (a timer's service, say)
    // is named with its last lines.
    assert!(
        out.contains("State: running"),
        "{out}\nfailed units:\n{}",
        failed_units(&ctr)
    );
    let since = out.lines().find(|l| l.trim_start().starts_with("Since:"));
    assert!(
        since.is_some_and(|l| !l.contains("(null)")),
        "{since:?}\n{out}"
    );
    let (ok, out, _) = podman(&["exec", &ctr, "systemctl", "is-active", "ssh.service"]);
    assert!(ok && out.trim() == "active", "systemctl is-active: {out}");
    // What systemd's PID 1 leaves for processes that cannot read its
    // environment.
    let (ok, out, err) = podman(&["exec", &ctr, "cat", "/run/systemd/container"]);
    assert!(
        ok && out == "podman",
        "/run/systemd/container: {out:?} {err}"
    );
    let rss = pid1_rss_kib(&ctr);

    // 2. The stop: within the timeout, in order, the documented status.
    let t = Instant::now();
    let (ok, _, err) = podman(&["stop", "--time", &stop_timeout, &ctr]);
    assert!(ok, "podman stop: {err}");
    let stop = t.elapsed();
    assert!(
        stop < Duration::from_secs(STOP_TIMEOUT / 2),
        "the stop took {stop:?}"
    );
    let (ok, code, err) = podman(&["inspect", "--format", "{{.State.ExitCode}}", &ctr]);
    assert!(ok, "podman inspect: {err}");
    assert_eq!(code.trim(), "0", "the init's exit status");

    // 3. The log: the boot, then the stop in reverse dependency order.
    let (ok, log, err) = podman(&["logs", &ctr]);
    assert!(ok, "podman logs: {err}");
    let log = format!("{log}{err}");
    let lines: Vec<&str> = log.lines().collect();
    let at = |n: &str| line_of(&lines, n);
    at("as PID 1 in a container");
    at("target default.target");
    assert!(at("started ssh.service") < at("started multi-user.target"));
    let term = at("SIGTERM: stopping every unit");
    assert!(term > at("started multi-user.target"));
    assert!(at("stopped ssh.service") < at("stopped network.target"));
    assert!(at("stopped rsyslog.service") < at("stopped syslog.socket"));
    assert!(at("stopped cron.service") < at("stopped remote-fs.target"));
    let end = at("init: every unit stopped");
    assert!(term < end);
    at("init: exiting with status 0");

    // The same image with Debian's systemd as PID 1, for the figures.
    let systemd = boot_systemd(&image, &systemd_ctr);

    // 4. Rootless.
    ensure_rootless_user();
    cleanup.rootless = true;
    let rootless = boot_rootless(&image, &ctr);

    // The same image with tini as PID 1 and sshd its one child.
    let (ok, _, err) = podman(&tini_create_args(&tini_ctr, &image, &limits));
    assert!(ok, "podman create tini: {err}");
    let t0 = Instant::now();
    let (ok, _, err) = podman(&["start", &tini_ctr]);
    assert!(ok, "podman start tini: {err}");
    let tini_sshd = sshd_answering(&tini_ctr, t0);
    let tini_rss = pid1_rss_kib(&tini_ctr);
    let (ok, _, err) = podman(&["stop", "--time", "10", &tini_ctr]);
    assert!(ok, "podman stop tini: {err}");
    podman(&["rm", "--force", &tini_ctr]);

    // Time to sshd, the three side by side, once systemd has shown it
    // runs here.
    let rounds = systemd
        .is_ok()
        .then(|| sshd_rounds(&image, &round_ctrs, &limits));

    report(&format!(
        "container: flotilla: sshd answering {:.2} s after podman start \
         ({:.2} s after PID 1's), multi-user.target {:.2} s ({} units), PID 1 RSS {} KiB, \
         stop {:.2} s",
        sshd.since_start.as_secs_f64(),
        sshd.since_pid1,
        to_target,
        st["units"].as_array().map_or(0, Vec::len),
        rss,
        stop.as_secs_f64()
    ));
    match &systemd {
        Ok(s) => {
            report("container: the same Debian root,   flotilla     systemd 252");
            report(&format!(
                "container:   podman start to multi-user.target {:>7.2} s {:>9.2} s",
                to_target, s.to_target
            ));
            if let Some([f, d, t]) = rounds {
                let start = |a: &Answered| a.since_start.as_secs_f64();
                report(&format!(
                    "container:   podman start to sshd answering    {:>7.2} s {:>9.2} s  \
                     (flotilla {:.2}x systemd's, target 0.5x; tini with sshd alone {:.2} s, \
                     {:.2}x: podman's own start, the floor; medians of {ROUNDS} boots each)",
                    start(&f),
                    start(&d),
                    start(&f) / start(&d),
                    start(&t),
                    start(&t) / start(&d)
                ));
                report(&format!(
                    "container:   PID 1 start to sshd answering     {:>7.2} s {:>9.2} s  \
                     (flotilla {:.2}x systemd's: the init's own part; tini {:.2} s)",
                    f.since_pid1,
                    d.since_pid1,
                    f.since_pid1 / d.since_pid1,
                    t.since_pid1
                ));
            }
            report(&format!(
                "container:   PID 1 VmRSS                  {:>7} KiB {:>7} KiB",
                rss, s.rss
            ));
            report(&format!(
                "container:   podman stop                     {:>7.2} s {:>9.2} s  \
                 (systemd's exit status {}; its failed units: {})",
                stop.as_secs_f64(),
                s.stop.as_secs_f64(),
                s.exit,
                if s.failed.is_empty() {
                    "none"
                } else {
                    &s.failed
                }
            ));
        }
        Err(why) => report(&format!(
            "container: Debian's systemd as PID 1 of the same root cannot run here: {why}"
        )),
    }
    report(&format!(
        "container: rootless: multi-user.target {:.2} s after podman start, stop {:.2} s",
        rootless.0.as_secs_f64(),
        rootless.1.as_secs_f64()
    ));
    report(&format!(
        "container: tini + sshd: sshd answering {:.2} s after podman start \
         ({:.2} s after PID 1's), PID 1 RSS {} KiB",
        tini_sshd.since_start.as_secs_f64(),
        tini_sshd.since_pid1,
        tini_rss
    ));
}
