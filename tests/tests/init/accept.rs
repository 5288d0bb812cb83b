//! System tests of `Accept=yes` socket units through the real `init` and
//! `initctl` binaries: the init accepts each connection itself, makes an
//! instance of the socket's template service for it (named as systemd
//! names it), hands the connection over as the one descriptor 3
//! (`LISTEN_FDS=1`, `LISTEN_FDNAMES=connection`), and removes the instance
//! when it has ended. The services are inetd-style programs that talk on
//! fd 3: a small Python one that reports what it was given, and `sh`.

use flotilla_tests::init::TestDir;
use flotilla_tests::WAIT;
use flotilla_units::state::UnitState;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::FromRawFd;

/// The inetd-style service: reads a line on fd 3 and answers with what it
/// was handed, on fd 3.
const REPORTER: &str = r#"
import os, socket
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
stray = [fd for fd in range(4, 256) if is_open(fd)]
c = socket.socket(fileno=3)
line = c.makefile("rb").readline().decode().strip()
e = os.environ
c.sendall(("unit=%s fds=%s names=%s pid_ok=%s remote=%s:%s stray=%s line=%s\n" % (
    e.get("INIT_UNIT"), e.get("LISTEN_FDS"), e.get("LISTEN_FDNAMES"),
    e.get("LISTEN_PID") == str(os.getpid()), e.get("REMOTE_ADDR"),
    e.get("REMOTE_PORT"), stray, line)).encode())
c.close()
"#;

use flotilla_tests::free_port;

/// A TCP connection to 127.0.0.1:`port` from the loopback address `from`.
fn connect_from(from: [u8; 4], port: u16) -> TcpStream {
    // SAFETY: plain system calls on a socket this function owns; the
    // addresses are valid `sockaddr_in`s of the length given.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket");
        let stream = TcpStream::from_raw_fd(fd);
        let addr = |ip: [u8; 4], port: u16| libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(ip),
            },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let local = addr(from, 0);
        assert_eq!(
            libc::bind(fd, std::ptr::from_ref(&local).cast(), len),
            0,
            "bind {from:?}"
        );
        let remote = addr([127, 0, 0, 1], port);
        assert_eq!(
            libc::connect(fd, std::ptr::from_ref(&remote).cast(), len),
            0,
            "connect"
        );
        stream
    }
}

/// Sends a line on `c` and reads the answer to its end.
fn talk(c: &mut TcpStream, line: &str) -> String {
    c.set_read_timeout(Some(WAIT)).expect("timeout");
    c.write_all(format!("{line}\n").as_bytes()).expect("write");
    let mut out = String::new();
    c.read_to_string(&mut out).expect("an answer");
    out
}

/// `echo.socket` with `extra` `[Socket]` lines, `echo@.service` running
/// `exec`, and a target requiring the socket.
fn accept_units(dir: &TestDir, listen: &str, extra: &str, exec: &str) {
    dir.file(
        "units/echo.socket",
        &format!("[Socket]\n{listen}Accept=yes\n{extra}"),
    );
    dir.file(
        "units/echo@.service",
        &format!("[Unit]\nDescription=echo for %i\n[Service]\nExecStart={exec}\n"),
    );
    dir.unit(
        "default",
        "unit: default\ntype: virtual\ndepends-on: [echo.socket]\n",
    );
}

/// The names of the units the init has now whose name starts with `echo@`.
fn instances(init: &flotilla_tests::init::Init) -> Vec<String> {
    init.status()
        .units
        .into_iter()
        .map(|u| u.unit)
        .filter(|n| n.starts_with("echo@"))
        .collect()
}

#[test]
fn each_connection_gets_its_own_instance_handed_the_connection_as_fd_3() {
    let dir = TestDir::new();
    let port = free_port();
    let unix = dir.join("run/echo.sock");
    let reporter = dir.file("reporter.py", REPORTER);
    accept_units(
        &dir,
        &format!(
            "ListenStream=127.0.0.1:{port}\nListenStream={}\n",
            unix.display()
        ),
        "",
        &format!("/usr/bin/python3 {}", reporter.display()),
    );
    let init = dir.start("default");
    let sock = init.wait_state("echo.socket", UnitState::Running);
    assert_eq!(sock.activates.as_deref(), Some("echo@.service"));
    let c = sock
        .connections
        .expect("an Accept=yes socket shows its connections");
    assert_eq!((c.now, c.accepted), (0, 0));

    // A TCP connection: instance 0, named by both ends.
    let mut conn = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let client_port = conn.local_addr().expect("local").port();
    let name = format!("echo@0-127.0.0.1:{port}-127.0.0.1:{client_port}.service");
    let u = init.wait_state(&name, UnitState::Running);
    assert_eq!(
        u.description.as_deref(),
        Some(&*format!(
            "echo for 0-127.0.0.1:{port}-127.0.0.1:{client_port}"
        ))
    );
    let sock = init.unit("echo.socket");
    let c = sock.connections.expect("connections");
    assert_eq!((c.now, c.accepted), (1, 1));
    let shown = init
        .ctl(&["status", "echo.socket"])
        .expect(0)
        .stdout
        .clone();
    assert!(shown.contains("1 now, 1 accepted"), "{shown}");
    let listed = dir.systemctl(&["list-sockets", "--no-legend"]);
    assert!(
        listed.stdout.contains("echo@.service (1 connection)"),
        "{listed:?}"
    );
    let answer = talk(&mut conn, "hello");
    assert_eq!(
        answer,
        format!(
            "unit={name} fds=1 names=connection pid_ok=True remote=127.0.0.1:{client_port} \
             stray=[] line=hello\n"
        )
    );
    // The instance ended: it leaves the unit set, the connection closes.
    init.wait(&format!("{name} to be removed"), |s| {
        !s.units.iter().any(|u| u.unit == name)
    });
    let c = init.unit("echo.socket").connections.expect("connections");
    assert_eq!((c.now, c.accepted), (0, 1));

    // A unix connection: instance 1, named by the peer's PID and UID.
    let mut u = std::os::unix::net::UnixStream::connect(&unix).expect("connect unix");
    u.set_read_timeout(Some(WAIT)).expect("timeout");
    u.write_all(b"over unix\n").expect("write");
    let mut out = String::new();
    u.read_to_string(&mut out).expect("an answer");
    // SAFETY: plain system call.
    let uid = unsafe { libc::geteuid() };
    let unit = format!("echo@1-{}-{uid}.service", std::process::id());
    assert!(
        out.starts_with(&format!(
            "unit={unit} fds=1 names=connection pid_ok=True remote=None:None"
        )),
        "{out}"
    );
    assert!(out.ends_with("line=over unix\n"), "{out}");
}

/// Many clients at once: each is served by its own process, every
/// instance runs at the same time, and all are gone afterwards.
#[test]
fn many_concurrent_connections_each_run_their_own_instance() {
    const N: usize = 40;
    let dir = TestDir::new();
    let port = free_port();
    // A plain shell service: reads a line on fd 3, answers on fd 3 with
    // its PID (`$$` is systemd's escape of `$`).
    accept_units(
        &dir,
        &format!("ListenStream=127.0.0.1:{port}\n"),
        "",
        "/bin/sh -c 'read line <&3; echo \"$$$$ got $$line\" >&3'",
    );
    let init = dir.start("default");
    init.wait_state("echo.socket", UnitState::Running);
    let mut conns: Vec<TcpStream> = (0..N)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).expect("connect"))
        .collect();
    let st = init.wait("every connection's instance running", |s| {
        s.units
            .iter()
            .filter(|u| u.unit.starts_with("echo@") && u.state == UnitState::Running)
            .count()
            == N
    });
    let sock = st
        .units
        .iter()
        .find(|u| u.unit == "echo.socket")
        .expect("socket");
    let c = sock.connections.expect("connections");
    assert_eq!((c.now, c.accepted), (N as u32, N as u64));
    let mut pids = std::collections::BTreeSet::new();
    for (i, c) in conns.iter_mut().enumerate() {
        let answer = talk(c, &format!("n{i}"));
        let (pid, rest) = answer.split_once(' ').expect("pid and line");
        assert_eq!(rest, format!("got n{i}\n"));
        pids.insert(pid.to_string());
    }
    assert_eq!(pids.len(), N, "one process per connection");
    init.wait("every instance removed", |s| {
        !s.units.iter().any(|u| u.unit.starts_with("echo@"))
    });
    assert_eq!(init.unit("echo.socket").connections.map(|c| c.now), Some(0));
}

/// Over `MaxConnections=` a connection is closed at once (a line in the
/// socket's log says why); `MaxConnectionsPerSource=` counts per client
/// address. The held ones are served all the same.
#[test]
fn connections_over_the_limits_are_closed_at_once() {
    let dir = TestDir::new();
    let port = free_port();
    accept_units(
        &dir,
        &format!("ListenStream=127.0.0.1:{port}\n"),
        "MaxConnections=3\nMaxConnectionsPerSource=2\n",
        "/bin/sh -c 'read line <&3; echo \"got $line\" >&3'",
    );
    let init = dir.start("default");
    init.wait_state("echo.socket", UnitState::Running);
    let running = |n: usize| {
        init.wait(&format!("{n} instances running"), |s| {
            s.units
                .iter()
                .filter(|u| u.unit.starts_with("echo@") && u.state == UnitState::Running)
                .count()
                == n
        });
    };
    let closed_at_once = |mut c: TcpStream| {
        c.set_read_timeout(Some(WAIT)).expect("timeout");
        let mut buf = [0u8; 16];
        // End of file (or a reset), without writing anything.
        assert!(matches!(c.read(&mut buf), Ok(0) | Err(_)), "closed");
    };
    let mut a = connect_from([127, 0, 0, 1], port);
    let mut b = connect_from([127, 0, 0, 1], port);
    running(2);
    // A third from the same address: over the per-source limit.
    closed_at_once(connect_from([127, 0, 0, 1], port));
    let log = init.ctl(&["logs", "echo.socket"]).expect(0).stdout.clone();
    assert!(
        log.contains("connection from 127.0.0.1 closed: 2 connections from 127.0.0.1 already (MaxConnectionsPerSource=2)"),
        "{log}"
    );
    // Another address is fine, up to the socket's limit.
    let mut c = connect_from([127, 0, 0, 2], port);
    running(3);
    closed_at_once(connect_from([127, 0, 0, 3], port));
    let log = init.ctl(&["logs", "echo.socket"]).expect(0).stdout.clone();
    assert!(
        log.contains("connection from 127.0.0.3 closed: 3 connections already (MaxConnections=3)"),
        "{log}"
    );
    assert_eq!(instances(&init).len(), 3);
    for x in [&mut a, &mut b, &mut c] {
        assert_eq!(talk(x, "hi"), "got hi\n");
    }
    // Room again once they ended.
    init.wait("the instances removed", |s| {
        !s.units.iter().any(|u| u.unit.starts_with("echo@"))
    });
    let mut d = connect_from([127, 0, 0, 1], port);
    assert_eq!(talk(&mut d, "again"), "got again\n");
    let c = init.unit("echo.socket").connections.expect("connections");
    assert_eq!(c.accepted, 4, "the closed ones are not counted");
}

/// Bad `Accept=` values and an `Accept=yes` socket whose service is not a
/// template are errors `init --check` names.
#[test]
fn bad_accept_settings_are_clear_errors() {
    let dir = TestDir::new();
    let units = dir.units().display().to_string();
    let d = dir.path().display().to_string();
    for (socket, service, want) in [
        (
            "[Socket]\nListenStream=7007\nAccept=maybe\n",
            "echo@.service",
            format!("{d}/units/echo.socket:3:1: invalid Accept=maybe: \"maybe\" is not a boolean (yes/no)"),
        ),
        (
            "[Socket]\nListenStream=7007\nAccept=yes\nMaxConnections=0\n",
            "echo@.service",
            format!("{d}/units/echo.socket:4:1: invalid MaxConnections=0: \"0\" is not a number of at least 1"),
        ),
        (
            "[Socket]\nListenStream=7007\nAccept=yes\nMaxConnectionsPerSource=many\n",
            "echo@.service",
            "invalid MaxConnectionsPerSource=many: \"many\" is not a number of at least 0".to_string(),
        ),
        (
            "[Socket]\nListenStream=7007\nAccept=yes\n",
            "echo.service",
            "with `accept: yes`, the unit started is a template (`name@.service`), not `echo.service`".to_string(),
        ),
        (
            "[Socket]\nListenDatagram=7007\nAccept=yes\n",
            "echo@.service",
            "Accept=yes works only with stream and sequential-packet sockets, not ListenDatagram=7007".to_string(),
        ),
    ] {
        for f in ["echo.socket", "echo.service", "echo@.service"] {
            let _ = std::fs::remove_file(dir.units().join(f));
        }
        let socket = if service == "echo.service" {
            format!("{socket}Service=echo.service\n")
        } else {
            socket.to_string()
        };
        dir.file("units/echo.socket", &socket);
        dir.file(
            &format!("units/{service}"),
            "[Service]\nExecStart=/bin/cat\n",
        );
        let out = dir.run_init(&["--check", "--units", &units]);
        let all = format!("{}{}", out.stdout, out.stderr);
        assert_eq!(out.code, 1, "{socket}: {all}");
        assert!(all.contains(&want), "{socket}: want {want}\n{all}");
    }
}

/// A connection held across `initctl reload` and `initctl reexec`: its
/// instance goes on (the same process), is served, and is removed when it
/// ends; the count of accepted connections goes on too.
#[test]
fn a_connection_outlives_a_reload_and_a_reexec() {
    let dir = TestDir::new();
    let port = free_port();
    accept_units(
        &dir,
        &format!("ListenStream=127.0.0.1:{port}\n"),
        "",
        "/bin/sh -c 'read line <&3; echo \"got $line\" >&3'",
    );
    let copy = dir.init_copy();
    let init = dir.init().target("default").binary(copy).start();
    init.wait_state("echo.socket", UnitState::Running);
    let mut first = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    assert_eq!(talk(&mut first, "one"), "got one\n");
    init.wait("the first instance removed", |s| {
        !s.units.iter().any(|u| u.unit.starts_with("echo@"))
    });
    let mut held = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let client_port = held.local_addr().expect("local").port();
    let name = format!("echo@1-127.0.0.1:{port}-127.0.0.1:{client_port}.service");
    let pid = init.wait_state(&name, UnitState::Running).pid;
    init.ctl(&["reload"]).expect(0);
    assert_eq!(init.unit(&name).pid, pid, "kept by the reload");
    init.ctl(&["reexec"]).expect(0);
    let u = init.unit(&name);
    assert_eq!(
        (u.state, u.pid),
        (UnitState::Running, pid),
        "kept by the re-exec"
    );
    let c = init.unit("echo.socket").connections.expect("connections");
    assert_eq!((c.now, c.accepted), (1, 2));
    assert_eq!(talk(&mut held, "two"), "got two\n");
    init.wait(&format!("{name} removed"), |s| {
        !s.units.iter().any(|u| u.unit == name)
    });
    // Numbering goes on.
    let mut third = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let client_port = third.local_addr().expect("local").port();
    init.wait_state(
        &format!("echo@2-127.0.0.1:{port}-127.0.0.1:{client_port}.service"),
        UnitState::Running,
    );
    assert_eq!(talk(&mut third, "three"), "got three\n");
}

/// inetd's classic form: `StandardInput=socket`, so the connection is the
/// service's standard input and (following it) its output, and a plain
/// filter program serves it; no `LISTEN_FDS` is passed then.
#[test]
fn standard_input_socket_serves_a_plain_filter() {
    let dir = TestDir::new();
    let port = free_port();
    accept_units(
        &dir,
        &format!("ListenStream=127.0.0.1:{port}\n"),
        "",
        "/bin/sh -c 'read line; echo \"got $line fds=${LISTEN_FDS:-none}\"'",
    );
    dir.file(
        "units/echo@.service.d/stdin.conf",
        "[Service]\nStandardInput=socket\n",
    );
    let init = dir.start("default");
    init.wait_state("echo.socket", UnitState::Running);
    for n in 0..3 {
        let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        assert_eq!(
            talk(&mut c, &format!("hello {n}")),
            format!("got hello {n} fds=none\n")
        );
    }
    flotilla_tests::wait_for(WAIT, "the instances to be removed", || {
        instances(&init).is_empty().then_some(())
    });
}

/// A service whose `Sockets=` names an `Accept=yes` socket is not handed
/// its listener, which the init accepts on (handed over blocking, as
/// every handed socket is, a service accepting on it too could leave the
/// init's `accept` waiting): it gets no `LISTEN_FDS`, and the socket goes
/// on making an instance for each connection.
#[test]
fn an_accept_yes_listener_is_not_handed_to_a_service_naming_it() {
    let dir = TestDir::new();
    let port = free_port();
    let reporter = dir.file("reporter.py", REPORTER);
    accept_units(
        &dir,
        &format!("ListenStream=127.0.0.1:{port}\n"),
        "",
        &format!("/usr/bin/python3 {}", reporter.display()),
    );
    let out = dir.join("other.out");
    dir.file(
        "units/other.service",
        &format!(
            "[Service]\nType=oneshot\nRemainAfterExit=yes\nSockets=echo.socket\n\
             ExecStart=/bin/sh -c 'echo \"fds=${{LISTEN_FDS:-none}}\" > {}'\n",
            out.display()
        ),
    );
    let init = dir.start("other.service");
    let other = init.wait_state("other.service", UnitState::Exited);
    assert_eq!(init.unit("echo.socket").state, UnitState::Running);
    let shown = std::fs::read_to_string(&out).unwrap_or_default();
    assert_eq!(shown, "fds=none\n", "{other:?}\n{}", init.output());
    let mut c = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let answer = talk(&mut c, "hello");
    assert!(answer.contains("fds=1 names=connection"), "{answer}");
}
