//! systemd's default dependencies of each kind of unit, on units
//! translated from their files.

use super::*;
use crate::translate_file;

/// The units of `files` (name, text), translated, with the pass run.
fn set(files: &[(&str, &str)]) -> Vec<(UnitSpec, Origin)> {
    let mut units: Vec<(UnitSpec, Origin)> = files
        .iter()
        .map(|(name, text)| {
            let p = translate_file(&format!("/lib/systemd/system/{name}"), name, text);
            let errors: Vec<_> = p.diagnostics.iter().filter(|d| d.is_error()).collect();
            assert!(errors.is_empty(), "{name}: {errors:?}");
            (p.spec.expect("a unit"), p.origin)
        })
        .collect();
    add_default_dependencies(&mut units);
    units
}

fn get<'a>(units: &'a [(UnitSpec, Origin)], name: &str) -> &'a UnitSpec {
    &units.iter().find(|(s, _)| s.name == name).expect(name).0
}

const SPECIAL: [(&str, &str); 8] = [
    ("sysinit.target", "[Unit]\nDefaultDependencies=no\n"),
    (
        "basic.target",
        "[Unit]\nRequires=sysinit.target\nAfter=sysinit.target\n",
    ),
    ("shutdown.target", "[Unit]\nDefaultDependencies=no\n"),
    ("sockets.target", "[Unit]\nDefaultDependencies=no\n"),
    ("timers.target", "[Unit]\nDefaultDependencies=no\n"),
    ("paths.target", "[Unit]\nDefaultDependencies=no\n"),
    ("time-set.target", "[Unit]\nDefaultDependencies=no\n"),
    ("time-sync.target", "[Unit]\nDefaultDependencies=no\n"),
];

fn with_special(own: &[(&'static str, &'static str)]) -> Vec<(UnitSpec, Origin)> {
    let mut files = SPECIAL.to_vec();
    files.extend_from_slice(own);
    set(&files)
}

#[test]
fn a_service_requires_sysinit_and_is_ordered_after_basic() {
    let units = with_special(&[
        ("a.service", "[Service]\nExecStart=/bin/true\n"),
        (
            "early.service",
            "[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/bin/true\n",
        ),
    ]);
    let a = get(&units, "a.service");
    assert_eq!(a.depends_on, ["sysinit.target"]);
    assert_eq!(a.after, ["sysinit.target", "basic.target"]);
    assert_eq!(a.conflicts, ["shutdown.target"]);
    assert_eq!(a.before, ["shutdown.target"]);
    assert!(a.requires.is_empty());
    // DefaultDependencies=no: nothing.
    let e = get(&units, "early.service");
    assert!(e.depends_on.is_empty() && e.after.is_empty() && e.before.is_empty());
    assert!(e.conflicts.is_empty() && e.requires.is_empty());
    // The special targets themselves: basic.target as written (its
    // Requires=+After= of sysinit.target), and Before=shutdown.target.
    let b = get(&units, "basic.target");
    assert_eq!(b.depends_on, ["sysinit.target"]);
    assert_eq!(b.before, ["shutdown.target"]);
    assert_eq!(b.conflicts, ["shutdown.target"]);
    assert!(get(&units, "shutdown.target").conflicts.is_empty());
}

#[test]
fn sockets_timers_and_paths_come_before_their_target() {
    let units = with_special(&[
        ("a.socket", "[Socket]\nListenStream=/run/a.sock\n"),
        ("a.service", "[Service]\nExecStart=/bin/true\n"),
        ("b.timer", "[Timer]\nOnCalendar=daily\n"),
        ("b.service", "[Service]\nExecStart=/bin/true\n"),
        ("c.timer", "[Timer]\nOnBootSec=5min\n"),
        ("c.service", "[Service]\nExecStart=/bin/true\n"),
        ("d.path", "[Path]\nPathExists=/run/d\n"),
        ("d.service", "[Service]\nExecStart=/bin/true\n"),
    ]);
    let s = get(&units, "a.socket");
    assert_eq!(s.before, ["a.service", "sockets.target", "shutdown.target"]);
    assert_eq!(s.depends_on, ["sysinit.target"]);
    assert_eq!(s.conflicts, ["shutdown.target"]);
    let b = get(&units, "b.timer");
    assert_eq!(b.before, ["timers.target", "shutdown.target"]);
    assert_eq!(
        b.after,
        ["sysinit.target", "time-set.target", "time-sync.target"]
    );
    let c = get(&units, "c.timer");
    assert_eq!(c.after, ["sysinit.target"], "no calendar: no time targets");
    let d = get(&units, "d.path");
    assert_eq!(d.before, ["paths.target", "shutdown.target"]);
    assert_eq!(d.depends_on, ["sysinit.target"]);
}

#[test]
fn only_units_in_the_set_are_named() {
    let units = set(&[("a.service", "[Service]\nExecStart=/bin/true\n")]);
    let a = get(&units, "a.service");
    assert!(a.depends_on.is_empty() && a.requires.is_empty());
    assert!(a.after.is_empty() && a.before.is_empty() && a.conflicts.is_empty());
}

#[test]
fn twice_is_once() {
    let mut units = with_special(&[
        ("a.service", "[Service]\nExecStart=/bin/true\n"),
        (
            "multi-user.target",
            "[Unit]\nWants=a.service\nRequires=basic.target\n",
        ),
    ]);
    let once = units.clone();
    add_default_dependencies(&mut units);
    assert_eq!(once, units);
    // The target is ordered after what it pulls in.
    let m = get(&units, "multi-user.target");
    assert_eq!(m.waits_for, ["a.service"]);
    assert_eq!(m.depends_on, ["basic.target"]);
    assert!(m.wants.is_empty() && m.requires.is_empty());
}

/// A unit that wants a target it is ordered before (Debian's
/// `networking.service` and `network.target`) is no loop: `Wants=` orders
/// nothing, and the unit says `DefaultDependencies=no`.
#[test]
fn wanting_a_target_one_comes_before_is_no_loop() {
    let units = with_special(&[
        (
            "networking.service",
            "[Unit]\nDefaultDependencies=no\nWants=network.target\nBefore=network.target\n\
             [Service]\nType=oneshot\nExecStart=/bin/true\n",
        ),
        ("network.target", "[Unit]\n"),
    ]);
    let n = get(&units, "networking.service");
    assert_eq!(n.wants, ["network.target"]);
    assert!(n.waits_for.is_empty());
    assert_eq!(n.before, ["network.target"]);
}
