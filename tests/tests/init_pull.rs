//! System tests of `Wants=`/`Requires=` without `After=` (YAML `wants`,
//! `requires`), through the real `init`: units that require each other
//! start concurrently, a required unit that fails stops its requirer, and
//! `init --check` over a copy of this machine's `/lib/systemd/system`
//! finds fewer ordering cycles than when every `Requires=`/`Wants=` also
//! ordered (how the translator read them before).
//!
//! Nothing sleeps for a fixed time: the units meet through files, and the
//! test awaits states over the control socket.

use flotilla_tests::init::{copy_tree, Out, TestDir};
use flotilla_tests::procs;
use flotilla_units::state::UnitState;
use std::path::Path;

/// A service that, before it runs, marks itself started and waits until
/// `other` has marked itself too: it gets past its `ExecStartPre=` only if
/// the two are starting at the same time.
fn meeting(dir: &TestDir, name: &str, other: &str, unit_section: &str) {
    let d = dir.path().display();
    dir.file(
        &format!("units/{name}.service"),
        &format!(
            "[Unit]\n{unit_section}\n[Service]\n\
             ExecStartPre=/bin/sh -c 'touch {d}/{name}-up; \
             until [ -e {d}/{other}-up ]; do sleep 0.02; done'\n\
             ExecStart=/bin/sleep 100\nRestart=no\nTimeoutStartSec=30\n"
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
    meeting(&dir, "a", "b", "Requires=b.service");
    meeting(&dir, "b", "a", "Requires=a.service");
    dir.file("units/default.target", "[Unit]\nWants=a.service\n");
    let init = dir.start("default.target");
    let s = init.wait_all(
        &["a.service", "b.service", "default.target"],
        UnitState::Running,
    );
    assert!(s.load_errors.is_empty(), "{:?}", s.load_errors);

    // The graph shows the kind, with no ordering.
    let out = init.ctl(&["analyze", "dot"]);
    out.expect(0);
    let edge = out
        .stdout
        .lines()
        .find(|l| l.contains(r#"tooltip="a.service requires b.service""#))
        .unwrap_or_else(|| panic!("no requires edge in {}", out.stdout));
    assert!(edge.contains("arrowhead=empty"), "{edge}");

    // b crashes (Restart=no: failed): a is stopped, blocked by b.
    let a0 = init.pid_of("a.service");
    procs::signal(init.pid_of("b.service"), libc::SIGKILL);
    init.wait_state("b.service", UnitState::Failed);
    let a = init.wait_unit("a.service", "blocked by b", |u| {
        u.state == UnitState::Waiting && u.blocked_by.as_deref() == Some("b.service")
    });
    assert_eq!(a.pid, None);
    assert!(!procs::alive(a0), "a's process was stopped");
}

/// `init --check` over `dir` with multi-user.target as the target.
fn check(dir: &TestDir, units: &Path) -> Out {
    let units = units.display().to_string();
    dir.run_init(&[
        "--check",
        "--units",
        &units,
        "--target",
        "multi-user.target",
    ])
}

/// How many lines of `out` contain `what`.
fn count(out: &Out, what: &str) -> usize {
    out.stdout.lines().filter(|l| l.contains(what)).count()
}

/// The figure at the end of a check: `N unit(s), E error(s), W warning(s)`.
fn warnings(out: &Out) -> usize {
    let last = out.stdout.lines().last().unwrap_or_default();
    let w = last.rsplit(", ").next().unwrap_or_default();
    w.split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| {
            panic!("no figures in {last:?}");
        })
}

/// Adds `After=` naming every unit of the file's `Requires=` and `Wants=`
/// to its `[Unit]` section: what the translator made of them before.
fn order_every_pull(text: &str) -> String {
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("Requires=").or(l.strip_prefix("Wants=")))
        .flat_map(str::split_whitespace)
        .collect();
    if names.is_empty() {
        return text.to_string();
    }
    text.replacen(
        "[Unit]\n",
        &format!("[Unit]\nAfter={}\n", names.join(" ")),
        1,
    )
}

/// The copy of `/lib/systemd/system` checks with fewer ordering cycles
/// (and fewer warnings) than the same files with every `Requires=` and
/// `Wants=` ordered; the figures are printed.
#[test]
fn debian_units_have_fewer_ordering_cycles() {
    let dir = TestDir::new();
    let now = dir.join("now");
    let before = dir.join("before");
    for to in [&now, &before] {
        copy_tree("/lib/systemd/system", to);
    }
    let mut rewritten = 0;
    for entry in std::fs::read_dir(&before).expect("list") {
        let path = entry.expect("entry").path();
        if path.is_symlink() || !path.is_file() {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let ordered = order_every_pull(&text);
        if ordered != text {
            std::fs::write(&path, ordered).expect("write");
            rewritten += 1;
        }
    }
    assert!(
        rewritten > 10,
        "only {rewritten} files with Requires=/Wants="
    );

    let (new, old) = (check(&dir, &now), check(&dir, &before));
    let cycles = |o: &Out| count(o, "ordering cycle") + count(o, "dependency cycle");
    println!(
        "init --check over /lib/systemd/system ({rewritten} files with Requires=/Wants=): \
         {} ordering cycles, {} dependency cycles, {} warnings; \
         with After= for every Requires=/Wants= (as read before): \
         {} ordering cycles, {} dependency cycles, {} warnings",
        count(&new, "ordering cycle"),
        count(&new, "dependency cycle"),
        warnings(&new),
        count(&old, "ordering cycle"),
        count(&old, "dependency cycle"),
        warnings(&old),
    );
    assert!(cycles(&new) < cycles(&old), "{}", new.stdout);
    assert!(warnings(&new) < warnings(&old));
    assert_eq!(count(&new, "dependency cycle"), 0, "{}", new.stdout);
}
