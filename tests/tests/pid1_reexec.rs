//! `initctl reexec` as PID 1 of a PID namespace (as a container runs the
//! init): PID 1 executes its binary again (a copy, which the test may
//! replace) and keeps every unit: the service keeps its PID and restart
//! count and is still supervised, a oneshot running across the re-exec
//! finishes; a binary that cannot be executed leaves PID 1 as it was, and
//! the poweroff afterwards is orderly. Needs root and util-linux's unshare.

use crate::pid1_support;

use pid1_support::{bin, cmdline, procs_in, units_dir, wait_for, Pid1, WAIT};
use std::path::Path;

const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: [svc, job]\n";
const SVC: &str = "unit: svc\nexec-start: sleep 1001\nrestart: always\nrestart-delay: 50ms\n";

fn job(go: &Path) -> String {
    format!(
        "unit: job\ntype: oneshot\nexec-start: [\"/bin/sh\", \"-c\", \
         \"while [ ! -e {} ]; do sleep 0.02; done; echo job done\"]\n",
        go.display()
    )
}

fn status(p: &Pid1, name: &str) -> serde_json::Value {
    let out = p.ctl(&["status", "--json", name]);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Waits until unit `name`'s status satisfies `cond`.
fn wait_status(
    p: &Pid1,
    name: &str,
    what: &str,
    cond: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    wait_for(WAIT, what, || Some(status(p, name)).filter(|s| cond(s)))
}

/// The service's `sleep` as the host sees it.
fn svc_host_pid(p: &Pid1) -> i32 {
    let ns = p.ns();
    wait_for(WAIT, "svc's sleep", || {
        procs_in(&ns)
            .into_iter()
            .map(|(pid, _)| pid)
            .find(|&pid| cmdline(pid).contains("sleep 1001"))
    })
}

fn replace(path: &Path, mode: u32) {
    let text = path.with_extension("text");
    std::fs::write(
        &text,
        "not a program
",
    )
    .unwrap();
    flotilla_tests::bins::install(&text, path, mode);
}

#[test]
fn pid1_reexec_keeps_its_units_and_a_failed_one_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let go = tmp.path().join("go");
    let dir = units_dir(&[("default", DEFAULT), ("svc", SVC), ("job", &job(&go))]);
    let copy = dir.path().join("init-copy");
    flotilla_tests::bins::install(&bin("init", "flotilla-init"), &copy, 0o755);
    let units = dir.path().join("units");
    let mut p = Pid1::start_binary(
        &copy,
        &dir.path().join("c.sock"),
        &["--units", units.to_str().unwrap()],
        &[],
    );
    p.out.wait("[  OK  ] started svc", WAIT);
    wait_status(&p, "job", "job starting", |s| s["state"] == "starting");
    // One crash first, so that there is a count to keep.
    let first = svc_host_pid(&p);
    // SAFETY: kill(2) on a process of the test's own namespace.
    unsafe { libc::kill(first, libc::SIGKILL) };
    let before = wait_status(&p, "svc", "svc restarted", |s| {
        s["state"] == "running" && s["restarts"] == 1
    });
    let host_init = p.host_pid();

    let out = p.ctl(&["reexec"]);
    assert!(out.status.success(), "{out:?}");
    p.out.wait("init: re-executed: target default", WAIT);
    assert_eq!(p.host_pid(), host_init, "still the same PID 1");
    let after = status(&p, "svc");
    assert_eq!(after["pid"], before["pid"]);
    assert_eq!(after["restarts"], 1);
    assert_eq!(after["state"], "running");
    assert_eq!(status(&p, "job")["state"], "starting");

    // Still supervised.
    let second = svc_host_pid(&p);
    // SAFETY: as above.
    unsafe { libc::kill(second, libc::SIGKILL) };
    wait_status(&p, "svc", "svc restarted again", |s| {
        s["state"] == "running" && s["restarts"] == 2
    });
    std::fs::write(&go, "").unwrap();
    wait_status(&p, "job", "job exited", |s| s["state"] == "exited");

    // A binary that cannot be executed: PID 1 goes on.
    replace(&copy, 0o644);
    let out = p.ctl(&["reexec"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("permission denied"));
    assert_eq!(status(&p, "svc")["restarts"], 2);
    let ns = p.ns();
    assert!(procs_in(&ns).iter().all(|&(_, st)| st != 'Z'));

    let out = p.ctl(&["poweroff"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(p.wait_exit(WAIT).code(), Some(0), "{:#?}", p.out.all());
}
