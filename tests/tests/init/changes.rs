//! System tests of the local init, part 4: when a target switch is over
//! (`set-target --wait` waits for the units outside the new set to stop,
//! as `systemctl isolate` waits for its stop jobs) and `transient-patch`
//! (some units of a transient set changed, the rest left running), a
//! reload that changes a running target, through the real `init` and
//! `initctl` binaries.

use flotilla_tests::init::{run_child, TestDir};
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::protocol::{ErrorCode, Reply, Request, SystemStatus};
use flotilla_units::spec::{Command, UnitSpec, UnitType};
use flotilla_units::state::UnitState;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;

fn virtual_unit(dir: &TestDir, name: &str, extra: &str) {
    dir.unit(name, &format!("unit: {name}\ntype: virtual\n{extra}"));
}

/// `set-target rescue --wait` goes on while a unit outside `rescue` is
/// still stopping (its `exec-stop` waits for the test to let it go), says
/// so in its progress, and exits 0 only once that unit has stopped.
#[test]
fn set_target_wait_waits_for_the_old_units_to_stop() {
    let dir = TestDir::new();
    let release = dir.join("release");
    let path = std::ffi::CString::new(release.display().to_string()).expect("a path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0, "mkfifo");
    let r = release.display();
    dir.unit(
        "slow",
        &format!(
            "unit: slow\nexec-start: sleep 100\n\
             exec-stop: [sh, -c, 'read line < {r}; kill $MAINPID']\nstop-timeout: 60s\n"
        ),
    );
    virtual_unit(&dir, "default", "depends-on: slow\n");
    virtual_unit(&dir, "rescue", "");
    let init = dir.start("default");
    init.wait_state("default", UnitState::Running);
    let slow_pid = init.pid_of("slow");

    let mut waiter = std::process::Command::new(flotilla_tests::bins::initctl())
        .arg("--control")
        .arg(&init.control)
        .args(["set-target", "rescue", "--wait"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start initctl");
    // Its progress lines, as they come (stdout is not a terminal: one line
    // per change).
    let (tx, lines) = mpsc::channel();
    let out = waiter.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut seen = Vec::new();
    loop {
        let line = lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("no progress line saying slow stops: {seen:?}"));
        if line.contains("stopping: slow") {
            break;
        }
        assert!(
            !line.contains("is active"),
            "settled while slow is stopping: {seen:?} {line}"
        );
        seen.push(line);
    }
    assert_eq!(init.unit("rescue").state, UnitState::Running);
    assert_eq!(init.unit("slow").state, UnitState::Stopping);
    assert_eq!(waiter.try_wait().expect("try_wait"), None, "still waiting");

    // Let the stop command finish: the wait ends, and slow has stopped.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&release)
        .and_then(|mut f| f.write_all(b"go\n"))
        .expect("release the stop command");
    let status = run_child(waiter, WAIT);
    status.expect(0);
    assert_eq!(init.unit("slow").state, UnitState::Disabled);
    assert!(!procs::alive(slow_pid));
    let last = std::iter::from_fn(|| lines.recv_timeout(WAIT).ok()).last();
    assert_eq!(
        last.as_deref(),
        Some("target 'rescue' is active (running)"),
        "{status:?}"
    );
}

fn transient(name: &str, argv: &[&str]) -> UnitSpec {
    let mut u = UnitSpec::new(name, UnitType::ForegroundSupervised);
    u.exec_start = Some(Command::new(argv.iter().copied()));
    u
}

fn pid(s: &SystemStatus, name: &str) -> Option<i32> {
    s.units.iter().find(|u| u.unit == name).and_then(|u| u.pid)
}

/// `transient-patch`: the unit it does not name keeps its process, the
/// replaced one restarts with its new command, the new one starts, the
/// removed one stops. A patch with problems (a name not in the set, a
/// unit the directory has too) is refused whole, every problem named, and
/// nothing changes.
#[test]
fn transient_patch_changes_only_the_units_it_names() {
    let dir = TestDir::new();
    virtual_unit(&dir, "default", "waits-for: fleet\n");
    let init = dir.start("default");
    let mut fleet = UnitSpec::new("fleet", UnitType::Virtual);
    fleet.waits_for = vec!["a".into(), "b".into(), "c".into(), "d".into()].into();
    let r = init.client().call(Request::TransientApply {
        set: "cluster".into(),
        units: vec![
            transient("a", &["sleep", "101"]),
            transient("b", &["sleep", "102"]),
            transient("c", &["sleep", "103"]),
            fleet,
        ],
    });
    assert!(matches!(r, Reply::Applied(_)), "{r:?}");
    let s = init.wait_all(&["a", "b", "c"], UnitState::Running);
    let (a0, b0, c0) = (pid(&s, "a"), pid(&s, "b"), pid(&s, "c"));

    let r = init.client().call(Request::TransientPatch {
        set: "cluster".into(),
        upsert: vec![
            transient("b", &["sleep", "104"]),
            transient("d", &["sleep", "105"]),
        ],
        remove: vec!["c".into()],
    });
    let Reply::Applied(applied) = r else {
        panic!("{r:?}")
    };
    assert_eq!(applied.added, ["d"]);
    assert_eq!(applied.changed, ["b"]);
    assert_eq!(applied.removed, ["c"]);
    let s = init.wait("b restarted, d running, c gone", |s| {
        let st = |n: &str| s.units.iter().find(|u| u.unit == n).map(|u| u.state);
        st("b") == Some(UnitState::Running)
            && pid(s, "b") != b0
            && st("d") == Some(UnitState::Running)
            && st("c").is_none()
    });
    assert_eq!(pid(&s, "a"), a0, "the unit the patch did not name runs on");
    wait_for(WAIT, "c's process to go", || {
        (!procs::alive(c0.unwrap_or_default())).then_some(())
    });
    // Awaited: the process the status names may not have exec'd yet.
    let b = pid(&s, "b").unwrap_or_default();
    wait_for(WAIT, "b to run its new command", || {
        std::fs::read_to_string(format!("/proc/{b}/cmdline"))
            .ok()
            .filter(|c| c.contains("104"))
    });

    // Refused whole: nothing changes, every problem is named.
    let mut clash = transient("default", &["sleep", "1"]);
    clash.provides = vec!["default".into()].into();
    let r = init.client().call(Request::TransientPatch {
        set: "cluster".into(),
        upsert: vec![clash, transient("a", &["sleep", "106"])],
        remove: vec!["nope".into()],
    });
    let Reply::Error {
        code,
        message,
        details,
    } = r
    else {
        panic!("{r:?}")
    };
    assert_eq!(code, ErrorCode::Invalid);
    assert!(message.contains("nothing changed"), "{message}");
    assert!(
        details
            .iter()
            .any(|d| d == "`nope` is not in the transient set `cluster`"),
        "{details:?}"
    );
    assert!(details.iter().any(|d| d.contains("default")), "{details:?}");
    let s = init.status();
    assert_eq!(pid(&s, "a"), a0, "nothing changed");
    assert_eq!(pid(&s, "b"), Some(b), "nothing changed");
}

/// `initctl enable` of a unit wanted by `sysinit.target` (a link in its
/// `.wants/`, then a reload, as `systemctl enable` does): the target takes
/// the new unit without a restart, so the services that require it go on
/// with the same PID (a Debian guest's every service requires
/// sysinit.target, and all of them were stopped and started again).
#[test]
fn enabling_a_unit_under_a_running_target_restarts_nothing() {
    let dir = TestDir::new();
    dir.file(
        "units/sysinit.target",
        "[Unit]\nDescription=System Initialization\n",
    );
    dir.file(
        "units/web.service",
        "[Unit]\nRequires=sysinit.target\nAfter=sysinit.target\n\
         [Service]\nExecStart=/bin/sleep 600\n",
    );
    dir.file(
        "units/extra.service",
        "[Service]\nExecStart=/bin/sleep 600\n[Install]\nWantedBy=sysinit.target\n",
    );
    virtual_unit(&dir, "default", "depends-on: [web.service]\n");
    let init = dir.start("default");
    init.wait_state("web.service", UnitState::Running);
    let pid = init.pid_of("web.service");
    let out = init.ctl(&["enable", "extra.service"]);
    out.expect(0);
    assert!(out.stderr.contains("sysinit.target.wants"), "{out:?}");
    init.wait_state("extra.service", UnitState::Running);
    assert_eq!(init.pid_of("web.service"), pid, "web went on");
    assert_eq!(init.unit("sysinit.target").state, UnitState::Running);
    assert_eq!(init.unit("default").state, UnitState::Running);
    assert!(
        !init.output().contains("stopping web.service"),
        "{}",
        init.output()
    );
    // Disabled again: the unit the target no longer wants stops; web
    // still goes on.
    init.ctl(&["disable", "extra.service"]).expect(0);
    init.wait_unit("extra.service", "extra to stop", |u| {
        u.state != UnitState::Running
    });
    assert_eq!(init.pid_of("web.service"), pid);
}

/// A reload that changes a running unit's process settings (here its
/// `limit-nofile`) restarts it with the new ones, not the run prepared for
/// the old file.
#[test]
fn a_reload_restarts_a_changed_unit_with_its_new_settings() {
    let dir = TestDir::new();
    let svc = |n: u32| {
        format!(
            "unit: svc\nlimit-nofile: {n}\n\
             exec-start: [sh, -c, 'echo nofile=$(ulimit -n); exec sleep 1000']\n"
        )
    };
    dir.unit("svc", &svc(100));
    virtual_unit(&dir, "default", "depends-on: svc\n");
    let init = dir.start("default");
    init.wait_state("default", UnitState::Running);
    let first = init.pid_of("svc");
    wait_for(WAIT, "the first svc's line", || {
        dir.ctl(&["logs", "svc"])
            .stdout
            .contains("nofile=100")
            .then_some(())
    });
    dir.unit("svc", &svc(200));
    dir.ctl(&["reload"]).expect(0);
    let second = wait_for(WAIT, "svc restarted", || {
        let s = init.status();
        pid(&s, "svc").filter(|&p| p != first)
    });
    init.wait_state("svc", UnitState::Running);
    let deadline = std::time::Instant::now() + WAIT;
    let logs = loop {
        let text = dir.ctl(&["logs", "svc"]).stdout;
        if text.contains("nofile=200") {
            break text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no nofile=200 from the restarted svc; its log:\n{text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(logs.matches("nofile=").count(), 2, "{logs}");
    assert_ne!(second, first);
}
