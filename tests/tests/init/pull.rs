//! System tests of the dependencies that pull a unit in without ordering
//! it (YAML `wants`, `requires`; systemd's `Requires=`, `Wants=`,
//! `BindsTo=` without `After=`), through the real `init`: units that
//! require each other start concurrently, a required unit that fails
//! stops its requirer, and a `.service` that `Requires=` another starts
//! at once, not after the other is up, unless `After=` orders them.
//!
//! Nothing sleeps for a fixed time: the units meet through files, and the
//! test awaits states over the control socket.

use flotilla_tests::init::TestDir;
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::state::UnitState;

/// A service that, before it runs, marks itself started and waits until
/// `other` has marked itself too: it gets past its `ExecStartPre=` only if
/// the two are starting at the same time.
fn meeting(dir: &TestDir, name: &str, other: &str, deps: &str) {
    let d = dir.path().display();
    dir.unit(
        name,
        &format!(
            "unit: {name}\n{deps}\n\
             exec-start-pre:\n  - [/bin/sh, -c, \"touch {d}/{name}-up; \
             until [ -e {d}/{other}-up ]; do sleep 0.02; done\"]\n\
             exec-start: /bin/sleep 100\nrestart: no\nstart-timeout: 30s\n"
        ),
    );
}

/// Two services that require each other, with no `After=`: a load without
/// a cycle, both starting at once (each waits in its start for the other
/// to be starting, which ordering would deadlock). One of them failing
/// stops the other, which then waits, blocked by it.
#[test]
fn units_that_require_each_other_start_concurrently() {
    let dir = TestDir::new();
    meeting(&dir, "a", "b", "requires: b");
    meeting(&dir, "b", "a", "requires: a");
    dir.unit("default", "unit: default\ntype: virtual\nwants: a\n");
    let init = dir.start("default");
    let s = init.wait_all(&["a", "b", "default"], UnitState::Running);
    assert!(s.load_errors.is_empty(), "{:?}", s.load_errors);

    // The graph shows the kind, with no ordering.
    let out = init.ctl(&["analyze", "dot"]);
    out.expect(0);
    let edge = out
        .stdout
        .lines()
        .find(|l| l.contains(r#"tooltip="a requires b""#))
        .unwrap_or_else(|| panic!("no requires edge in {}", out.stdout));
    assert!(edge.contains("arrowhead=empty"), "{edge}");

    // b crashes (Restart=no: failed): a is stopped, blocked by b.
    let a0 = init.pid_of("a");
    procs::signal(init.pid_of("b"), libc::SIGKILL);
    init.wait_state("b", UnitState::Failed);
    let a = init.wait_unit("a", "blocked by b", |u| {
        u.state == UnitState::Waiting && u.blocked_by.as_deref() == Some("b")
    });
    assert_eq!(a.pid, None);
    assert!(!procs::alive(a0), "a's process was stopped");
}

/// The lines of the file `order` so far (none while it does not exist).
fn order(dir: &TestDir) -> Vec<String> {
    std::fs::read_to_string(dir.join("order"))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// A pair of systemd services in the units directory: `a.service` (its
/// `[Unit]` section `a_unit`) appends `a` to `order` and runs; `b.service`,
/// a oneshot, stays starting until the file `go` exists, then appends `b`.
/// `default.target` wants `a.service`.
fn systemd_pair(dir: &TestDir, a_unit: &str) {
    let d = dir.path().display();
    dir.file(
        "units/a.service",
        &format!(
            "[Unit]\n{a_unit}\n[Service]\n\
             ExecStart=/bin/sh -c 'echo a >> {d}/order; exec sleep 100'\n"
        ),
    );
    dir.file(
        "units/b.service",
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\n\
             ExecStart=/bin/sh -c 'until [ -e {d}/go ]; do sleep 0.02; done; echo b >> {d}/order'\n"
        ),
    );
    dir.file("units/default.target", "[Unit]\nWants=a.service\n");
}

/// `Requires=` without `After=` (systemd.unit(5)): both start at once; `a`
/// runs while `b` is still starting, and does not wait for it.
#[test]
fn a_service_that_requires_another_without_after_does_not_wait_for_it() {
    let dir = TestDir::new();
    systemd_pair(&dir, "Requires=b.service");
    let init = dir.start("default.target");
    let s = init.wait("a running while b is still starting", |s| {
        let state = |n: &str| s.units.iter().find(|u| u.unit == n).map(|u| u.state);
        state("a.service") == Some(UnitState::Running)
            && state("b.service") == Some(UnitState::Starting)
    });
    assert!(s.load_errors.is_empty(), "{:?}", s.load_errors);
    // a's process has run while b is still starting.
    wait_for(WAIT, "a's line", || (order(&dir) == ["a"]).then_some(()));
    assert_eq!(init.unit("b.service").state, UnitState::Starting);
    dir.file("go", "");
    init.wait_state("b.service", UnitState::Exited);
    assert_eq!(order(&dir), ["a", "b"]);
}

/// `Requires=` with `After=`: `a` waits until `b` is up (`depends-on`).
#[test]
fn a_service_that_requires_another_after_it_waits_for_it() {
    let dir = TestDir::new();
    systemd_pair(&dir, "Requires=b.service\nAfter=b.service");
    let init = dir.start("default.target");
    init.wait("b starting, a waiting for it", |s| {
        let state = |n: &str| s.units.iter().find(|u| u.unit == n).map(|u| u.state);
        state("a.service") == Some(UnitState::Waiting)
            && state("b.service") == Some(UnitState::Starting)
    });
    assert!(!dir.join("order").exists(), "a started before b was up");
    dir.file("go", "");
    init.wait_state("a.service", UnitState::Running);
    wait_for(WAIT, "a's line after b's", || {
        (order(&dir).len() == 2).then_some(())
    });
    assert_eq!(order(&dir), ["b", "a"]);
}
