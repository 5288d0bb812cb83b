//! The real `init` as PID 1 of a fresh PID namespace (`unshare --pid
//! --fork --mount-proc`), the way a container runs it: the target is
//! reached, orphans are reaped (a burst of thousands, never taken for a
//! unit's process), SIGTERM and `initctl poweroff` end with exit status 0
//! and no process left, the exit statuses of a failed target and a reboot,
//! and the emergency path when the loop cannot start. Needs root (CI runs
//! as root) and util-linux's unshare, which scripts/test installs.

use crate::pid1_support;

use pid1_support::{all_pids, procs_in, units_dir, wait_for, Pid1, WAIT};
use std::time::{Duration, Instant};

const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: svc, marker\n";
const SVC: &str = "unit: svc\nexec-start: sleep 1000\n";

/// A oneshot running `script`. `kill-mode: none`: what it leaves behind is
/// not killed with it when it stops (as a unit's leftovers are), so that
/// only the init's final SIGTERM (and SIGKILL) ends it.
fn marker(script: &str) -> String {
    format!(
        "unit: marker\ntype: oneshot\nkill-mode: none\nexec-start: [\"/bin/sh\", \"-c\", {}]\n",
        serde_json::to_string(script).unwrap()
    )
}

fn status_json(p: &Pid1) -> serde_json::Value {
    let out = p.ctl(&["status", "--json"]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn unit<'a>(s: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    s["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["unit"] == name)
        .unwrap_or_else(|| panic!("no unit {name} in {s}"))
}

#[test]
fn target_reached_then_initctl_poweroff_exits_0_with_no_process_left() {
    // The marker leaves an orphan behind: a daemon-like process that is no
    // unit's, which only the final SIGTERM ends.
    let m = marker("echo marker ran; sleep 1000 & exit 0");
    let dir = units_dir(&[("default", DEFAULT), ("svc", SVC), ("marker", &m)]);
    let units = dir.path().join("units");
    let mut p = Pid1::start(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap()],
    );
    p.out.wait("[  OK  ] started default", WAIT);
    let boot = p.started.elapsed();
    let s = status_json(&p);
    assert_eq!(s["pid1"], true, "{s}");
    assert_eq!(s["target"], "default");
    assert_eq!(s["target_state"], "running");
    assert_eq!(unit(&s, "marker")["state"], "exited");
    let ns = p.ns();
    // The target does not wait for the bus (its socket is enough): busd
    // is `running` once its program runs, which may come after.
    wait_for(WAIT, "flotilla-busd.service running", || {
        (unit(&status_json(&p), "flotilla-busd.service")["state"] == "running").then_some(())
    });
    let procs = procs_in(&ns);
    assert_eq!(
        procs.len(),
        4,
        "init, flotilla-busd, svc's sleep, the orphan: {procs:?}"
    );
    assert!(procs.iter().all(|&(_, st)| st != 'Z'), "{procs:?}");

    let t = Instant::now();
    let out = p.ctl(&["poweroff"]);
    assert!(out.status.success(), "{out:?}");
    let status = p.wait_exit(WAIT);
    let shutdown = t.elapsed();
    assert_eq!(status.code(), Some(0), "{:#?}", p.out.all());
    p.out.assert_order(&[
        "as PID 1 in a container",
        "[  OK  ] started svc",
        "[  OK  ] started default",
        "init: requested: stopping every unit (poweroff)",
        "[  OK  ] stopped default",
        "[  OK  ] stopped svc",
        "init: every unit stopped",
        "init: sending SIGTERM to every remaining process",
        "init: every process exited after SIGTERM",
        "init: exiting with status 0 (orderly shutdown)",
    ]);
    assert!(procs_in(&ns).is_empty());
    pid1_support::report(&format!(
        "pid1 in a namespace: start to target {} ms, poweroff to exit {} ms",
        boot.as_millis(),
        shutdown.as_millis()
    ));
}

#[test]
fn sigterm_powers_off_and_a_process_ignoring_it_gets_sigkill_after_the_grace() {
    // The marker ends only once the stubborn process ignores SIGTERM (it
    // says so through a FIFO), so "started default" means it does.
    let dir = units_dir(&[("default", DEFAULT), ("svc", SVC)]);
    let fifo = dir.path().join("ready");
    let m = marker(&format!(
        "mkfifo {f}; sh -c 'trap \"\" TERM; echo up > {f}; while :; do sleep 1; done' & \
         read x < {f}; exit 0",
        f = fifo.display()
    ));
    std::fs::write(dir.path().join("units/marker.yaml"), m).unwrap();
    let units = dir.path().join("units");
    let mut p = Pid1::start(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap()],
    );
    p.out.wait("[  OK  ] started default", WAIT);
    let ns = p.ns();
    let t = Instant::now();
    p.signal(libc::SIGTERM);
    let status = p.wait_exit(WAIT);
    let took = t.elapsed();
    assert_eq!(status.code(), Some(0), "{:#?}", p.out.all());
    p.out.assert_order(&[
        "init: SIGTERM: stopping every unit (poweroff)",
        "[  OK  ] stopped svc",
        "init: every unit stopped",
        "init: sending SIGTERM to every remaining process",
        "init: processes left after 2000 ms: sending SIGKILL",
        "init: every process exited after SIGKILL",
        "init: exiting with status 0",
    ]);
    assert!(took >= Duration::from_secs(2), "the grace period was kept");
    assert!(procs_in(&ns).is_empty());
    pid1_support::report(&format!(
        "pid1 SIGTERM with a stubborn process: {} ms",
        took.as_millis()
    ));
}

#[test]
fn a_burst_of_orphans_is_reaped_and_never_taken_for_a_units_process() {
    const N: usize = 3000;
    // Each sleep is started by a subshell that exits at once: all 3000 are
    // orphans from their first instant, re-parented to PID 1.
    let burst = format!(
        "unit: burst\ntype: oneshot\nexec-start: [\"/bin/sh\", \"-c\", \
         \"i=0; while [ $i -lt {N} ]; do (sleep 0.3 &); i=$((i+1)); done; exit 0\"]\n"
    );
    let def = "unit: default\ntype: virtual\ndepends-on: svc, burst\n";
    let dir = units_dir(&[("default", def), ("svc", SVC), ("burst", &burst)]);
    let units = dir.path().join("units");
    let mut p = Pid1::start(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap()],
    );
    p.out.wait("[  OK  ] started svc", WAIT);
    let svc_pid = unit(&status_json(&p), "svc")["pid"].as_i64().unwrap();
    let t0 = Instant::now();
    p.out
        .wait("[  OK  ] started default", Duration::from_secs(60));
    let forked = t0.elapsed();
    let t = Instant::now();
    let ns = p.ns();
    // Every orphan ends and is reaped: only the init, flotilla-busd and
    // svc's sleep stay.
    let left = wait_for(Duration::from_secs(30), "the orphans to be reaped", || {
        let procs = procs_in(&ns);
        (procs.len() == 3).then_some(procs)
    });
    let reaped = t.elapsed();
    assert!(left.iter().all(|&(_, st)| st != 'Z'), "{left:?}");
    let s = status_json(&p);
    let svc = unit(&s, "svc");
    assert_eq!(svc["state"], "running");
    assert_eq!(svc["pid"].as_i64(), Some(svc_pid), "svc was not disturbed");
    assert_eq!(svc["restarts"], 0);
    assert_eq!(unit(&s, "burst")["state"], "exited");
    assert_eq!(unit(&s, "burst")["status"], "exit status 0");
    assert!(!p.out.all().iter().any(|l| l.contains("[FAILED]")));
    p.signal(libc::SIGTERM);
    assert_eq!(p.wait_exit(WAIT).code(), Some(0));
    p.out
        .assert_order(&["init: every unit stopped", "init: no process left"]);
    pid1_support::report(&format!(
        "pid1: {N} orphans forked in {} ms, all reaped {} ms after the burst ended",
        forked.as_millis(),
        reaped.as_millis()
    ));
}

#[test]
fn a_failed_target_exits_1() {
    let def = "unit: default\ntype: virtual\ndepends-on: job\n";
    let job = "unit: job\ntype: oneshot\nexec-start: [\"/bin/sh\", \"-c\", \"exit 3\"]\n";
    let dir = units_dir(&[("default", def), ("job", job)]);
    let units = dir.path().join("units");
    let mut p = Pid1::start(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap()],
    );
    p.out.wait("[FAILED] job", WAIT);
    assert!(p.ctl(&["poweroff"]).status.success());
    assert_eq!(p.wait_exit(WAIT).code(), Some(1), "{:#?}", p.out.all());
    p.out.wait(
        "init: exiting with status 1 (the target or a required unit had failed)",
        WAIT,
    );
}

#[test]
fn in_a_container_sigint_powers_off_and_reboot_exits_133() {
    let dir = units_dir(&[
        ("default", DEFAULT),
        ("svc", SVC),
        ("marker", &marker("exit 0")),
    ]);
    let units = dir.path().join("units");
    let mut p = Pid1::start(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap()],
    );
    p.out.wait("[  OK  ] started default", WAIT);
    // Ctrl-C in `docker run -it`: stop, not reboot.
    p.signal(libc::SIGINT);
    assert_eq!(p.wait_exit(WAIT).code(), Some(0));
    p.out
        .wait("init: SIGINT: stopping every unit (poweroff)", WAIT);

    let dir = units_dir(&[
        ("default", DEFAULT),
        ("svc", SVC),
        ("marker", &marker("exit 0")),
    ]);
    let units = dir.path().join("units");
    let mut p = Pid1::start(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap()],
    );
    p.out.wait("[  OK  ] started default", WAIT);
    assert!(p.ctl(&["reboot"]).status.success());
    assert_eq!(p.wait_exit(WAIT).code(), Some(133));
    p.out
        .wait("init: exiting with status 133 (reboot requested)", WAIT);
}

#[test]
fn systemds_signals_end_a_container_in_order_or_at_once() {
    // systemd's numbers (glibc's SIGRTMIN is 34), as podman sends them.
    const RTMIN: i32 = 34;
    // +3: what `podman stop` sends an image whose command is an init.
    for (plus, code, ordered) in [(3, 0, true), (5, 133, true), (14, 0, false)] {
        let dir = units_dir(&[
            ("default", DEFAULT),
            ("svc", SVC),
            ("marker", &marker("exit 0")),
        ]);
        let units = dir.path().join("units");
        let mut p = Pid1::start(
            &dir.path().join("c.sock"),
            &["--units", units.to_str().unwrap()],
        );
        p.out.wait("[  OK  ] started default", WAIT);
        let ns = p.ns();
        let t = Instant::now();
        p.signal(RTMIN + plus);
        let status = p.wait_exit(WAIT);
        let took = t.elapsed();
        assert_eq!(status.code(), Some(code), "+{plus}: {:#?}", p.out.all());
        let all = p.out.all();
        if ordered {
            let kind = if plus == 3 { "halt" } else { "reboot" };
            p.out.assert_order(&[
                &format!("init: SIGRTMIN+{plus}: stopping every unit ({kind})"),
                "[  OK  ] stopped default",
                "[  OK  ] stopped svc",
                "init: every unit stopped",
                &format!("init: exiting with status {code}"),
            ]);
        } else {
            p.out.assert_order(&[
                "init: SIGRTMIN+14: poweroff at once, the units not stopped one by one",
                "init: sending SIGTERM to every remaining process",
                "init: exiting with status 0",
            ]);
            assert!(!all.iter().any(|l| l.contains("stopped svc")), "{all:#?}");
        }
        assert!(
            took < Duration::from_secs(2),
            "+{plus} took {took:?}: {all:#?}"
        );
        assert!(procs_in(&ns).is_empty());
        pid1_support::report(&format!(
            "pid1 SIGRTMIN+{plus} to exit: {} ms",
            took.as_millis()
        ));
    }
}

#[test]
fn an_unusable_control_socket_without_a_terminal_says_why_once_and_exits_2() {
    let dir = units_dir(&[
        ("default", DEFAULT),
        ("svc", SVC),
        ("marker", &marker("exit 0")),
    ]);
    let units = dir.path().join("units");
    // A regular file where the socket's directory should be.
    std::fs::write(dir.path().join("file"), "").unwrap();
    // Standard input is a pipe, as in `podman run -d`: no terminal for an
    // emergency shell, so no shell (which would read end-of-file and be
    // started again and again): the container ends, status 2.
    let mut p = Pid1::start(
        &dir.path().join("file/c.sock"),
        &["--units", units.to_str().unwrap()],
    );
    assert_eq!(p.wait_exit(WAIT).code(), Some(2), "{:#?}", p.out.all());
    p.out.assert_order(&[
        "init: EMERGENCY: control socket",
        "init: emergency mode: standard input is no terminal, so no shell",
        "init: exiting with status 2",
    ]);
    let all = p.out.all();
    assert_eq!(
        all.iter().filter(|l| l.contains("EMERGENCY")).count(),
        1,
        "{all:#?}"
    );
    assert!(
        !all.iter().any(|l| l.contains("emergency shell")),
        "{all:#?}"
    );
}

#[test]
fn a_job_container_exits_with_the_jobs_outcome() {
    // docs/pid1.md's pattern: `done` waits for the job, whatever its end,
    // and powers off; the exit status tells how the job went.
    for (code, want) in [(0, 0), (3, 1)] {
        let job = format!(
            "unit: job\ntype: oneshot\nexec-start: [\"/bin/sh\", \"-c\", \"exit {code}\"]\n"
        );
        let done = "unit: done\ntype: oneshot\nprovides: default\nwaits-for: job\n\
                    exec-start: initctl poweroff\n";
        let dir = units_dir(&[("job", &job), ("done", done)]);
        let units = dir.path().join("units");
        // `initctl` from PATH, as in a container image.
        let path = format!(
            "{}:{}",
            pid1_support::bin_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut p = Pid1::start_env(
            &dir.path().join("c.sock"),
            &["--units", units.to_str().unwrap()],
            &[("PATH", &path)],
        );
        assert_eq!(p.wait_exit(WAIT).code(), Some(want), "{:#?}", p.out.all());
    }
}

#[test]
fn as_pid1_it_serves_systemds_bus_to_debians_systemctl() {
    let def = "unit: default\ntype: virtual\ndepends-on: svc\n";
    let dir = units_dir(&[("default", def), ("svc", SVC)]);
    let units = dir.path().join("units");
    let mut p = Pid1::start(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap()],
    );
    p.out.wait("[  OK  ] started default", WAIT);
    // The unit set has no bus unit of its own: the init's are added,
    // listed, and running (the service once its program runs, which the
    // target does not wait for: the socket is enough).
    let s = wait_for(WAIT, "flotilla-busd.service running", || {
        let s = status_json(&p);
        (unit(&s, "flotilla-busd.service")["state"] == "running").then_some(s)
    });
    assert_eq!(unit(&s, "flotilla-busd.socket")["state"], "running", "{s}");
    let svc_pid = unit(&s, "svc")["pid"].as_i64().unwrap();
    let out = p.in_mounts("test", &["-d", "/run/systemd/system"]);
    assert!(out.status.success(), "/run/systemd/system/ is missing");

    // Debian's own systemctl, as a program run on the machine would call
    // it: over /run/systemd/private.
    let out = p.in_mounts("/bin/systemctl", &["is-system-running"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "running\n", "{out:?}");
    let out = p.in_mounts(
        "/bin/systemctl",
        &["show", "-p", "MainPID", "-p", "ActiveState", "svc.service"],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("MainPID={svc_pid}\nActiveState=active\n")
    );
    // A stop of a unit the target requires stops it, as systemd does,
    // until it is started again.
    let out = p.in_mounts("/bin/systemctl", &["stop", "svc.service"]);
    assert!(out.status.success(), "{out:?}");
    let out = p.in_mounts("/bin/systemctl", &["is-active", "svc.service"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "inactive\n",
        "{out:?}"
    );
    let out = p.in_mounts("/bin/systemctl", &["start", "svc.service"]);
    assert!(out.status.success(), "{out:?}");

    // The manager itself is `init.scope`, listed and shown as systemd's,
    // and perpetual.
    let out = p.in_mounts(
        "/bin/systemctl",
        &["list-units", "--no-legend", "--plain", "init.scope"],
    );
    let rows = String::from_utf8_lossy(&out.stdout);
    let row: Vec<&str> = rows.split_whitespace().collect();
    assert_eq!(
        row,
        [
            "init.scope",
            "loaded",
            "active",
            "running",
            "System",
            "and",
            "Service",
            "Manager"
        ],
        "{out:?}"
    );
    let out = p.in_mounts(
        "/bin/systemctl",
        &["show", "-p", "ActiveState", "-p", "Perpetual", "init.scope"],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ActiveState=active\nPerpetual=yes\n",
        "{out:?}"
    );
    let out = p.in_mounts("/bin/systemctl", &["stop", "init.scope"]);
    assert!(!out.status.success(), "{out:?}");

    // Killed, it comes back: the socket stays bound by the init.
    let busd = unit(&s, "flotilla-busd.service")["pid"].as_i64().unwrap();
    // SAFETY: kill(2) takes no pointers.
    unsafe { libc::kill(host_pid_of(&p, busd as i32), libc::SIGKILL) };
    wait_for(WAIT, "flotilla-busd restarted", || {
        let s = status_json(&p);
        let u = unit(&s, "flotilla-busd.service");
        (u["state"] == "running" && u["pid"].as_i64() != Some(busd)).then_some(())
    });
    let out = p.in_mounts("/bin/systemctl", &["is-active", "svc.service"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "active\n", "{out:?}");

    p.signal(libc::SIGTERM);
    assert_eq!(p.wait_exit(WAIT).code(), Some(0));
}

/// The host's PID of the process the namespace calls `pid`.
fn host_pid_of(p: &Pid1, pid: i32) -> i32 {
    let ns = p.ns();
    pid1_support::all_pids()
        .into_iter()
        .find(|&h| {
            std::fs::read_link(format!("/proc/{h}/ns/pid"))
                .is_ok_and(|l| l.display().to_string() == ns)
                && std::fs::read_to_string(format!("/proc/{h}/status")).is_ok_and(|st| {
                    st.lines()
                        .find(|l| l.starts_with("NSpid:"))
                        .and_then(|l| l.split_whitespace().last())
                        == Some(pid.to_string().as_str())
                })
        })
        .expect("the process in the namespace")
}

/// `initctl ARGS` in the init's namespaces as user `uid`, with no
/// `--control` and no `INIT_CONTROL`: it finds the socket itself.
fn ctl_as(p: &Pid1, uid: u32, args: &[&str]) -> std::process::Output {
    let id = uid.to_string();
    std::process::Command::new("nsenter")
        .arg("-t")
        .arg(p.host_pid().to_string())
        .args(["-m", "-p", "-S", &id, "-G", &id, "--"])
        .arg(pid1_support::bin("initctl", "flotilla-ctl"))
        .args(args)
        .env_remove("INIT_CONTROL")
        .env_remove("XDG_RUNTIME_DIR")
        .env("NO_COLOR", "1")
        .output()
        .expect("nsenter initctl")
}

#[test]
fn as_any_user_without_a_passwd_entry_it_runs_its_units_as_that_user() {
    // uid 4242 has no passwd entry; the namespace's /run is root's (0755),
    // so the socket goes under /tmp, as docs/contract.md §2 says.
    const UID: u32 = 4242;
    let sock = std::path::PathBuf::from(format!("/tmp/flotilla-{UID}/control.sock"));
    let _ = std::fs::remove_dir_all(sock.parent().unwrap());
    // It asks for another user and for a capability the init lacks: both
    // named in `not_applied`, the unit runs.
    let svc = "unit: svc\nuser: root\nambient-capabilities: CAP_NET_BIND_SERVICE\n\
               exec-start: [\"/bin/sh\", \"-c\", \"echo uid=$(id -u); exec sleep 1000\"]\n";
    let dir = units_dir(&[
        ("default", DEFAULT),
        ("svc", svc),
        ("marker", &marker("exit 0")),
    ]);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let units = dir.path().join("units");
    let mut p = Pid1::start_as_user(UID, &sock, &["--units", units.to_str().unwrap()]);
    p.out.wait("[  OK  ] started default", WAIT);
    let all = p.out.all();
    assert!(!all.iter().any(|l| l.contains("EMERGENCY")), "{all:#?}");
    assert!(
        all.iter()
            .any(|l| l.contains(&format!("control {}", sock.display()))),
        "{all:#?}"
    );
    let out = ctl_as(&p, UID, &["status", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let svc = unit(&s, "svc");
    assert_eq!(svc["state"], "running", "{s}");
    let na = svc["not_applied"].as_array().cloned().unwrap_or_default();
    assert!(
        na.iter().any(|n| n["setting"] == "User"
            && n["reason"]
                .as_str()
                .unwrap_or("")
                .contains("uid 4242, not root")),
        "{svc}"
    );
    assert!(
        na.iter().any(|n| n["setting"] == "AmbientCapabilities"
            && n["reason"]
                .as_str()
                .unwrap_or("")
                .starts_with("CAP_NET_BIND_SERVICE not applied: the init does not hold")),
        "{svc}"
    );
    // No D-Bus interface for a non-root init: /run/systemd is the machine's.
    assert!(
        s["units"]
            .as_array()
            .unwrap()
            .iter()
            .all(|u| u["unit"] != "flotilla-busd.service"),
        "{s}"
    );
    // The unit's first line may still be on its way to the log when the
    // unit is `running`.
    wait_for(WAIT, "the line uid=4242 in `initctl logs svc`", || {
        let out = ctl_as(&p, UID, &["logs", "svc"]);
        String::from_utf8_lossy(&out.stdout)
            .contains(&format!("uid={UID}"))
            .then_some(())
    });
    // In a container the units' lines are on the init's standard output
    // too (`console-output: all`), with the unit's name.
    p.out.wait(&format!("svc: uid={UID}"), WAIT);
    let ns = p.ns();
    p.signal(34 + 3);
    assert_eq!(p.wait_exit(WAIT).code(), Some(0), "{:#?}", p.out.all());
    p.out.wait("[  OK  ] stopped svc", WAIT);
    assert!(procs_in(&ns).is_empty());
    let _ = std::fs::remove_dir_all(sock.parent().unwrap());
}

/// `podman run -it IMAGE` with `ENTRYPOINT ["/sbin/init", "--"]`: the
/// command is the foreground job of the container's terminal, as under
/// tini: Ctrl-C typed there reaches it (not the init), and the container
/// ends with its status, 130, the units stopped in order.
#[test]
fn the_command_is_the_terminals_foreground_job_and_ctrl_c_reaches_it() {
    let dir = units_dir(&[
        ("default", "unit: default\ntype: virtual\ndepends-on: svc\n"),
        ("svc", SVC),
    ]);
    let units = dir.path().join("units");
    // The fields of /proc/PID/stat: 5 the process group, 7 the terminal,
    // 8 the terminal's foreground group.
    let script = "set -- $(cat /proc/$$/stat); \
                  if [ \"$7\" != 0 ] && [ \"$5\" = \"$8\" ]; then echo job=foreground; \
                  else echo \"job=pgrp $5 tty $7 tpgid $8\"; fi; exec sleep 999";
    let mut p = Pid1::start_on_terminal(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap(), "--", "sh", "-c", script],
        &[],
    );
    // The command writes on the terminal itself: its line and the init's
    // `started cmd` may come in either order.
    p.out.wait("job=", WAIT);
    let all = p.out.all();
    assert!(all.iter().any(|l| l.trim() == "job=foreground"), "{all:#?}");
    // Ctrl-C, once sleep runs (the shell execs it in the same process).
    let ns = p.ns();
    let cmd_pid = wait_for(WAIT, "the command's sleep", || {
        all_pids().into_iter().find(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c == "sleep\0999\0")
                && std::fs::read_link(format!("/proc/{pid}/ns/pid"))
                    .is_ok_and(|l| l.display().to_string() == ns)
        })
    });
    p.type_in("\x03");
    assert_eq!(p.wait_exit(WAIT).code(), Some(130), "{:#?}", p.out.all());
    p.out.assert_order(&[
        "init: cmd: FailureAction=exit: stopping every unit (poweroff)",
        "[  OK  ] stopped svc",
        "init: exiting with status 130 (the command's)",
    ]);
    assert!(std::fs::metadata(format!("/proc/{cmd_pid}")).is_err());
}

#[test]
fn the_command_after_the_double_dash_sets_the_containers_status() {
    let path = format!(
        "{}:{}",
        pid1_support::bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let start = |cmd: &[&str]| {
        let dir = units_dir(&[
            ("default", DEFAULT),
            ("svc", SVC),
            ("marker", &marker("exit 0")),
        ]);
        let units = dir.path().join("units");
        let mut args = vec!["--units", units.to_str().unwrap(), "--"];
        args.extend_from_slice(cmd);
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let p = Pid1::start_env(
            &dir.path().join("c.sock"),
            &args,
            &[("PATH", &path), ("APP_GREETING", "hello")],
        );
        (p, dir)
    };
    // Once the target is up, with the init's stdin, stdout and environment;
    // `initctl status` lists it as the unit `cmd`; its status is the init's.
    let script = "initctl status cmd | head -n 3; read line; \
                  echo \"got=$line env=$APP_GREETING cwd=$(pwd)\"; exit 5";
    let (mut p, _dir) = start(&["sh", "-c", script]);
    p.out.wait("[  OK  ] started cmd", WAIT);
    p.type_in("typed\n");
    let status = p.wait_exit(WAIT);
    assert_eq!(status.code(), Some(5), "{:#?}", p.out.all());
    p.out.assert_order(&[
        "[  OK  ] started default",
        "[  OK  ] started cmd",
        "cmd",
        "got=typed env=hello cwd=",
        "init: cmd: FailureAction=exit: stopping every unit (poweroff)",
        "[  OK  ] stopped cmd",
        "[  OK  ] stopped svc",
        "init: every unit stopped",
        "init: exiting with status 5 (the command's)",
    ]);
    // SIGTERM stops the command and the units; the status is still the
    // command's: 128+15 for a command that SIGTERM ends.
    let (mut p, _dir) = start(&["sleep", "1000"]);
    p.out.wait("[  OK  ] started cmd", WAIT);
    let ns = p.ns();
    p.signal(libc::SIGTERM);
    assert_eq!(p.wait_exit(WAIT).code(), Some(143), "{:#?}", p.out.all());
    p.out.assert_order(&[
        "init: SIGTERM: stopping every unit (poweroff)",
        "[  OK  ] stopped cmd",
        "[  OK  ] stopped svc",
        "init: exiting with status 143 (the command's)",
    ]);
    assert!(procs_in(&ns).is_empty());
    // `--` with nothing after it: a usage error, status 2.
    let dir = units_dir(&[("default", DEFAULT)]);
    let units = dir.path().join("units");
    let mut p = Pid1::start(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap(), "--"],
    );
    assert_eq!(p.wait_exit(WAIT).code(), Some(2), "{:#?}", p.out.all());
    p.out.wait("init: `--` needs a command after it", WAIT);
}

/// Where cgroup2 is mounted on the host (`/sys/fs/cgroup`, or
/// `/sys/fs/cgroup/unified` on a hybrid host such as this one).
fn cgroup2_root() -> Option<std::path::PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounts
        .lines()
        .find(|l| {
            l.split(" - ")
                .nth(1)
                .is_some_and(|t| t.starts_with("cgroup2 "))
        })
        .and_then(|l| l.split(' ').nth(4))
        .map(std::path::PathBuf::from)
}

/// A supervisor init keeps its units' cgroups in `flotilla-PID` at the
/// root of a shared hierarchy, and an init sweeps those of inits that are
/// gone. An init in a PID namespace of its own cannot see another init's
/// PID: it must not take a live neighbour's cgroup (empty between its start
/// and its first unit's) for a gone one's. The neighbour here is this test
/// process, alive on the host and invisible in the namespace.
#[test]
fn a_namespaced_init_leaves_a_live_neighbours_cgroup_alone() {
    let root = cgroup2_root().expect("a cgroup2 hierarchy (scripts/test runs as root on one)");
    let neighbour = root.join(format!("flotilla-{}", std::process::id()));
    std::fs::create_dir(&neighbour).expect("the neighbour's cgroup");
    struct Remove(std::path::PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let _remove = Remove(neighbour.clone());
    let dir = units_dir(&[
        ("default", "unit: default\ntype: virtual\ndepends-on: svc\n"),
        ("svc", SVC),
    ]);
    let units = dir.path().join("units");
    let mut p = Pid1::start(
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap()],
    );
    p.out.wait("[  OK  ] started default", WAIT);
    assert!(
        neighbour.is_dir(),
        "the namespaced init removed {}",
        neighbour.display()
    );
    p.signal(libc::SIGTERM);
    p.wait_exit(WAIT);
}
