//! `systemd-run --socket-property=ListenStream=ADDR CMD` with Debian's
//! `systemd-run`: one `StartTransientUnit` of a socket with its service
//! as an auxiliary unit; the init listens, the first connection starts
//! the service, handed the socket, which answers it; both go at the
//! socket's stop. `Accept=yes` is refused, saying why; sent without a
//! service (`busctl`), its template's instance answers each connection
//! (docs/dbus.md, "Transient sockets").

use super::{busd, debian_tool, made_trigger, manager_call, started, stop_trigger, systemctl};
use flotilla_tests::init::TestDir;
use flotilla_tests::{free_port, wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::io::Read;

/// The service: takes its socket as fd 3 (`LISTEN_FDS`), answers one
/// connection with its own PID and `LISTEN_PID`, then exits.
const ANSWER: &str = "import os, socket\n\
s = socket.socket(fileno=3)\n\
s.setblocking(True)\n\
c, _ = s.accept()\n\
c.sendall(('pid=%d listen_pid=%s fds=%s\\n' % (os.getpid(), os.environ.get('LISTEN_PID'), \
os.environ.get('LISTEN_FDS'))).encode())\n\
c.close()\n";

#[test]
fn systemd_run_socket_property_starts_its_service_at_the_first_connection() {
    let dir = TestDir::new();
    let init = started(&dir);
    let bus = busd(&dir);
    let port = free_port();
    let listen = format!("--socket-property=ListenStream=127.0.0.1:{port}");
    let answer = dir.file("answer.py", ANSWER).display().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec!["--unit", "answer", &listen];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["/usr/bin/python3", &answer]);
        debian_tool(&bus, "/usr/bin/systemd-run", &args)
    };
    made_trigger(&run(&["--socket-property=Accept=no"]), "socket", "answer");
    init.wait_state("answer.socket", UnitState::Running);
    let out = systemctl(&bus, &["list-units", "--no-legend", "answer.socket"]);
    assert!(out.stdout.contains("answer.socket"), "{out:?}");

    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut said = String::new();
    c.read_to_string(&mut said).expect("the service's answer");
    let fields: Vec<&str> = said.split_whitespace().collect();
    let pid = fields.first().and_then(|f| f.strip_prefix("pid="));
    assert!(
        pid.is_some()
            && fields.get(1) == Some(&format!("listen_pid={}", pid.unwrap_or("")).as_str())
            && fields.get(2) == Some(&"fds=1"),
        "{said:?}"
    );

    // Its stop lets the socket go, with its service once that has ended.
    wait_for(WAIT, "answer.service ended", || {
        let units = init.status().units;
        units
            .iter()
            .find(|u| u.unit == "answer.service")
            .is_some_and(|u| u.state != UnitState::Running && u.state != UnitState::Starting)
            .then_some(())
    });
    stop_trigger(&init, &bus, "answer.socket", &["answer.service"]);

    // `Accept=yes` starts instances of `answer@.service`, not the
    // service systemd-run sends.
    let out = run(&["--socket-property=Accept=yes"]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("answer.socket starts answer@.service, not answer.service"),
        "{out:?}"
    );
}

#[test]
fn an_accepting_socket_starts_an_instance_of_its_template_per_connection() {
    let dir = TestDir::new();
    let accepted = dir.file(
        "accepted.py",
        "import socket\nc = socket.socket(fileno=3)\nc.sendall(b'instance\\n')\nc.close()\n",
    );
    dir.file(
        "units/each@.service",
        &format!(
            "[Service]\nExecStart=/usr/bin/python3 {}\n",
            accepted.display()
        ),
    );
    let init = started(&dir);
    let bus = busd(&dir);
    let port = free_port().to_string();
    let address = format!("127.0.0.1:{port}");
    manager_call(
        &bus,
        &[
            "StartTransientUnit",
            "ssa(sv)a(sa(sv))",
            "each.socket",
            "fail",
            "2",
            "Listen",
            "a(ss)",
            "1",
            "Stream",
            &address,
            "Accept",
            "b",
            "true",
            "0",
        ],
    )
    .expect(0);
    init.wait_state("each.socket", UnitState::Running);
    for _ in 0..2 {
        let mut c = std::net::TcpStream::connect(&address).expect("connect");
        c.set_read_timeout(Some(WAIT)).expect("timeout");
        let mut said = String::new();
        c.read_to_string(&mut said).expect("the instance's answer");
        assert_eq!(said, "instance\n");
    }
    stop_trigger(&init, &bus, "each.socket", &[]);
}
