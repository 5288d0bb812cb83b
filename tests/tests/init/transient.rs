//! System tests of transient units (docs/contract.md §3b) through the real `init` and
//! `initctl`: `initctl run` and `initctl add` put a unit into the transient
//! set `initctl`, required across target switches until `initctl
//! stop-transient`; its output is captured like any unit's. And the plain
//! want (`systemctl start`'s request), which lasts until a target switch.

use flotilla_tests::init::TestDir;
use flotilla_tests::procs;
use flotilla_units::protocol::{Reply, Request};
use flotilla_units::state::UnitState;

fn machine(dir: &TestDir) {
    dir.unit("default", "unit: default\ntype: virtual\n");
    dir.unit("rescue", "unit: rescue\ntype: virtual\n");
    dir.unit("db", "unit: db\nexec-start: sleep 100\n");
}

#[test]
fn run_adds_a_unit_that_outlives_a_switch_until_stop_transient() {
    let dir = TestDir::new();
    machine(&dir);
    let init = dir.start("default");
    init.wait_state("default", UnitState::Running);

    let out = init.ctl(&[
        "run",
        "--name",
        "hello",
        "--",
        "sh",
        "-c",
        "echo hi there; exec sleep 100",
    ]);
    out.expect(0);
    assert_eq!(out.stdout, "hello: added\n");
    let hello = init.wait_state("hello", UnitState::Running);
    assert_eq!(hello.source, "transient:initctl");
    let pid = hello.pid.expect("a pid");
    flotilla_tests::wait_for(flotilla_tests::WAIT, "hello's output", || {
        init.ctl(&["logs", "hello"])
            .stdout
            .contains("hi there")
            .then_some(())
    });

    // A name taken, a run without a command: refused, nothing changes.
    init.ctl(&["run", "--name", "db", "--", "true"]).expect(1);
    init.ctl(&["run"]).expect(2);
    init.ctl(&["run", "--name", "x"]).expect(2);

    // Part of the current target, whichever it is.
    init.ctl(&["set-target", "rescue", "--wait"]).expect(0);
    let hello = init.unit("hello");
    assert_eq!((hello.state, hello.pid), (UnitState::Running, Some(pid)));

    let out = init.ctl(&["stop-transient", "hello"]);
    out.expect(0);
    init.wait("hello gone", |s| s.units.iter().all(|u| u.unit != "hello"));
    flotilla_tests::wait_for(flotilla_tests::WAIT, "hello's process gone", || {
        (!procs::alive(pid)).then_some(())
    });
    init.ctl(&["stop-transient", "hello"]).expect(4);
    init.ctl(&["stop-transient", "db"]).expect(4);
}

#[test]
fn run_names_and_depends_and_add_reads_a_unit_file() {
    let dir = TestDir::new();
    machine(&dir);
    let init = dir.start("default");
    init.wait_state("default", UnitState::Running);

    // Without a name: run-1; a command that ends is `exited`.
    let out = init.ctl(&["run", "--", "true"]);
    assert_eq!(out.expect(0).stdout, "run-1: added\n");
    init.wait_state("run-1", UnitState::Exited);
    // Its dependency: it waits for it.
    init.ctl(&[
        "run",
        "--name",
        "w",
        "--depends-on",
        "nosuch",
        "--",
        "sleep",
        "100",
    ])
    .expect(0);
    init.wait_unit("w", "blocked", |u| {
        u.blocked_by.as_deref() == Some("nosuch")
    });
    init.ctl(&[
        "run",
        "--name",
        "w2",
        "--depends-on",
        "db",
        "--",
        "sleep",
        "100",
    ])
    .expect(0);
    init.wait_all(&["db", "w2"], UnitState::Running);

    let file = dir.file("extra/tick.yaml", "unit: tick\nexec-start: sleep 100\n");
    let out = init.ctl(&["add", &file.display().to_string()]);
    out.expect(0);
    assert_eq!(out.stdout, "tick: added\n");
    init.wait_state("tick", UnitState::Running);

    let bad = dir.file("extra/bad.yaml", "unit: bad\nexec-strat: sleep 100\n");
    let out = init.ctl(&["add", &bad.display().to_string()]);
    out.expect(1);
    assert!(out.stderr.contains("unknown key `exec-strat`"), "{out:?}");
    assert!(init.status().units.iter().all(|u| u.unit != "bad"));
}

#[test]
fn a_want_lasts_until_the_next_switch() {
    let dir = TestDir::new();
    machine(&dir);
    let init = dir.start("default");
    init.wait_state("default", UnitState::Running);
    assert_eq!(init.unit("db").state, UnitState::Disabled);

    let r = init.client().call(Request::Want { unit: "db".into() });
    assert!(matches!(r, Reply::Accepted { .. }), "{r:?}");
    init.wait_state("db", UnitState::Running);
    let r = init.client().call(Request::Want {
        unit: "nosuch".into(),
    });
    assert!(matches!(r, Reply::Error { .. }), "{r:?}");

    init.ctl(&["set-target", "rescue", "--wait"]).expect(0);
    init.wait_state("db", UnitState::Disabled);

    // Dropped by unwant too.
    init.client().call(Request::Want { unit: "db".into() });
    init.wait_state("db", UnitState::Running);
    let r = init.client().call(Request::Unwant { unit: "db".into() });
    assert!(matches!(r, Reply::Accepted { .. }), "{r:?}");
    init.wait_state("db", UnitState::Disabled);
}
