//! The application container as tini, catatonit and s6-overlay users run
//! it, under Debian's podman with runc (rootful): the image of
//! contrib/container/app-image (a busybox root the test builds, flotilla's
//! static `init` and `initctl`, contrib/container/units: a oneshot
//! `setup` and a long-running `app`), made with `podman import`, no
//! registry.
//!
//! 1. `podman run -d -e GREETING=hello`, entrypoint `/sbin/init`:
//!    `podman logs` has the services' lines (`app: app up ...
//!    GREETING=hello`); `podman stop` with podman's default signal for an
//!    init (`SIGRTMIN+3`) ends in under 2 s, status 0, every unit's stop
//!    run, in order.
//! 2. `--user 1000:1000`: the units run as 1000, `initctl` in the
//!    container (as that user, no flag) answers, stop status 0.
//! 3. `--read-only`: the same.
//! 4. `--entrypoint '["/sbin/init","--"]' IMAGE sh -c '...; exit 7'`: the
//!    command runs after the target, the container's status is 7.
//! 5. The same image with Debian's `tini` and `catatonit` as PID 1 running
//!    the app's command: the figures side by side (`podman stop` time, PID
//!    1's resident memory).
//!
//! Every container and the image are removed at the end, on failure too.
//! scripts/test installs podman, runc, tini and catatonit.

use crate::pid1_support;

use pid1_support::{report, wait_for, workspace};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Bounds a start; a working one takes well under a second.
const START: Duration = Duration::from_secs(60);

/// Runs podman; success, stdout, stderr.
fn podman(args: &[&str]) -> (bool, String, String) {
    let out = Command::new("podman")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run podman");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Removes the containers and the image when dropped.
struct Cleanup {
    containers: Vec<String>,
    image: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for c in &self.containers {
            let _ = podman(&["rm", "-f", "-t", "0", c]);
        }
        let _ = podman(&["rmi", "-f", &self.image]);
    }
}

/// podman's nofile and nproc defaults are above the hard limits of a
/// machine without `CAP_SYS_RESOURCE`: this process's hard nofile limit
/// and a modest nproc (as `container_podman.rs` does).
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

/// `podman run -d --name NAME` with runc and the limits, then `rest`.
fn run(name: &str, rest: &[&str]) {
    let mut args: Vec<String> = ["run", "-d", "--name", name, "--runtime", "runc"]
        .map(String::from)
        .into();
    args.extend(ulimits());
    args.extend(rest.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, _, err) = podman(&args);
    assert!(ok, "podman run {rest:?}: {err}");
}

/// The container's log (stdout and stderr).
fn logs(name: &str) -> String {
    let (_, out, err) = podman(&["logs", name]);
    format!("{out}{err}")
}

/// Waits for a line containing `needle` in the container's log.
fn wait_log(name: &str, needle: &str) {
    let deadline = Instant::now() + START;
    loop {
        let l = logs(name);
        if l.contains(needle) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name}: no {needle:?} in the log within {START:?}:\n{l}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// PID 1's resident memory in the container, in KiB.
fn pid1_rss_kib(name: &str) -> u64 {
    let (ok, out, err) = podman(&["exec", name, "cat", "/proc/1/status"]);
    assert!(ok, "read /proc/1/status: {err}");
    out.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in {out}"))
}

/// `podman stop` with podman's default signal and timeout (10 s): how
/// long it took, and the container's exit status.
fn stop(name: &str) -> (Duration, i64) {
    let t = Instant::now();
    let (ok, _, err) = podman(&["stop", name]);
    let took = t.elapsed();
    assert!(ok, "podman stop {name}: {err}");
    (took, exit_code(name))
}

fn exit_code(name: &str) -> i64 {
    let (ok, out, err) = podman(&["inspect", "-f", "{{.State.ExitCode}}", name]);
    assert!(ok, "inspect {name}: {err}");
    out.trim()
        .parse()
        .unwrap_or_else(|e| panic!("{out:?}: {e}"))
}

/// Seconds since the epoch of a time as `podman logs -t` prints it,
/// read by date(1).
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

/// The init's own share of a stop, from its log's timestamps: the line
/// saying which signal began it to the line of its exit. `podman stop`'s
/// time adds podman's own work (its cleanup), which a loaded machine
/// stretches for every init alike.
fn init_stop_time(name: &str) -> Duration {
    let (_, out, err) = podman(&["logs", "-t", name]);
    let log = format!("{out}{err}");
    let at = |needle: &str| {
        log.lines()
            .find(|l| l.contains(needle))
            .and_then(|l| l.split_whitespace().next())
            .map(epoch_of)
            .unwrap_or_else(|| panic!("{name}: no {needle:?} in:\n{log}"))
    };
    let secs = at("init: exiting with status") - at(": stopping every unit");
    Duration::from_secs_f64(secs.max(0.0))
}

/// Asserts that `needles` appear in the log in this order.
fn assert_order(log: &str, needles: &[&str]) {
    let mut from = 0;
    for n in needles {
        match log.get(from..).and_then(|rest| rest.find(n)) {
            Some(i) => from += i + n.len(),
            None => panic!("{n:?} missing (or out of order) after byte {from}:\n{log}"),
        }
    }
}

#[test]
fn the_app_container_stops_logs_runs_as_any_user_and_runs_a_command() {
    // One VM or whole system at a time in this binary (`heavy`).
    let _heavy = flotilla_tests::heavy();
    let id = std::process::id();
    let image = format!("localhost/flotilla-app-test-{id}:latest");
    let names: Vec<String> = ["main", "user", "ro", "cmd", "tini", "catatonit"]
        .iter()
        .map(|n| format!("flotilla-app-{n}-{id}"))
        .collect();
    let _cleanup = Cleanup {
        containers: names.clone(),
        image: image.clone(),
    };
    let [main, user, ro, cmd, tini, catatonit] = [0, 1, 2, 3, 4, 5].map(|i| names[i].as_str());

    // The static binaries: the same build (and target directory) as the
    // Debian container's and images'.
    let bins = flotilla_tests::bins::static_dir();
    let out = Command::new(workspace().join("contrib/container/app-image"))
        .arg("--bins")
        .arg(&bins)
        .args(["--tag", &image])
        .stderr(Stdio::inherit())
        .output()
        .expect("run contrib/container/app-image");
    assert!(out.status.success(), "contrib/container/app-image failed");

    // 1. The units, their lines in `podman logs`, podman's stop.
    let t0 = Instant::now();
    run(main, &["-e", "GREETING=hello", &image]);
    wait_log(main, "app: app up as uid 0, GREETING=hello");
    let up = t0.elapsed();
    let l = logs(main);
    assert!(l.contains("setup: setup done"), "{l}");
    assert!(
        !l.contains("D-Bus"),
        "no D-Bus warning for YAML units:\n{l}"
    );
    let (ok, st, err) = podman(&["exec", main, "initctl", "status"]);
    assert!(ok && st.contains("app"), "{st}{err}");
    let (ok, app_log, _) = podman(&["exec", main, "initctl", "logs", "app"]);
    assert!(ok && app_log.contains("GREETING=hello"), "{app_log}");
    let flotilla_rss = pid1_rss_kib(main);
    let (flotilla_stop, code) = stop(main);
    let l = logs(main);
    assert_eq!(code, 0, "{l}");
    assert_order(
        &l,
        &[
            "init: SIGRTMIN+3: stopping every unit (halt)",
            "[  OK  ] stopped app",
            "[  OK  ] stopped setup",
            "init: exiting with status 0",
        ],
    );
    // The init's own share is what it controls: well under 2 s. The
    // whole `podman stop` must not have reached podman's SIGKILL (10 s).
    let main_own = init_stop_time(main);
    assert!(
        main_own < Duration::from_secs(2),
        "the init's stop took {main_own:?}:\n{l}"
    );
    assert!(
        flotilla_stop < Duration::from_secs(8),
        "podman stop took {flotilla_stop:?}:\n{l}"
    );

    // 2. Any user: the units run as it; initctl finds the socket.
    run(user, &["--user", "1000:1000", &image]);
    wait_log(user, "app: app up as uid 1000");
    let (ok, st, err) = podman(&["exec", "--user", "1000:1000", user, "initctl", "status"]);
    assert!(ok && st.contains("app"), "initctl as 1000: {st}{err}");
    let l = logs(user);
    assert!(!l.contains("EMERGENCY"), "{l}");
    let (took, code) = stop(user);
    assert_eq!(code, 0, "{}", logs(user));
    let own = init_stop_time(user);
    assert!(
        own < Duration::from_secs(2) && took < Duration::from_secs(8),
        "--user stop took {own:?} ({took:?} with podman's work):\n{}",
        logs(user)
    );

    // 3. A read-only root.
    run(ro, &["--read-only", &image]);
    wait_log(ro, "app: app up as uid 0");
    let (took, code) = stop(ro);
    assert_eq!(code, 0, "{}", logs(ro));
    let own = init_stop_time(ro);
    assert!(
        own < Duration::from_secs(2) && took < Duration::from_secs(8),
        "--read-only stop took {own:?} ({took:?} with podman's work):\n{}",
        logs(ro)
    );

    // 4. `init -- CMD`: after the target, its status the container's.
    run(
        cmd,
        &[
            "--entrypoint",
            r#"["/sbin/init","--"]"#,
            &image,
            "/bin/sh",
            "-c",
            "initctl status cmd >/dev/null && echo cmd ran after $(cat /tmp/app/state); exit 7",
        ],
    );
    wait_for(START, "the -- CMD container to exit", || {
        let (_, out, _) = podman(&["inspect", "-f", "{{.State.Status}}", cmd]);
        (out.trim() == "exited").then_some(())
    });
    let l = logs(cmd);
    assert_eq!(exit_code(cmd), 7, "{l}");
    assert_order(
        &l,
        &[
            "[  OK  ] started app",
            "cmd ran after ready",
            "[  OK  ] stopped cmd",
            "[  OK  ] stopped app",
            "init: exiting with status 7 (the command's)",
        ],
    );

    // 5. The anchors: the app's command under Debian's static tini and
    // catatonit (podman sends them SIGTERM, which they forward).
    let app = "echo app up; exec sleep infinity";
    let mut anchors = Vec::new();
    for (name, entry) in [
        (tini, r#"["/sbin/tini","--"]"#),
        (catatonit, r#"["/sbin/catatonit","--"]"#),
    ] {
        run(name, &["--entrypoint", entry, &image, "/bin/sh", "-c", app]);
        wait_log(name, "app up");
        let rss = pid1_rss_kib(name);
        let (took, code) = stop(name);
        assert!(
            code == 0 || code == 143,
            "{name}: status {code}:\n{}",
            logs(name)
        );
        anchors.push((took, rss));
    }
    report(&format!(
        "app container (podman, runc): flotilla up (app's line logged) {:.2} s; \
         its own stop (SIGRTMIN+3 to its exit, from podman's log stamps) {:.1} ms",
        up.as_secs_f64(),
        main_own.as_secs_f64() * 1000.0
    ));
    report("app container   | podman stop | PID 1 RSS");
    report(&format!(
        "tini            | {:>8.2} s  | {:>6} KiB",
        anchors[0].0.as_secs_f64(),
        anchors[0].1
    ));
    report(&format!(
        "catatonit       | {:>8.2} s  | {:>6} KiB",
        anchors[1].0.as_secs_f64(),
        anchors[1].1
    ));
    report(&format!(
        "flotilla        | {:>8.2} s  | {:>6} KiB",
        flotilla_stop.as_secs_f64(),
        flotilla_rss
    ));
}
