//! A unit nothing holds is read again when asked for (`load`, a start):
//! a change of its file or a drop-in written since the last reload
//! replaces its definition, as systemd reads a unit it freed; a unit the
//! target holds keeps what it was read with until a reload.

use super::*;
use crate::sys::fake::Op;
use crate::sys::{Errno, Os, SysError};

const APP: &str = "unit: app\ntype: virtual\ndepends-on: [held.service]\n";

/// The description the graph has for `name`.
fn description(h: &Harness, name: &str) -> Option<String> {
    let g = h.rt.planner.graph();
    let id = g.unit(name).unwrap_or_else(|| panic!("no unit {name}"));
    g.node(id).spec.description.clone()
}

fn load(h: &mut Harness, name: &str) {
    let r = h.request(Request::Load { unit: name.into() });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
}

/// A drop-in written for `idle.service` since its last read, then a
/// `load` of it, which takes the drop-in's description.
fn drop_in_and_load(h: &mut Harness) {
    h.sys().add_dir(format!("{UNITS}/idle.service.d"));
    h.sys().set_file(
        format!("{UNITS}/idle.service.d/override.conf"),
        "[Unit]\nDescription=Dropped in\n",
    );
    load(h, "idle.service");
    assert_eq!(
        description(h, "idle.service").as_deref(),
        Some("Dropped in")
    );
}

/// The loop for [`APP`], which holds `held.service`; `idle.service`
/// nothing holds.
fn app_with_held_and_idle() -> Harness {
    let sys = fake_with(&[("app", APP)]);
    sys.set_file(format!("{UNITS}/held.service"), service("Held"));
    sys.set_file(format!("{UNITS}/idle.service"), service("Idle"));
    Harness::start(sys, "app")
}

fn service(description: &str) -> String {
    format!("[Unit]\nDescription={description}\n[Service]\nExecStart=/bin/sleep 1000\n")
}

#[test]
fn a_unit_nothing_holds_is_read_again_and_a_held_one_is_not() {
    let mut h = app_with_held_and_idle();
    assert_eq!(h.state("held.service"), UnitState::Running);

    // Nothing changed on disk: nothing replaced.
    h.sys().take_console();
    load(&mut h, "idle.service");
    assert!(
        !h.sys()
            .take_console()
            .iter()
            .any(|l| l.contains("read again")),
        "an unchanged unit was replaced"
    );

    // A drop-in written since: read again.
    drop_in_and_load(&mut h);
    let said = h.sys().take_console();
    assert!(
        said.iter()
            .any(|l| l == "init: read again: idle.service (changed on disk since it was read)"),
        "{said:?}"
    );

    // The target holds `held.service`: kept as read, running on.
    let pid = h.pid("held.service");
    h.sys()
        .set_file(format!("{UNITS}/held.service"), service("Changed"));
    load(&mut h, "held.service");
    assert_eq!(description(&h, "held.service").as_deref(), Some("Held"));
    assert_eq!(h.pid("held.service"), pid);

    // A start of it reads it again too, before the start.
    h.sys().set_file(
        format!("{UNITS}/idle.service"),
        "[Service]\nExecStart=/bin/started\n",
    );
    let r = h.request(Request::Want {
        unit: "idle.service".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.settle();
    assert_eq!(h.state("idle.service"), UnitState::Running);
    let argv: Vec<String> = h.sys().spawns().iter().map(|s| s.argv.join(" ")).collect();
    assert_eq!(
        argv.last().map(String::as_str),
        Some("/bin/started"),
        "{argv:?}"
    );
}

/// The files of [`UNITS`] a step read.
fn unit_files_read(h: &Harness) -> Vec<PathBuf> {
    (h.sys().take_calls().into_iter())
        .filter_map(|c| match c {
            Call::ReadFile { path, .. } if path.starts_with(UNITS) => Some(path),
            _ => None,
        })
        .collect()
}

#[test]
fn a_path_that_did_not_change_since_its_last_read_is_not_read_again() {
    let mut h = app_with_held_and_idle();
    // The boot's read added each path to its watch before it took it:
    // trusted at once, however recent its files.
    h.sys().take_calls();
    load(&mut h, "idle.service");
    assert_eq!(unit_files_read(&h), Vec::<PathBuf>::new());

    // An edit in place (its directory unchanged): read, and taken.
    h.sys()
        .set_file(format!("{UNITS}/idle.service"), service("Edited"));
    load(&mut h, "idle.service");
    assert!(!unit_files_read(&h).is_empty());
    assert_eq!(description(&h, "idle.service").as_deref(), Some("Edited"));

    // That read watched what it took too: asking again at once reads
    // nothing.
    load(&mut h, "idle.service");
    assert_eq!(unit_files_read(&h), Vec::<PathBuf>::new());

    // A new drop-in: read, and taken.
    drop_in_and_load(&mut h);
}

/// A read whose watch could not hold every path (the system's limit of
/// watches) is trusted only once its times are old enough: a second
/// write in the same tick as the read would not show in them.
#[test]
fn a_read_without_its_watch_is_trusted_once_its_times_are_old() {
    let mut h = app_with_held_and_idle();
    h.sys()
        .set_file(format!("{UNITS}/idle.service"), service("Edited"));
    // Each of the next two reads fails at its first add.
    for _ in 0..2 {
        h.sys().fail_next(
            Op::PathStampAdd,
            SysError::Call {
                call: "inotify_add_watch".into(),
                errno: Os(Errno::ENOSPC),
            },
        );
    }
    load(&mut h, "idle.service");
    assert_eq!(description(&h, "idle.service").as_deref(), Some("Edited"));
    // Too recent to trust: asked at once, read again.
    h.sys().take_calls();
    load(&mut h, "idle.service");
    assert!(
        !unit_files_read(&h).is_empty(),
        "a recent stamp was trusted"
    );
    // Old enough: the first ask lists the path, later ones read nothing.
    h.sys().advance(Duration::from_secs(3));
    load(&mut h, "idle.service");
    h.sys().take_calls();
    load(&mut h, "idle.service");
    assert_eq!(unit_files_read(&h), Vec::<PathBuf>::new());
}

/// Once a check found the path unchanged, later checks ask the watch
/// made for it and list no directory; a change still shows.
#[test]
fn an_unchanged_path_is_checked_by_its_watch_not_listed_again() {
    let mut h = app_with_held_and_idle();
    h.sys().advance(Duration::from_secs(3));
    load(&mut h, "idle.service");
    load(&mut h, "idle.service");
    h.sys().take_calls();
    for _ in 0..3 {
        load(&mut h, "idle.service");
        let r = h.request(Request::Load {
            unit: "nothing-such.service".into(),
        });
        assert!(matches!(r.last(), Some(Reply::Error { .. })), "{r:?}");
    }
    let listed = (h.sys().take_calls().into_iter())
        .filter(|c| matches!(c, Call::ReadDir(_) | Call::FileMtime(_)))
        .count();
    assert_eq!(listed, 0, "the path was listed again");
    h.sys()
        .set_file(format!("{UNITS}/idle.service"), service("Edited"));
    load(&mut h, "idle.service");
    assert_eq!(description(&h, "idle.service").as_deref(), Some("Edited"));
}

#[test]
fn a_unit_held_at_the_last_read_is_read_again_once_nothing_holds_it() {
    let sys = fake_with(&[(
        "app",
        "unit: app\ntype: virtual\ndepends-on: [held.service]\n",
    )]);
    sys.set_file(format!("{UNITS}/held.service"), service("Held"));
    sys.set_file(format!("{UNITS}/idle.service"), service("Idle"));
    sys.set_file(
        format!("{UNITS}/other.yaml"),
        "unit: other\ntype: virtual\n",
    );
    let mut h = Harness::start(sys, "app");
    // Changed while the target holds it: the read for another unit
    // leaves it as it was.
    h.sys()
        .set_file(format!("{UNITS}/held.service"), service("Changed"));
    h.sys().advance(Duration::from_secs(3));
    load(&mut h, "idle.service");
    assert_eq!(description(&h, "held.service").as_deref(), Some("Held"));
    h.sys().advance(Duration::from_secs(3));
    load(&mut h, "idle.service");

    // Nothing holds it any more; the path is as that read saw it, but
    // the definition it had was not taken then: read again.
    h.sys().set_kill_exits(true);
    let r = h.request(Request::SetTarget {
        target: "other".into(),
        wait: false,
        isolate: false,
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.settle();
    assert_eq!(h.state("held.service"), UnitState::Disabled);
    h.sys().take_calls();
    load(&mut h, "held.service");
    assert!(!unit_files_read(&h).is_empty());
    assert_eq!(description(&h, "held.service").as_deref(), Some("Changed"));
    // Taken now: nothing to read any more.
    load(&mut h, "held.service");
    assert_eq!(unit_files_read(&h), Vec::<PathBuf>::new());
}

#[test]
fn a_file_read_while_a_transient_unit_had_its_name_is_loaded_once_the_transient_goes() {
    let mut h = app_with_held_and_idle();
    let r = h.request(add_tool("shadow.service", Vec::new()));
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.settle();

    // A file of that name written while the transient unit runs, and
    // read with the path by a load of another unit.
    h.sys()
        .set_file(format!("{UNITS}/shadow.service"), service("From its file"));
    drop_in_and_load(&mut h);
    h.sys().advance(Duration::from_secs(3));
    load(&mut h, "idle.service");

    // The transient unit goes: its name is the file's now, though the
    // path is as the last read saw it.
    h.sys().set_kill_exits(true);
    let r = h.request(Request::StopTransient {
        name: "shadow.service".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.settle();
    let g = h.rt.planner.graph();
    let gone = g.unit("shadow.service").is_none_or(|i| g.node(i).ghost);
    assert!(gone, "the transient unit is still there");
    load(&mut h, "shadow.service");
    assert_eq!(
        description(&h, "shadow.service").as_deref(),
        Some("From its file")
    );
}

#[test]
fn a_unit_written_since_the_last_read_is_loaded_with_one_read_of_the_path() {
    let sys = fake_with(&[("app", APP)]);
    sys.set_file(format!("{UNITS}/held.service"), service("Held"));
    let mut h = Harness::start(sys, "app");
    h.sys().advance(Duration::from_secs(3));
    h.sys()
        .set_file(format!("{UNITS}/new.service"), service("New"));
    h.sys().take_calls();
    load(&mut h, "new.service");
    assert_eq!(description(&h, "new.service").as_deref(), Some("New"));
    let new = PathBuf::from(format!("{UNITS}/new.service"));
    let reads = unit_files_read(&h).iter().filter(|p| **p == new).count();
    assert_eq!(reads, 1, "the path was read {reads} times");
}

/// Units written together, started one after the other: the first start
/// reads the path, the next takes its unit from what that read kept,
/// unless it needs a unit of the path that read did not keep (one
/// written before the read before it).
#[test]
fn units_written_together_are_read_once_for_their_starts() {
    let mut h = app_with_held_and_idle();
    h.sys().advance(Duration::from_secs(3));
    h.sys()
        .set_file(format!("{UNITS}/old.service"), service("old"));
    h.sys()
        .set_file(format!("{UNITS}/zero.service"), service("zero"));
    load(&mut h, "zero.service");
    h.sys().advance(Duration::from_secs(3));
    for n in ["one", "two"] {
        h.sys().set_file(format!("{UNITS}/{n}.service"), service(n));
    }
    h.sys().set_file(
        format!("{UNITS}/three.service"),
        "[Unit]\nWants=old.service\n[Service]\nExecStart=/bin/sleep 1000\n",
    );
    h.sys().take_calls();
    load(&mut h, "one.service");
    assert!(!unit_files_read(&h).is_empty());

    load(&mut h, "two.service");
    assert_eq!(unit_files_read(&h), Vec::<PathBuf>::new());
    assert_eq!(description(&h, "two.service").as_deref(), Some("two"));

    // `old.service`, which it wants, was written before: read.
    load(&mut h, "three.service");
    assert!(!unit_files_read(&h).is_empty());
    let g = h.rt.planner.graph();
    assert!(g.unit("three.service").is_some() && g.unit("old.service").is_some());
}
