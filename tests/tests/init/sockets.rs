//! System tests of socket units through the real `init` and `initctl`
//! binaries (harness: `tests/src/`): the init binds a `.socket`'s sockets
//! itself when the unit starts, a client connects before the service
//! runs, and the service — a small Python daemon that takes its sockets
//! from `LISTEN_FDS` and checks `LISTEN_PID` against its own PID — is
//! started by that connection and answers it. After the daemon exits the
//! socket listens again and the next connection starts it anew.

use flotilla_tests::init::TestDir;
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;

/// The daemon: answers one connection on each of its sockets that has one
/// pending, with what it was handed, then exits (as an idle time-out
/// would make it).
const DAEMON: &str = r#"
import os, socket, sys
pid = os.getpid()
n = int(os.environ.get("LISTEN_FDS", "0"))
listen_pid = os.environ.get("LISTEN_PID", "")
names = os.environ.get("LISTEN_FDNAMES", "")
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
stray = [fd for fd in range(3 + n, 256) if is_open(fd)]
socks = [socket.socket(fileno=3 + i) for i in range(n)]
for s in socks:
    s.setblocking(True)
s = socks[0]
conn, _ = s.accept()
conn.recv(16)
conn.sendall(("pid=%d listen_pid=%s fds=%d names=%s stray=%s\n" % (pid, listen_pid, n, names, stray)).encode())
conn.close()
"#;

use flotilla_tests::free_port;

fn ask(port: u16) -> String {
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    c.set_read_timeout(Some(WAIT)).expect("timeout");
    c.write_all(b"ping\n").expect("write");
    let mut out = String::new();
    c.read_to_string(&mut out).expect("an answer");
    out
}

/// `echo.service`: the test daemon ([`DAEMON`]), which `echo.socket`
/// activates.
fn echo_service(dir: &TestDir) {
    let daemon = dir.file("daemon.py", DAEMON);
    dir.file(
        "units/echo.service",
        &format!(
            "[Service]\nExecStart=/usr/bin/python3 {}\n",
            daemon.display()
        ),
    );
}

#[test]
fn a_client_connecting_before_the_service_runs_is_answered_by_it() {
    let dir = TestDir::new();
    let port = free_port();
    let unix = dir.join("run/sub/echo.sock");
    dir.file(
        "units/echo.socket",
        &format!(
            "[Socket]\nListenStream=127.0.0.1:{port}\nListenStream={}\nSocketMode=0600\n\
             DirectoryMode=0750\nRemoveOnStop=yes\n",
            unix.display()
        ),
    );
    echo_service(&dir);
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [echo.socket]\n",
    );
    let init = dir.start("default");
    let sock = init.wait_state("echo.socket", UnitState::Running);
    assert_eq!(
        sock.listening,
        [
            format!("stream 127.0.0.1:{port}"),
            format!("stream {}", unix.display())
        ]
    );
    assert_eq!(init.unit("echo.service").state, UnitState::Disabled);
    assert_eq!(sock.activates.as_deref(), Some("echo.service"));
    // systemctl list-sockets: each address with its unit and service.
    let out = dir.systemctl(&["list-sockets", "--no-legend"]);
    out.expect(0);
    let mut rows: Vec<Vec<String>> = out
        .stdout
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect();
    rows.sort();
    let mut want = vec![
        vec![
            format!("127.0.0.1:{port}"),
            "echo.socket".into(),
            "echo.service".into(),
        ],
        vec![
            unix.display().to_string(),
            "echo.socket".into(),
            "echo.service".into(),
        ],
    ];
    want.sort();
    assert_eq!(rows, want, "{out:?}");
    let mode = std::fs::metadata(&unix)
        .expect("socket file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let dmode = std::fs::metadata(unix.parent().expect("dir"))
        .expect("socket dir")
        .permissions()
        .mode();
    assert_eq!(dmode & 0o777, 0o750);

    // The connection is queued on the init's socket and starts the service.
    let answer = ask(port);
    let fields: Vec<&str> = answer.split_whitespace().collect();
    let pid = fields[0].trim_start_matches("pid=");
    assert_eq!(fields[1], format!("listen_pid={pid}"), "{answer}");
    assert_eq!(fields[2], "fds=2", "{answer}");
    assert_eq!(fields[3], "names=echo.socket:echo.socket", "{answer}");
    assert_eq!(fields[4], "stray=[]", "{answer}");

    // The daemon exited after its answer: the socket listens again, and
    // the next connection starts it again.
    init.wait_unit("echo.service", "the service to settle", |u| {
        u.state != UnitState::Running && u.state != UnitState::Starting
    });
    let again = ask(port);
    assert!(again.starts_with("pid="), "{again}");
    assert_ne!(again.split_whitespace().next(), Some(fields[0]), "{again}");
    let shown = init
        .ctl(&["status", "echo.socket"])
        .expect(0)
        .stdout
        .clone();
    assert!(shown.contains(&format!("127.0.0.1:{port}")), "{shown}");

    // Stopping the socket unit closes its sockets and removes the file.
    let mut init = init;
    init.signal(libc::SIGTERM);
    assert_eq!(init.wait_exit(), 0);
    wait_for(WAIT, "the socket file to be removed", || {
        (!unix.exists()).then_some(())
    });
}

/// `initctl reexec` carries a socket unit's sockets and its triggered
/// service: the service, started by a connection and waiting for the
/// client to speak, goes on across the re-exec and answers; afterwards the
/// same socket starts it again.
#[test]
fn a_reexec_keeps_the_sockets_and_what_waits_in_them() {
    let dir = TestDir::new();
    let port = free_port();
    dir.file(
        "units/echo.socket",
        &format!("[Socket]\nListenStream=127.0.0.1:{port}\n"),
    );
    echo_service(&dir);
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [echo.socket]\n",
    );
    let copy = dir.init_copy();
    let init = dir.init().target("default").binary(copy).start();
    init.wait_state("echo.socket", UnitState::Running);
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let pid = init.wait_state("echo.service", UnitState::Running).pid;
    init.ctl(&["reexec"]).expect(0);
    assert_eq!(init.unit("echo.service").pid, pid, "still its service");
    c.set_read_timeout(Some(WAIT)).expect("timeout");
    c.write_all(b"ping\n").expect("write");
    let mut out = String::new();
    c.read_to_string(&mut out).expect("an answer");
    assert!(
        out.contains("fds=1 names=echo.socket"),
        "{out}: {}",
        init.output()
    );
    assert_eq!(
        init.unit("echo.socket").listening,
        [format!("stream 127.0.0.1:{port}")]
    );
    // And the next, after the daemon exited.
    init.wait_unit("echo.service", "the service to settle", |u| {
        u.state != UnitState::Running && u.state != UnitState::Starting
    });
    assert!(ask(port).starts_with("pid="));
}

/// A reload that leaves the socket unit unchanged keeps its sockets (the
/// same socket file); one that changes it closes them and binds the new
/// ones.
#[test]
fn a_reload_keeps_an_unchanged_socket_and_rebinds_a_changed_one() {
    use std::os::unix::fs::MetadataExt;
    let dir = TestDir::new();
    let a = dir.join("a.sock");
    let b = dir.join("b.sock");
    let socket = |path: &std::path::Path, desc: &str| {
        dir.file(
            "units/echo.socket",
            &format!(
                "[Unit]\nDescription={desc}\n[Socket]\nListenStream={}\n",
                path.display()
            ),
        );
    };
    socket(&a, "one");
    echo_service(&dir);
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [echo.socket]\n",
    );
    let init = dir.start("default");
    init.wait_state("echo.socket", UnitState::Running);
    let ino = std::fs::metadata(&a).expect("a.sock").ino();
    dir.file(
        "units/other.yaml",
        "unit: other\nexec-start: /bin/sleep 60\n",
    );
    init.ctl(&["reload"]).expect(0);
    assert_eq!(
        std::fs::metadata(&a).expect("a.sock").ino(),
        ino,
        "the same socket"
    );
    assert_eq!(init.unit("echo.socket").state, UnitState::Running);

    socket(&b, "two");
    init.ctl(&["reload"]).expect(0);
    let u = init.wait_unit("echo.socket", "listening on b", |u| {
        u.state == UnitState::Running && u.listening == [format!("stream {}", b.display())]
    });
    assert_eq!(u.description.as_deref(), Some("two"));
    let mut c = std::os::unix::net::UnixStream::connect(&b).expect("connect b");
    c.write_all(b"ping\n").expect("write");
    let mut out = String::new();
    c.read_to_string(&mut out).expect("an answer");
    assert!(out.starts_with("pid="), "{out}");
    assert!(
        std::os::unix::net::UnixStream::connect(&a).is_err(),
        "nobody listens on a"
    );
}

/// A target that requires the service too starts it at once, without a
/// connection, after its socket (a `.socket` orders its service after
/// it), and the service is handed the socket all the same.
#[test]
fn a_service_the_target_requires_starts_without_a_connection_and_gets_its_socket() {
    let dir = TestDir::new();
    let port = free_port();
    dir.file(
        "units/echo.socket",
        &format!("[Socket]\nListenStream={port}\n"),
    );
    echo_service(&dir);
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [echo.service, echo.socket]\n",
    );
    let init = dir.start("default");
    init.wait_state("echo.service", UnitState::Running);
    assert_eq!(
        init.unit("echo.socket").listening,
        [format!("stream {port}")]
    );
    let answer = ask(port);
    assert!(answer.contains(" fds=1 names=echo.socket "), "{answer}");
}

#[test]
fn netlink_special_files_and_symlinks() {
    let dir = TestDir::new();
    let out = dir.join("kinds.out");
    // The service says what it was handed: fd 3's family, protocol and
    // groups, and fd 4's file and access mode.
    let show = dir.script(
        "show.py",
        "import os, socket\n\
         s = socket.socket(fileno=3)\n\
         _, groups = s.getsockname()\n\
         info = open('/proc/self/fdinfo/4').read()\n\
         flags = int(info.split('flags:')[1].split()[0], 8)\n\
         print(int(s.family), s.proto, groups, os.readlink('/proc/self/fd/4'), flags & 3, \
               os.environ['LISTEN_FDNAMES'])\n",
    );
    dir.file(
        "units/kinds.socket",
        "[Socket]\nListenNetlink=kobject-uevent 1\nListenSpecial=/dev/null\nWritable=yes\n\
         PassCredentials=yes\nReceiveBuffer=1M\n",
    );
    dir.file(
        "units/kinds.service",
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/usr/bin/python3 {}\n\
             StandardOutput=file:{}\n",
            show.display(),
            out.display()
        ),
    );
    let sock = dir.join("log.sock");
    let link = dir.join("log.link");
    dir.file(
        "units/log.socket",
        &format!(
            "[Socket]\nListenDatagram={}\nSymlinks={}\nRemoveOnStop=yes\n",
            sock.display(),
            link.display()
        ),
    );
    dir.file(
        "units/log.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [kinds.socket, kinds.service, log.socket]\n",
    );
    dir.unit("other", "unit: other\ntype: virtual\n");
    let init = dir.start("default");
    init.wait_state("kinds.service", UnitState::Exited);
    assert_eq!(
        init.unit("kinds.socket").listening,
        ["netlink kobject-uevent 1", "special /dev/null"]
    );
    let shown = std::fs::read_to_string(&out).expect("the service's output");
    // AF_NETLINK 16, NETLINK_KOBJECT_UEVENT 15, group 1; O_RDWR 2.
    assert_eq!(shown, "16 15 1 /dev/null 2 kinds.socket:kinds.socket\n");
    init.wait_state("log.socket", UnitState::Running);
    assert_eq!(std::fs::read_link(&link).expect("the link"), sock);
    init.ctl(&["set-target", "other"]).expect(0);
    init.wait_state("log.socket", UnitState::Disabled);
    assert!(
        std::fs::symlink_metadata(&sock).is_err() && std::fs::symlink_metadata(&link).is_err(),
        "RemoveOnStop= removes the socket file and its link"
    );
}

/// `Sockets=`: a service is handed the socket of a socket unit whose
/// `Service=` names another unit; the line also pulls the socket in and
/// orders it first, so the target need not name it.
#[test]
fn a_service_is_handed_the_sockets_its_sockets_line_names() {
    let dir = TestDir::new();
    let out = dir.join("named.out");
    let sock = dir.join("extra.sock");
    let show = dir.script(
        "show.py",
        "import os, socket\n\
         s = socket.socket(fileno=3)\n\
         print(os.environ['LISTEN_FDS'], os.environ['LISTEN_FDNAMES'], s.type == socket.SOCK_DGRAM, \
               s.getsockname())\n",
    );
    dir.file(
        "units/extra.socket",
        &format!(
            "[Socket]\nListenDatagram={}\nService=elsewhere.service\n",
            sock.display()
        ),
    );
    dir.file(
        "units/elsewhere.service",
        "[Service]\nExecStart=/bin/sleep 1000\n",
    );
    dir.file(
        "units/named.service",
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nSockets=extra.socket\n\
             ExecStart=/usr/bin/python3 {}\nStandardOutput=file:{}\n",
            show.display(),
            out.display()
        ),
    );
    let init = dir.start("named.service");
    init.wait_state("named.service", UnitState::Exited);
    assert_eq!(init.unit("extra.socket").state, UnitState::Running);
    let shown = std::fs::read_to_string(&out).expect("the service's output");
    assert_eq!(shown, format!("1 extra.socket True {}\n", sock.display()));
    // The socket's own service never ran: nothing connected.
    assert_eq!(init.unit("elsewhere.service").state, UnitState::Disabled);
}

/// The usual socket-activated daemon: `socket.socket(fileno=3)` and a
/// plain `accept()` in a loop. It reports its PID and whether its
/// descriptor 3 came non-blocking, and answers every connection.
const LOOP_DAEMON: &str = r#"
import fcntl, os, socket
s = socket.socket(fileno=3)
nb = "yes" if fcntl.fcntl(3, fcntl.F_GETFL) & os.O_NONBLOCK else "no"
while True:
    conn, _ = s.accept()
    conn.recv(16)
    conn.sendall(("pid=%d nonblock=%s\n" % (os.getpid(), nb)).encode())
    conn.close()
"#;

/// The socket-activated `loop.service` ([`LOOP_DAEMON`]) with the extra
/// `[Service]` lines `extra`, started by `loop.socket` on `port`.
fn loop_daemon(dir: &TestDir, port: u16, extra: &str) -> flotilla_tests::init::Init {
    let daemon = dir.file("loop.py", LOOP_DAEMON);
    dir.file(
        "units/loop.socket",
        &format!("[Socket]\nListenStream=127.0.0.1:{port}\n"),
    );
    dir.file(
        "units/loop.service",
        &format!(
            "[Service]\nExecStart=/usr/bin/python3 {}\n{extra}",
            daemon.display()
        ),
    );
    let init = dir.start("loop.socket");
    init.wait_state("loop.socket", UnitState::Running);
    init
}

/// systemd hands a service its sockets blocking (`NonBlocking=` unset):
/// one daemon process answers several connections in a row, each
/// `accept()` waiting for the next client, where a non-blocking socket
/// would end it with `EAGAIN` at its second `accept()` and have it
/// started again for every connection.
#[test]
fn a_daemon_blocking_in_accept_answers_connections_in_a_row() {
    let dir = TestDir::new();
    let port = free_port();
    let init = loop_daemon(&dir, port, "");
    let answers: Vec<String> = (0..4).map(|_| ask(port)).collect();
    let first = &answers[0];
    assert!(first.ends_with(" nonblock=no\n"), "{answers:?}");
    for a in &answers {
        assert_eq!(
            a,
            first,
            "one process answers them all: {answers:?}; loop.service: {:?}\n{}",
            init.unit("loop.service"),
            init.output()
        );
    }
    let pid = first
        .trim_start_matches("pid=")
        .split_whitespace()
        .next()
        .and_then(|p| p.parse::<i32>().ok());
    assert_eq!(pid, Some(init.pid_of("loop.service")), "{answers:?}");
    assert_eq!(init.unit("loop.service").state, UnitState::Running);
}

/// `NonBlocking=yes`: the service gets its socket with `O_NONBLOCK`.
#[test]
fn non_blocking_yes_hands_the_socket_non_blocking() {
    let dir = TestDir::new();
    let port = free_port();
    let init = loop_daemon(&dir, port, "NonBlocking=yes\n");
    let answer = ask(port);
    assert!(
        answer.starts_with("pid=") && answer.ends_with(" nonblock=yes\n"),
        "{answer:?}; loop.service: {:?}\n{}",
        init.unit("loop.service"),
        init.output()
    );
}

/// Debian's `avahi-daemon.service`: `Requires=avahi-daemon.socket`, with
/// the socket stopped (nothing else wants it). A start of the service by
/// hand starts the socket with it, as systemd's transaction does, and the
/// service gets the socket's descriptors: it answers a client at once.
#[test]
fn starting_a_service_starts_the_socket_it_requires() {
    let dir = TestDir::new();
    let port = free_port();
    dir.file(
        "units/echo.socket",
        &format!("[Socket]\nListenStream=127.0.0.1:{port}\n"),
    );
    let daemon = dir.file("daemon.py", DAEMON);
    dir.file(
        "units/echo.service",
        &format!(
            "[Unit]\nRequires=echo.socket\n[Service]\nExecStart=/usr/bin/python3 {}\n",
            daemon.display()
        ),
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [echo.socket]\n",
    );
    let init = dir.start("default");
    init.wait_state("echo.socket", UnitState::Running);
    init.ctl(&["stop", "echo.socket"]).expect(0);
    init.wait_state("echo.socket", UnitState::Disabled);
    init.ctl(&["start", "echo.service"]).expect(0);
    init.wait_state("echo.socket", UnitState::Running);
    init.wait_state("echo.service", UnitState::Running);
    let answer = ask(port);
    assert!(answer.contains("fds=1"), "{answer}");
}
