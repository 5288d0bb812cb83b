//! Transient paths: what `systemd-run --path-property=PathExists=/x CMD`
//! sends (the path unit, with the service it starts as its auxiliary
//! unit; each watched path one pair of `Paths`).

use super::tests::{props, service_aux, v};
use super::*;
use flotilla_units::trigger::PathKind;

fn paths(list: &[(&str, &str)]) -> OwnedValue {
    let pairs: Vec<(String, String)> = list
        .iter()
        .map(|(k, p)| (k.to_string(), p.to_string()))
        .collect();
    v(pairs)
}

#[test]
fn a_path_comes_with_the_service_it_starts() {
    let path = props(vec![
        ("Description", v("/bin/true")),
        (
            "Paths",
            paths(&[("PathExists", "/tmp/x"), ("DirectoryNotEmpty", "/tmp/d/")]),
        ),
        ("MakeDirectory", v(true)),
        ("DirectoryMode", v(0o700u32)),
        ("TriggerLimitBurst", v(3u32)),
    ]);
    let a = asked("run-u7.path", path, service_aux("run-u7.service")).unwrap();
    assert_eq!(a.unit.kind, UnitType::Path);
    assert_eq!(a.unit.extras.collect_mode, Some(CollectMode::Inactive));
    let p = a.unit.path().unwrap();
    let watched: Vec<(PathKind, String)> = p
        .paths
        .iter()
        .map(|s| (s.kind, s.path.display().to_string()))
        .collect();
    assert_eq!(
        watched,
        [
            (PathKind::Exists, "/tmp/x".to_string()),
            (PathKind::DirectoryNotEmpty, "/tmp/d".to_string())
        ]
    );
    assert!(p.make_directory);
    assert_eq!(p.directory_mode, 0o700);
    assert_eq!(a.unit.extras.triggers.to_vec(), ["run-u7.service"]);
    assert_eq!(a.aux.len(), 1);
    assert_eq!(a.aux[0].name, "run-u7.service");
    // An empty list resets them: a path unit with nothing to watch is
    // the translator's error, the caller's.
    let reset = props(vec![
        ("Paths", paths(&[("PathExists", "/tmp/x")])),
        ("Paths", paths(&[])),
    ]);
    let e = asked("p.path", reset, service_aux("p.service")).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
}

#[test]
fn what_a_path_cannot_take_is_named() {
    // A key that is none of a path's.
    let bad = props(vec![("Paths", paths(&[("PathGone", "/tmp/x")]))]);
    let e = asked("p.path", bad, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(
        e.message.contains("property Paths: PathGone: not one of"),
        "{}",
        e.message
    );
    // A relative path: the translator's error.
    let bad = props(vec![("Paths", paths(&[("PathExists", "tmp/x")]))]);
    let e = asked("p.path", bad, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(e.message.contains("property Paths"), "{}", e.message);
    // A key flotilla's paths do not take (systemd 253's): refused, named.
    let poll = props(vec![
        ("Paths", paths(&[("PathExists", "/tmp/x")])),
        ("PollLimitBurst", v(3u32)),
    ]);
    let e = asked("p.path", poll, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
    assert!(
        e.message.contains("StartTransientUnit with PollLimitBurst"),
        "{}",
        e.message
    );
    // A service the path does not start (its `Unit=` names another).
    let other = props(vec![
        ("Paths", paths(&[("PathExists", "/tmp/x")])),
        ("Unit", v("other.service")),
    ]);
    let e = asked("p.path", other, service_aux("p.service")).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
    assert!(
        e.message
            .contains("p.path starts other.service, not p.service"),
        "{}",
        e.message
    );
}
