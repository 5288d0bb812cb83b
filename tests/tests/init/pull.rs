//! System tests of the dependencies that pull a unit in without ordering
//! it (YAML `wants`, `requires`), through the real `init`: units that
//! require each other start concurrently, and a required unit that fails
//! stops its requirer. (systemd's `Requires=` and `Wants=` are
//! `depends-on` and `waits-for`, ordered, as SPEC §4 fixes them.)
//!
//! Nothing sleeps for a fixed time: the units meet through files, and the
//! test awaits states over the control socket.

use flotilla_tests::init::TestDir;
use flotilla_tests::procs;
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
