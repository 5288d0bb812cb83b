//! A running unit whose systemd unit file a reload no longer finds
//! (systemd's `not-found`, docs/systemd-units.md): an `Accept=yes`
//! socket runs on through the reload, active but no longer listening,
//! shown `not-found`, until it is stopped by hand; then it is gone. Its
//! file back at a reload, it is still active and still not listening; a
//! restart binds again (systemd's test 12).

use super::*;

const APP: &str = "unit: app\ntype: virtual\n";
const SOCKET: &str = "[Socket]\nListenStream=127.0.0.1:9090\nAccept=yes\n";
const SERVICE: &str = "[Service]\nExecStart=/bin/echo-conn\nStandardInput=socket\n";
const ADDRESS: &str = "stream 127.0.0.1:9090";

/// `echo.socket`'s status.
fn socket_status(h: &mut Harness) -> flotilla_units::protocol::UnitStatus {
    let r = h.request(Request::Status {
        name: Some("echo.socket".into()),
    });
    match r.last() {
        Some(Reply::Unit(u)) => u.clone(),
        _ => panic!("{r:?}"),
    }
}

/// The instances of `echo@.service` running.
fn running_instances(h: &Harness) -> usize {
    let p = &h.rt.planner;
    p.graph()
        .ids()
        .filter(|&i| p.graph().node(i).spec.name.starts_with("echo@"))
        .filter(|&i| p.state(i) == UnitState::Running)
        .count()
}

/// `echo.socket` started and listening, then its file moved away and
/// systemd's daemon-reload: the harness, and the file's path.
fn socket_whose_file_is_gone() -> (Harness, String) {
    let sys = fake_with(&[("app", APP)]);
    let file = format!("{UNITS}/echo.socket");
    sys.set_file(file.clone(), SOCKET);
    sys.set_file(format!("{UNITS}/echo@.service"), SERVICE);
    let mut h = Harness::start(sys, "app");
    let r = h.request(Request::Want {
        unit: "echo.socket".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.turn_until("the socket listens", |h| {
        h.state("echo.socket") == UnitState::Running
    });
    h.sys().remove_file(std::path::Path::new(&file));
    let r = h.request(Request::Reload { keep_running: true });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.settle();
    (h, file)
}

#[test]
fn an_accepting_socket_whose_file_is_gone_runs_on_until_stopped() {
    let (mut h, _) = socket_whose_file_is_gone();
    let s = socket_status(&mut h);
    assert!(s.not_found, "{s:?}");
    assert_eq!(s.load_state(), "not-found");
    assert_eq!(s.state, UnitState::Running);
    // Its socket closed: nothing accepts.
    assert!(s.listening.is_empty(), "{s:?}");
    assert!(h.sys().connect_listening(ADDRESS).is_err());
    assert_eq!(running_instances(&h), 0);

    // Stopped by hand, it stops and leaves the list; a reload forgets it.
    let r = h.request(Request::Unwant {
        unit: "echo.socket".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.turn_until("the socket stopped", |h| {
        h.state("echo.socket") == UnitState::Disabled
    });
    let r = h.request(Request::List);
    let Some(Reply::List { units }) = r.last() else {
        panic!("{r:?}")
    };
    assert!(units.iter().all(|u| u.unit != "echo.socket"), "{units:?}");
    let r = h.request(Request::Reload { keep_running: true });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    assert_eq!(h.rt.planner.graph().unit("echo.socket"), None);
}

#[test]
fn a_socket_whose_file_comes_back_listens_again_only_once_restarted() {
    let (mut h, file) = socket_whose_file_is_gone();
    assert!(socket_status(&mut h).not_found);

    // The file back and read again: still active, still not listening.
    h.sys().set_file(file, SOCKET);
    let r = h.request(Request::Reload { keep_running: true });
    assert!(matches!(r.last(), Some(Reply::Applied(_))), "{r:?}");
    h.settle();
    let s = socket_status(&mut h);
    assert!(!s.not_found, "{s:?}");
    assert_eq!(s.state, UnitState::Running);
    assert!(s.listening.is_empty(), "{s:?}");
    assert!(h.sys().connect_listening(ADDRESS).is_err());

    // Restarted: it binds again and accepts.
    let r = h.request(Request::Restart {
        unit: "echo.socket".into(),
    });
    assert!(matches!(r.last(), Some(Reply::Accepted { .. })), "{r:?}");
    h.turn_until("the socket listens again", |h| {
        socket_status(h).listening == [ADDRESS]
    });
    let _client = h.sys().connect_listening(ADDRESS).unwrap();
    h.turn_until("an instance runs", |h| running_instances(h) == 1);
}
