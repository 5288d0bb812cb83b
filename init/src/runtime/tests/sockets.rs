//! Socket units through the loop: the socket is bound when the unit
//! starts and watched; a connection fires it, its service's main process
//! is handed the socket (`LISTEN_FDS`, `LISTEN_FDNAMES`, a `LISTEN_PID`
//! the child fills in) while the loop stops watching it; once the
//! service exited the socket is watched again; a socket that cannot be
//! bound fails its unit, naming the line.

use super::*;
use crate::sys::fake::Op;
use crate::sys::SysError;

const SOCKET: &str =
    "unit: web.socket\ntype: socket\ntriggers: [web]\nlisten-stream: 127.0.0.1:8080\n";
const WEB: &str = "unit: web\nexec-start: /bin/web\n";

fn spawns(calls: &[Call]) -> Vec<&SpawnRecord> {
    calls
        .iter()
        .filter_map(|c| match c {
            Call::Spawn(s) => Some(s),
            _ => None,
        })
        .collect()
}

#[test]
fn a_connection_starts_the_service_which_is_handed_the_socket() {
    let sys = fake_with(&[("web.socket", SOCKET), ("web", WEB)]);
    let mut h = Harness::start(sys, "web.socket");
    assert_eq!(h.state("web.socket"), UnitState::Running);
    assert_eq!(h.state("web"), UnitState::Disabled);
    let calls = h.sys().calls();
    assert!(calls.contains(&Call::Listen("stream 127.0.0.1:8080".into())));
    assert!(
        spawns(&calls).is_empty(),
        "nothing runs before a connection"
    );
    let watched = calls
        .iter()
        .filter(|c| matches!(c, Call::Watch(..)))
        .count();

    let _client = h.sys().connect_listening("stream 127.0.0.1:8080").unwrap();
    h.turn_until("web runs", |h| h.state("web") == UnitState::Running);
    let calls = h.sys().calls();
    let s = spawns(&calls);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].listen_fds, 1);
    assert_eq!(s[0].env_var("LISTEN_FDS").as_deref(), Some("1"));
    assert_eq!(
        s[0].env_var("LISTEN_FDNAMES").as_deref(),
        Some("web.socket")
    );
    assert!(s[0].env_var("LISTEN_PID").is_some());
    assert!(
        calls.iter().any(|c| matches!(c, Call::Unwatch(_))),
        "the service accepts: the loop does not watch the socket"
    );

    // The service exits: the socket is watched again, and the connection
    // still queued starts it again.
    h.exit("web", ExitStatus::Exited(0));
    h.turn_until("web runs again", |h| {
        spawns(&h.sys().calls()).len() == 2 && h.state("web") == UnitState::Running
    });
    let rewatched = h
        .sys()
        .calls()
        .iter()
        .filter(|c| matches!(c, Call::Watch(..)))
        .count();
    assert!(rewatched > watched, "watched again after the exit");
    let r = h.request(Request::Status {
        name: Some("web.socket".into()),
    });
    match r.first() {
        Some(Reply::Unit(u)) => assert_eq!(u.listening, ["stream 127.0.0.1:8080"]),
        _ => panic!("{r:?}"),
    }
}

#[test]
fn a_socket_that_cannot_be_bound_fails_saying_which_line() {
    let sys = fake_with(&[("web.socket", SOCKET), ("web", WEB)]);
    sys.fail_next(
        Op::Listen,
        SysError::Call {
            call: "bind 127.0.0.1:8080".into(),
            errno: crate::sys::Os(crate::sys::Errno::EADDRINUSE),
        },
    );
    let mut h = Harness::start(sys, "web.socket");
    assert_eq!(h.state("web.socket"), UnitState::Failed);
    let r = h.request(Request::Status {
        name: Some("web.socket".into()),
    });
    match r.first() {
        Some(Reply::Unit(u)) => {
            assert!(
                u.status.contains("ListenStream=127.0.0.1:8080"),
                "{}",
                u.status
            );
            assert!(u.listening.is_empty());
        }
        _ => panic!("{r:?}"),
    }
}

/// `sockets` (`Sockets=`): a service is also handed the sockets of the
/// socket units it names, after those of the sockets that trigger it, in
/// the order they were bound; a socket that names neither is not handed.
#[test]
fn a_service_is_handed_the_sockets_it_names() {
    let log = "unit: log.socket\ntype: socket\ntriggers: [other]\n\
               listen-datagram: 127.0.0.1:5514\nfile-descriptor-name: syslog\n";
    let stray = "unit: stray.socket\ntype: socket\ntriggers: [other]\n\
                 listen-stream: 127.0.0.1:9000\n";
    let other = "unit: other\nexec-start: /bin/other\n";
    let web = "unit: web\nexec-start: /bin/web\nsockets: [log.socket]\n\
               waits-for: [web.socket, log.socket, stray.socket]\n";
    let sys = fake_with(&[
        ("web.socket", SOCKET),
        ("log.socket", log),
        ("stray.socket", stray),
        ("other", other),
        ("web", web),
    ]);
    let mut h = Harness::start(sys, "web");
    h.turn_until("web runs", |h| h.state("web") == UnitState::Running);
    let calls = h.sys().calls();
    let s: Vec<_> = spawns(&calls)
        .into_iter()
        .filter(|s| s.argv.first().is_some_and(|a| a == "/bin/web"))
        .collect();
    assert_eq!(s.len(), 1, "{calls:?}");
    assert_eq!(s[0].listen_fds, 2);
    assert_eq!(s[0].env_var("LISTEN_FDS").as_deref(), Some("2"));
    let names = s[0].env_var("LISTEN_FDNAMES").unwrap_or_default();
    let mut names: Vec<&str> = names.split(':').collect();
    names.sort_unstable();
    assert_eq!(names, ["syslog", "web.socket"]);
}
