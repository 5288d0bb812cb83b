//! The unix datagram queue's length PID 1 raises at start (docs/pid1.md,
//! "What PID 1 does at start").

use std::path::Path;

use crate::sys::Sys;

/// How many datagrams a unix socket queues before a sender waits
/// (`net.unix.max_dgram_qlen`): systemd's PID 1 raises the kernel's 10 to
/// this before it makes its sockets. The value is taken when a socket is
/// made, so it holds for every socket the init binds afterwards: the
/// notify sockets and those of socket units, `/dev/log` among them. With
/// 10, a burst of `syslog(3)` lines (the daemons of a boot starting, or of
/// a shutdown exiting, on one emulated CPU) fills journald's `/dev/log`
/// and each sender waits in its `send` until journald reads.
pub const UNIX_MAX_DGRAM_QLEN: u64 = 512;

const MAX_DGRAM_QLEN: &str = "/proc/sys/net/unix/max_dgram_qlen";

/// The value to write to `net.unix.max_dgram_qlen`, given what it holds:
/// [`UNIX_MAX_DGRAM_QLEN`] when it is lower (never lowered), else none.
pub fn raised_dgram_qlen(current: &[u8]) -> Option<u64> {
    let now: u64 = std::str::from_utf8(current).ok()?.trim().parse().ok()?;
    (now < UNIX_MAX_DGRAM_QLEN).then_some(UNIX_MAX_DGRAM_QLEN)
}

/// Raises `net.unix.max_dgram_qlen` as systemd does ([`UNIX_MAX_DGRAM_QLEN`]).
/// Where it cannot be written (a container's read-only `/proc/sys`) the
/// kernel's value stands, as under systemd, which says so only at debug
/// level; here a line on the console.
pub(super) fn raise_dgram_qlen(sys: &dyn Sys) -> Option<String> {
    let now = sys.read_file_limited(Path::new(MAX_DGRAM_QLEN), 64).ok()?;
    let want = raised_dgram_qlen(&now)?;
    sys.write_sysctl(Path::new(MAX_DGRAM_QLEN), &format!("{want}\n"))
        .err()
        .map(|e| format!("init: net.unix.max_dgram_qlen kept: {e}"))
}
