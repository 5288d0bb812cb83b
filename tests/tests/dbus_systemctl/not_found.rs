//! A running unit whose file is gone at a `daemon-reload`
//! (docs/systemd-units.md, "A running unit whose file is gone"), with
//! Debian's `/bin/systemctl`: a socket with `Accept=yes` started, its
//! file moved away, `systemctl daemon-reload`: it is still active but no
//! longer accepts (its socket file left in place), `systemctl status`
//! says `not-found`; its file back and another reload, still active and
//! still refusing; restarted, it accepts again; once stopped with its
//! file gone, it is gone: systemd's test 12, step by step.

use super::{busd, systemctl, units, Busd};
use flotilla_tests::init::TestDir;
use flotilla_units::state::UnitState;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// A line sent on a connection to `socket` comes back (each connection
/// gets an instance of `echo@.service`, `cat` on it).
fn echoes(socket: &Path, line: &str) {
    let mut c = UnixStream::connect(socket).expect("connect");
    c.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    c.write_all(format!("{line}\n").as_bytes()).expect("write");
    let mut back = String::new();
    BufReader::new(&c).read_line(&mut back).expect("read");
    assert_eq!(back, format!("{line}\n"));
}

/// `systemctl list-units --no-legend`'s first four columns for `unit`
/// (past the mark systemctl puts before a unit not loaded: `*` in the C
/// locale).
fn listed(bus: &Busd, unit: &str) -> Option<String> {
    let out = systemctl(bus, &["list-units", "--all", "--no-legend", unit]);
    out.expect(0);
    out.stdout
        .lines()
        .map(|l| l.trim_start_matches(['*', ' ']))
        .find(|l| l.split_whitespace().next() == Some(unit))
        .map(|l| l.split_whitespace().take(4).collect::<Vec<_>>().join(" "))
}

#[test]
fn an_accepting_socket_whose_file_is_gone_runs_on_as_not_found_until_stopped() {
    let dir = TestDir::new();
    units(&dir);
    let sock = dir.join("echo.sock");
    let file = dir.file(
        "units/echo.socket",
        &format!("[Socket]\nListenStream={}\nAccept=yes\n", sock.display()),
    );
    dir.file(
        "units/echo@.service",
        "[Service]\nExecStart=/bin/cat\nStandardInput=socket\nStandardOutput=socket\n",
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    systemctl(&bus, &["start", "echo.socket"]).expect(0);
    init.wait_state("echo.socket", UnitState::Running);
    echoes(&sock, "before");

    std::fs::rename(&file, dir.join("echo.socket.moved")).expect("move away");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    let out = systemctl(&bus, &["status", "-n0", "echo.socket"]);
    out.expect(0);
    assert!(
        out.stdout
            .contains("Loaded: not-found (Reason: Unit echo.socket not found.)"),
        "{out:?}"
    );
    assert!(out.stdout.contains("Active: active (listening)"), "{out:?}");
    let out = systemctl(&bus, &["show", "-P", "LoadState", "echo.socket"]);
    out.expect(0);
    assert_eq!(out.stdout, "not-found\n");
    assert_eq!(
        listed(&bus, "echo.socket").as_deref(),
        Some("echo.socket not-found active listening")
    );
    // Its socket closed, its file still there: a connection is refused.
    assert!(sock.exists(), "the socket file stays");
    assert!(UnixStream::connect(&sock).is_err(), "not listening");
    assert_eq!(init.unit("echo.socket").state, UnitState::Running);

    // Its file back: read again, still active, still refusing.
    std::fs::rename(dir.join("echo.socket.moved"), &file).expect("move back");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    systemctl(&bus, &["is-active", "echo.socket"]).expect(0);
    assert!(UnixStream::connect(&sock).is_err(), "still not listening");
    // Restarted, it binds again.
    systemctl(&bus, &["restart", "echo.socket"]).expect(0);
    echoes(&sock, "after the restart");

    // Its file gone again and stopped, it is gone: systemd's answer for a
    // unit it does not have.
    std::fs::rename(&file, dir.join("echo.socket.moved")).expect("move away");
    systemctl(&bus, &["daemon-reload"]).expect(0);
    systemctl(&bus, &["stop", "echo.socket"]).expect(0);
    init.wait("echo.socket gone", |s| {
        s.units.iter().all(|u| u.unit != "echo.socket")
    });
    let out = systemctl(&bus, &["status", "-n0", "echo.socket"]);
    assert!(
        out.stderr.contains("Unit echo.socket could not be found."),
        "{out:?}"
    );
    assert_eq!(listed(&bus, "echo.socket"), None);
    assert!(UnixStream::connect(&sock).is_err(), "no longer listening");
}
