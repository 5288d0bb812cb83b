//! `initctl reexec` in supervisor mode: the init executes its binary again
//! (a copy in the test dir, so that a test may replace it) and carries
//! every unit over: a service keeps its PID, state and restart counter and
//! is still supervised, its log lines from before are still there, a
//! oneshot that was running finishes and is recorded; a binary that cannot
//! be executed leaves the init running as it was (harness: `tests/src/`).

use flotilla_tests::init::{Init, TestDir};
use flotilla_tests::{procs, wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::path::PathBuf;

const DEFAULT: &str = "unit: default\ntype: virtual\ndepends-on: [svc, job, cond]\n";

/// A oneshot whose condition fails: skipped, and still so after a re-exec
/// (busd shows a skipped unit inactive, as systemd does).
const COND: &str = "unit: cond\ntype: oneshot\nexec-start: /bin/true\n\
                    condition-path-exists: /nonexistent/flotilla-test\n";

/// A service that says so at each start and then sleeps.
const SVC: &str = "unit: svc\nexec-start: /bin/sh -c 'echo svc up $$; exec sleep 1000'\n\
                   restart: always\nrestart-delay: 50ms\n";

/// A oneshot that runs until the test creates `go` in its directory.
fn job(dir: &TestDir) -> String {
    let go = dir.join("go");
    format!(
        "unit: job\ntype: oneshot\nexec-start: [\"/bin/sh\", \"-c\", \
         \"echo job begins; while [ ! -e {} ]; do sleep 0.02; done; echo job done\"]\n",
        go.display()
    )
}

/// Starts the init (a copy) with `svc` and `job`; waits until svc runs
/// and the job is under way.
fn start(dir: &TestDir) -> (Init, PathBuf) {
    dir.unit("default", DEFAULT);
    dir.unit("svc", SVC);
    dir.unit("job", &job(dir));
    dir.unit("cond", COND);
    let copy = dir.init_copy();
    let init = dir.init().target("default").binary(copy.clone()).start();
    init.wait_state("svc", UnitState::Running);
    init.wait_state("job", UnitState::Starting);
    (init, copy)
}

/// Kills svc's process and waits for the restart: its new PID.
fn crash_and_restart(init: &Init, restarts: u32) -> i32 {
    let pid = init.pid_of("svc");
    // Running on spawn: its line comes a moment later, and is awaited so
    // that each process leaves one in the log.
    wait_for(WAIT, "svc's line", || {
        log_of(init, "svc")
            .contains(&format!("svc up {pid}"))
            .then_some(())
    });
    procs::signal(pid, libc::SIGKILL);
    let st = init.wait_unit("svc", "restarted after a crash", |u| {
        u.state == UnitState::Running && u.restarts == restarts && u.pid != Some(pid)
    });
    st.pid.expect("svc's pid")
}

fn log_of(init: &Init, unit: &str) -> String {
    let out = init.ctl(&["logs", unit]);
    out.expect(0);
    out.stdout.clone()
}

#[test]
fn reexec_carries_every_unit_over() {
    let dir = TestDir::new();
    let (init, _) = start(&dir);
    let first = init.pid_of("svc");
    let pid = crash_and_restart(&init, 1);
    let before = init.unit("svc");
    assert!(init.unit("cond").skipped, "{:?}", init.unit("cond"));

    let out = init.ctl(&["reexec"]);
    out.expect(0);
    assert!(out.stdout.starts_with("re-executed "), "{out:?}");
    assert!(init.output().contains("init: re-executed: target default"));

    // The same init process, the same service process, state and count.
    assert!(procs::alive(init.pid));
    let after = init.unit("svc");
    assert_eq!(after.pid, Some(pid));
    assert_eq!(after.state, UnitState::Running);
    assert_eq!(after.restarts, 1);
    assert_eq!(after.since, before.since);
    assert_eq!(init.unit("job").state, UnitState::Starting);
    let cond = init.unit("cond");
    assert!(cond.skipped && cond.state == UnitState::Exited, "{cond:?}");
    let log = log_of(&init, "svc");
    assert!(log.contains(&format!("svc up {first}")), "{log}");
    assert!(log.contains(&format!("svc up {pid}")), "{log}");

    // Still supervised: a crash is seen and the service restarts.
    let third = crash_and_restart(&init, 2);
    // Running on spawn: its first line comes a moment later.
    wait_for(WAIT, "the restarted svc's line", || {
        log_of(&init, "svc")
            .contains(&format!("svc up {third}"))
            .then_some(())
    });

    // The oneshot that ran across the re-exec finishes and is recorded.
    std::fs::write(dir.join("go"), "").expect("go");
    init.wait_state("job", UnitState::Exited);
    let log = log_of(&init, "job");
    assert!(
        log.contains("job begins") && log.contains("job done"),
        "{log}"
    );
    init.wait_state("default", UnitState::Running);
}

#[test]
fn reexec_twice_and_the_log_writer_keeps_its_streams() {
    let dir = TestDir::new();
    dir.log_writer("");
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [svc]\nwaits-for: [log-writer]\n",
    );
    dir.unit("svc", SVC);
    let copy = dir.init_copy();
    let init = dir.init().target("default").binary(copy).start();
    let pid = init.wait_state("svc", UnitState::Running).pid.expect("pid");
    let in_file = |needle: String| {
        wait_for(WAIT, &format!("`{needle}` in svc.log"), || {
            let lines = dir.log_file_lines("svc");
            lines
                .iter()
                .any(|(_, l)| l.contains(&needle))
                .then_some(lines)
        })
    };
    in_file(format!("svc up {pid}"));
    for _ in 0..2 {
        init.ctl(&["reexec"]).expect(0);
    }
    assert_eq!(init.unit("svc").pid, Some(pid));
    // No zombie of the init's: every child it has is a unit's, alive.
    let children: Vec<i32> = procs::all_pids()
        .into_iter()
        .filter(|&p| procs::ppid(p) == Some(init.pid))
        .collect();
    assert!(children.contains(&pid), "{children:?}");
    assert!(
        children.iter().all(|&c| procs::state(c) != Some('Z')),
        "{children:?}"
    );
    // The log writer connected again (it did not fail and restart); the
    // lines after the re-exec go to the same stream of the same file,
    // numbered on.
    let writer = init.wait_unit("flotilla-logd", "connected again", |u| {
        u.state == UnitState::Running && u.restarts == 0
    });
    assert_eq!(writer.restarts, 0);
    wait_for(WAIT, "the writer connected", || {
        init.status()
            .log_writer
            .is_some_and(|w| w.connected)
            .then_some(())
    });
    let next = crash_and_restart(&init, 1);
    let lines = in_file(format!("svc up {next}"));
    let headers = lines.iter().filter(|(n, _)| *n == 0).count();
    assert_eq!(headers, 1, "{lines:?}");
    let numbers: Vec<u64> = lines.iter().map(|l| l.0).filter(|&n| n > 0).collect();
    assert!(numbers.windows(2).all(|w| w[1] == w[0] + 1), "{lines:?}");
}

/// Puts a file that is no program at `path`, as an upgrade does: a new
/// file renamed over the old (the running binary cannot be written).
fn replace(path: &std::path::Path, mode: u32) {
    let text = path.with_extension("text");
    std::fs::write(&text, "not a program\n").expect("write");
    flotilla_tests::bins::install(&text, path, mode);
}

/// The descriptors the init's spawner sets aside for children in flight
/// (96 lanes of 3, `init/src/sys/procs/spawn/lanes.rs`), held from its start.
const LANE_FDS: usize = 288;

#[test]
fn a_binary_that_cannot_be_executed_leaves_the_init_as_it_was() {
    let dir = TestDir::new();
    let (init, copy) = start(&dir);
    let pid = init.pid_of("svc");

    // Not executable.
    replace(&copy, 0o644);
    let out = init.ctl(&["reexec"]);
    out.expect(1);
    assert!(
        out.stderr.contains("re-exec failed: execve") && out.stderr.contains("permission denied"),
        "{out:?}"
    );
    // Executable, but no program.
    replace(&copy, 0o755);
    let out = init.ctl(&["reexec"]);
    out.expect(1);
    assert!(out.stderr.contains("exec format error"), "{out:?}");
    // Missing.
    std::fs::remove_file(&copy).expect("rm");
    let out = init.ctl(&["reexec"]);
    out.expect(1);
    assert!(out.stderr.contains("no such file"), "{out:?}");

    // The init goes on with its state, and supervises.
    let st = init.unit("svc");
    assert_eq!((st.pid, st.state), (Some(pid), UnitState::Running));
    crash_and_restart(&init, 1);
    std::fs::write(dir.join("go"), "").expect("go");
    init.wait_state("job", UnitState::Exited);
    // What it kept open for the exec was closed again: the fds it holds
    // are those of a fresh start's (a re-exec that failed leaks nothing):
    // a few, and the spawner's lanes, reserved for the process's life.
    let fds = std::fs::read_dir(format!("/proc/{}/fd", init.pid))
        .expect("fd dir")
        .count();
    assert!(fds < 32 + LANE_FDS, "{fds} descriptors");
    wait_for(WAIT, "the init still answering", || {
        init.ctl(&["status"]).code.eq(&0).then_some(())
    });
}

/// The init's own helpers (the unit loader of a reload here) run the
/// binary the init runs, not the file at its path now: a package upgrade
/// that replaced the file leaves a reload working, with the loader that
/// speaks this init's protocol, until the re-exec to the new one.
#[test]
fn a_reload_after_the_binary_was_replaced_runs_the_running_binarys_loader() {
    let dir = TestDir::new();
    let (init, copy) = start(&dir);
    // A newer init, as far as this one can tell: its loader's output is
    // nothing this init reads.
    let newer = copy.with_extension("newer");
    std::fs::write(&newer, "#!/bin/sh\necho '{\"a newer format\": 1}'\n").expect("write");
    flotilla_tests::bins::install(&newer, &copy, 0o755);
    dir.unit("late", "unit: late\ntype: virtual\n");
    let out = init.ctl(&["reload"]);
    out.expect(0);
    assert!(out.stdout.contains("added:     late"), "{out:?}");
    assert!(!init.output().contains("loader"), "{}", init.output());
    let out = init.ctl(&["start", "late"]);
    out.expect(0);
    init.wait_state("late", UnitState::Running);
    std::fs::write(dir.join("go"), "").expect("go");
    init.wait_state("job", UnitState::Exited);
}
