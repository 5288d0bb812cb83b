//! Signals go to every connection without one waiting for another: a
//! connection that never reads (its socket full) does not hold up the
//! `JobRemoved` that `systemctl start` waits for on its own connection.

use super::{busd, systemctl, units};
use flotilla_tests::init::TestDir;
use flotilla_tests::{wait_for, WAIT};
use flotilla_units::state::UnitState;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// Units started and stopped to make signals: each change of each is a
/// `PropertiesChanged` of its whole `Unit` interface to every connection,
/// more in all than a socket's buffer holds.
const NOISY: usize = 150;

/// A D-Bus connection to `socket` that authenticates, then reads nothing.
fn deaf_client(socket: &Path) -> UnixStream {
    let mut s = UnixStream::connect(socket).expect("connect to busd");
    // SAFETY: getuid(2) cannot fail.
    let uid = unsafe { libc::getuid() }.to_string();
    let hex: String = uid.bytes().map(|b| format!("{b:02x}")).collect();
    s.write_all(format!("\0AUTH EXTERNAL {hex}\r\n").as_bytes())
        .expect("auth");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        s.read_exact(&mut byte).expect("busd's answer to AUTH");
        line.push(byte[0]);
    }
    assert!(
        line.starts_with(b"OK "),
        "{}",
        String::from_utf8_lossy(&line)
    );
    s.write_all(b"BEGIN\r\n").expect("begin");
    s
}

/// The bytes waiting in `s` to be read.
fn unread(s: &UnixStream) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    let r = unsafe { libc::ioctl(s.as_raw_fd(), libc::FIONREAD, &mut n) };
    assert_eq!(r, 0, "FIONREAD");
    usize::try_from(n).unwrap_or(0)
}

#[test]
fn a_connection_that_never_reads_does_not_hold_up_another_ones_signals() {
    let dir = TestDir::new();
    units(&dir);
    let mut deps = Vec::new();
    for i in 0..NOISY {
        let name = format!("noisy{i}");
        dir.unit(&name, &format!("unit: {name}\nexec-start: sleep 1000\n"));
        deps.push(name);
    }
    dir.unit(
        "noisy",
        &format!(
            "unit: noisy\ntype: virtual\ndepends-on: [webd, {}]\n",
            deps.join(", ")
        ),
    );
    let init = dir.start("default");
    init.wait_state("web", UnitState::Running);
    let bus = busd(&dir);
    let deaf = deaf_client(&bus.socket);
    init.ctl(&["set-target", "noisy", "--wait"]).expect(0);
    init.ctl(&["set-target", "default", "--wait"]).expect(0);
    // The deaf client is well behind (its socket takes about 74 KB of
    // signals on Linux 6.18 before busd's writes to it wait); all the
    // signals of the two switches are more than it holds.
    wait_for(WAIT, "signals piling up on the deaf client", || {
        (unread(&deaf) >= 32 * 1024).then_some(())
    });

    let began = Instant::now();
    let out = systemctl(&bus, &["start", "extra.service"]);
    let took = began.elapsed();
    out.expect(0);
    init.wait_state("extra.service", UnitState::Running);
    assert!(
        took < Duration::from_secs(10),
        "systemctl start took {took:?}"
    );
    drop(deaf);
}
