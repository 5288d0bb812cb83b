//! Transient paths and sockets: what `systemd-run
//! --path-property=PathExists=/x CMD` and `--socket-property=ListenStream=…`
//! send (the path unit or socket, with the service it starts as its
//! auxiliary unit; each watched path one pair of `Paths`, each socket one
//! of `Listen`).

use super::tests::{props, service_aux, v};
use super::*;
use flotilla_units::spec::UnitType;
use flotilla_units::trigger::{ListenAddr, ListenKind, PathKind};

/// An `a(ss)` of `Paths` or `Listen`.
fn pairs(list: &[(&str, &str)]) -> OwnedValue {
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
            pairs(&[("PathExists", "/tmp/x"), ("DirectoryNotEmpty", "/tmp/d/")]),
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
        ("Paths", pairs(&[("PathExists", "/tmp/x")])),
        ("Paths", pairs(&[])),
    ]);
    let e = asked("p.path", reset, service_aux("p.service")).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
}

#[test]
fn what_a_path_cannot_take_is_named() {
    // A key that is none of a path's.
    let bad = props(vec![("Paths", pairs(&[("PathGone", "/tmp/x")]))]);
    let e = asked("p.path", bad, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(
        e.message.contains("property Paths: PathGone: not one of"),
        "{}",
        e.message
    );
    // A relative path: the translator's error.
    let bad = props(vec![("Paths", pairs(&[("PathExists", "tmp/x")]))]);
    let e = asked("p.path", bad, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(e.message.contains("property Paths"), "{}", e.message);
    // A key flotilla's paths do not take (systemd 253's): refused, named.
    let poll = props(vec![
        ("Paths", pairs(&[("PathExists", "/tmp/x")])),
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
        ("Paths", pairs(&[("PathExists", "/tmp/x")])),
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

#[test]
fn a_socket_comes_with_the_service_it_starts() {
    let socket = props(vec![
        ("Description", v("/bin/true")),
        (
            "Listen",
            pairs(&[("Stream", "127.0.0.1:4321"), ("Datagram", "/run/d.sock")]),
        ),
        ("Accept", v(false)),
        ("SocketMode", v(0o600u32)),
        ("Backlog", v(16u32)),
        ("ReceiveBuffer", v(65536u64)),
    ]);
    let a = asked("run-u7.socket", socket, service_aux("run-u7.service")).unwrap();
    assert_eq!(a.unit.kind, UnitType::Socket);
    let s = a.unit.socket().unwrap();
    let listen: Vec<(ListenKind, &ListenAddr)> =
        s.listen.iter().map(|l| (l.kind, &l.addr)).collect();
    assert_eq!(
        listen,
        [
            (
                ListenKind::Stream,
                &ListenAddr::Inet {
                    ip: Some([127, 0, 0, 1].into()),
                    port: 4321
                }
            ),
            (
                ListenKind::Datagram,
                &ListenAddr::Path("/run/d.sock".into())
            ),
        ]
    );
    assert!(!s.accept);
    assert_eq!(s.socket_mode, 0o600);
    assert_eq!(s.backlog, Some(16));
    assert_eq!(a.unit.extras.triggers.to_vec(), ["run-u7.service"]);
    assert_eq!(a.aux[0].name, "run-u7.service");
    // Ordered before its service, as a unit file's socket.
    assert!(a.unit.before.contains(&"run-u7.service".to_string()));
}

#[test]
fn what_a_socket_cannot_take_is_named() {
    // A kind that is none of a socket's.
    let bad = props(vec![("Listen", pairs(&[("Pipe", "/run/p")]))]);
    let e = asked("s.socket", bad, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(
        e.message.contains("property Listen: Pipe: not one of"),
        "{}",
        e.message
    );
    // A port out of range: the translator's error.
    let bad = props(vec![("Listen", pairs(&[("Stream", "70000")]))]);
    let e = asked("s.socket", bad, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.InvalidArgs");
    assert!(e.message.contains("property Listen"), "{}", e.message);
    // A kind flotilla's sockets do not make: refused, named.
    let mq = props(vec![
        ("Listen", pairs(&[("Stream", "4321")])),
        ("Listen", pairs(&[("MessageQueue", "/q")])),
    ]);
    let e = asked("s.socket", mq, Vec::new()).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
    assert!(
        e.message.contains("StartTransientUnit with Listen")
            && e.message.contains("ListenMessageQueue="),
        "{}",
        e.message
    );
    // `Accept=yes`: instances of `s@.service`, not systemd-run's
    // `s.service`.
    let accept = props(vec![
        ("Listen", pairs(&[("Stream", "4321")])),
        ("Accept", v(true)),
    ]);
    let e = asked("s.socket", accept, service_aux("s.service")).unwrap_err();
    assert_eq!(e.name, "org.freedesktop.DBus.Error.NotSupported");
    assert!(
        e.message
            .contains("s.socket starts s@.service, not s.service"),
        "{}",
        e.message
    );
}
