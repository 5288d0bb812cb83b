//! The `sd_notify` protocol (`sd_notify(3)`): one datagram socket per
//! unit whose notify access is not `none` (`notify_access.rs` in
//! flotilla-units), and the parser of its messages (docs/contract.md §4).
//!
//! How the loop uses it:
//!
//! 1. [`NotifySocket::bind`] at a path it chooses, e.g.
//!    `<runtime dir>/notify/<n>`, once per unit (not per start), through
//!    [`Sys::bind_notify_socket`]; give the child `NOTIFY_SOCKET=<path>`;
//!    watch the socket ([`NotifySocket::as_raw_fd`]) under the unit's token.
//! 2. On each readiness event, [`NotifySocket::recv_all`]. Each
//!    [`Datagram`] carries the sender's PID (the kernel attaches it:
//!    `SO_PASSCRED`, see `unix(7)`): check it against the unit's
//!    `NotifyAccess=` before believing `READY=1` — the socket is
//!    world-writable so that units running as other users can reach it.
//!    When [`Received::more`] is set the per-call bound was hit: call again
//!    without waiting for an event (watching is edge-triggered).
//! 3. [`NotifySocket::close`] removes its path (if it is still this
//!    socket's).
//!
//! Descriptors sent along (`SCM_RIGHTS`, received close-on-exec) are
//! given with their datagram ([`Datagram::fds`]): the loop keeps those of a
//! `FDSTORE=1` message in the unit's descriptor store
//! (`runtime/fdstore.rs`) and closes the others. Datagrams longer than [`MAX_DATAGRAM`] bytes are cut there;
//! their last, incomplete line is dropped and [`Datagram::truncated`] is
//! set.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::socket::UnixCredentials;

use crate::sys::{Credentials, FileId, FileOwner, Os, Pid, Sys, SysError};

/// The longest datagram read whole (systemd uses the same bound).
pub const MAX_DATAGRAM: usize = 4096;

/// The most datagrams [`NotifySocket::recv_all`] reads in one call.
pub const MAX_PER_CALL: usize = 64;

/// One `KEY=VALUE` line of a notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotifyMsg {
    /// `READY=1`: start-up is finished.
    Ready,
    /// `RELOADING=1`: reloading its configuration.
    Reloading,
    /// `STOPPING=1`: shutting down.
    Stopping,
    /// `STATUS=…`: a free-form status line for `initctl status`.
    Status(String),
    /// `MAINPID=…`: the main process is now this one.
    MainPid(Pid),
    /// `ERRNO=…`: the error the service failed with.
    Errno(i32),
    /// `EXTEND_TIMEOUT_USEC=…`: the current start, reload or stop timeout
    /// is extended to this long from now.
    ExtendTimeout(Duration),
    /// `WATCHDOG=1`: the keep-alive ping.
    Watchdog,
    /// `WATCHDOG=trigger`: the service asks to be treated as hung.
    WatchdogTrigger,
    /// `WATCHDOG_USEC=…`: the watchdog interval is now this.
    WatchdogUsec(Duration),
    /// `MONOTONIC_USEC=…`: `CLOCK_MONOTONIC` in microseconds, sent with
    /// `RELOADING=1`.
    MonotonicUsec(u64),
    /// A key this parser does not know (`BARRIER`, …), or one the loop
    /// reads as a pair (the store's `FDSTORE`, `FDNAME`, …), kept.
    Unknown {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// A known key with a value it cannot take (`READY=0`, `MAINPID=x`).
    BadValue {
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
    /// A line without `=`.
    Malformed(String),
}

/// Parses one datagram: lines of `KEY=VALUE`, separated by newlines. Empty
/// lines are skipped; nothing panics, whatever the bytes (invalid UTF-8 is
/// replaced).
pub fn parse_notify(datagram: &[u8]) -> Vec<NotifyMsg> {
    datagram
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .map(parse_line)
        .collect()
}

fn parse_line(line: &[u8]) -> NotifyMsg {
    let Some(eq) = line.iter().position(|&c| c == b'=') else {
        return NotifyMsg::Malformed(String::from_utf8_lossy(line).into_owned());
    };
    let (key, value) = line.split_at_checked(eq).unwrap_or((line, &[]));
    let value = value.get(1..).unwrap_or_default();
    let text = || String::from_utf8_lossy(value).into_owned();
    let num = |v: &[u8]| {
        std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
    };
    let parsed = match key {
        b"READY" => (value == b"1").then_some(NotifyMsg::Ready),
        b"RELOADING" => (value == b"1").then_some(NotifyMsg::Reloading),
        b"STOPPING" => (value == b"1").then_some(NotifyMsg::Stopping),
        b"STATUS" => Some(NotifyMsg::Status(text())),
        b"MAINPID" => num(value)
            .and_then(|n| Pid::try_from(n).ok())
            .filter(|&p| p > 0)
            .map(NotifyMsg::MainPid),
        b"ERRNO" => num(value)
            .and_then(|n| i32::try_from(n).ok())
            .map(NotifyMsg::Errno),
        b"EXTEND_TIMEOUT_USEC" => {
            num(value).map(|n| NotifyMsg::ExtendTimeout(Duration::from_micros(n)))
        }
        b"WATCHDOG" => match value {
            b"1" => Some(NotifyMsg::Watchdog),
            b"trigger" => Some(NotifyMsg::WatchdogTrigger),
            _ => None,
        },
        b"WATCHDOG_USEC" => num(value).map(|n| NotifyMsg::WatchdogUsec(Duration::from_micros(n))),
        b"MONOTONIC_USEC" => num(value).map(NotifyMsg::MonotonicUsec),
        _ => {
            return NotifyMsg::Unknown {
                key: String::from_utf8_lossy(key).into_owned(),
                value: text(),
            };
        }
    };
    parsed.unwrap_or_else(|| NotifyMsg::BadValue {
        key: String::from_utf8_lossy(key).into_owned(),
        value: text(),
    })
}

/// A problem receiving on a notify socket.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotifyError {
    /// A system call failed.
    #[error("notify socket {path}: {op}: {errno}")]
    Io {
        /// The path.
        path: PathBuf,
        /// `recvmsg`.
        op: &'static str,
        /// The error.
        errno: Os,
    },
}

/// One datagram received.
#[derive(Debug)]
pub struct Datagram {
    /// The sender's PID, from `SCM_CREDENTIALS` (`None` if the kernel
    /// attached none, which does not happen on Linux with `SO_PASSCRED`).
    pub pid: Option<Pid>,
    /// The sender's UID.
    pub uid: Option<u32>,
    /// The messages, in order.
    pub msgs: Vec<NotifyMsg>,
    /// The datagram was longer than [`MAX_DATAGRAM`] (its tail is lost).
    pub truncated: bool,
    /// The descriptors sent along, in order (close-on-exec); closed when
    /// dropped.
    pub fds: Vec<OwnedFd>,
}

/// What [`NotifySocket::recv_all`] got.
#[derive(Debug, Default)]
pub struct Received {
    /// The datagrams, oldest first.
    pub datagrams: Vec<Datagram>,
    /// More may be waiting: [`MAX_PER_CALL`] were read. Call again.
    pub more: bool,
}

/// The first directory on the way to `socket` that a process running as
/// `creds` may not search, with its owner and mode; `None` when every one
/// can be searched, when the process runs as root (who may search
/// anything) or when a directory cannot be read. Without this a unit whose
/// user cannot reach its socket sits in `starting` until its time-out, its
/// `sd_notify` failing with `EACCES` where the init cannot see it. Access
/// control lists are not read: the mode bits decide.
pub fn unreachable_dir(
    sys: &dyn Sys,
    socket: &Path,
    creds: &Credentials,
) -> Option<(PathBuf, FileOwner)> {
    let uid = creds.uid.filter(|&u| u != 0)?;
    let gid = creds.gid.unwrap_or(0);
    let groups = creds.groups.as_deref().unwrap_or(&[]);
    let mut dirs: Vec<&Path> = socket.ancestors().skip(1).collect();
    dirs.reverse();
    for dir in dirs {
        let owner = sys.owner_and_mode(dir).ok()?;
        if !may_search(&owner, uid, gid, groups) {
            return Some((dir.to_path_buf(), owner));
        }
    }
    None
}

/// The search (execute) bit of the one class of `owner`'s mode that
/// applies to the user: owner, else group, else others (the kernel does
/// not fall through from one class to the next).
fn may_search(owner: &FileOwner, uid: u32, gid: u32, groups: &[u32]) -> bool {
    let bit = if owner.uid == uid {
        0o100
    } else if owner.gid == gid || groups.contains(&owner.gid) {
        0o010
    } else {
        0o001
    };
    owner.mode & bit != 0
}

/// A bound notify socket. See the module documentation.
#[derive(Debug)]
pub struct NotifySocket {
    fd: OwnedFd,
    path: PathBuf,
    /// The socket file's identity, to remove only our own.
    id: FileId,
    buf: Vec<u8>,
    cmsg: Vec<u8>,
    max_per_call: usize,
}

impl NotifySocket {
    /// Binds a notify socket at the absolute `path` (see
    /// [`Sys::bind_notify_socket`]).
    pub fn bind(sys: &dyn Sys, path: &Path) -> Result<NotifySocket, SysError> {
        let (fd, id) = sys.bind_notify_socket(path)?;
        Ok(NotifySocket::adopt(fd, path, id))
    }

    /// A socket bound at `path` already (`id`: its file), as one carried
    /// across a re-exec.
    pub fn adopt(fd: OwnedFd, path: &Path, id: FileId) -> NotifySocket {
        NotifySocket {
            fd,
            path: path.to_owned(),
            id,
            buf: vec![0; MAX_DATAGRAM],
            // Credentials plus the most descriptors one message can carry
            // (SCM_MAX_FD, 253), so the control data is never truncated.
            cmsg: nix::cmsg_space!(UnixCredentials, [RawFd; 253]),
            max_per_call: MAX_PER_CALL,
        }
    }

    /// Its file, to tell it from a newer socket at the same path.
    pub fn file_id(&self) -> FileId {
        self.id
    }

    /// Closes the socket and removes its path (if it is still this
    /// socket's: a newer one may have been bound there since).
    pub fn close(self, sys: &dyn Sys) {
        sys.remove_socket(&self.path, self.id);
    }

    /// The path, for `NOTIFY_SOCKET`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the waiting datagrams, at most [`MAX_PER_CALL`].
    pub fn recv_all(&mut self) -> Result<Received, NotifyError> {
        let mut out = Received::default();
        while out.datagrams.len() < self.max_per_call {
            match self.recv_one() {
                Ok(Some(d)) => out.datagrams.push(d),
                Ok(None) => return Ok(out),
                Err(e) => return Err(e),
            }
        }
        out.more = true;
        Ok(out)
    }

    fn recv_one(&mut self) -> Result<Option<Datagram>, NotifyError> {
        let got = match crate::sys::fdpass::recv(self.fd.as_raw_fd(), &mut self.buf, &mut self.cmsg)
        {
            Ok(Some(g)) => g,
            Ok(None) => return Ok(None),
            Err(e) => {
                return Err(NotifyError::Io {
                    path: self.path.clone(),
                    op: "recvmsg",
                    errno: Os(e),
                })
            }
        };
        let (len, truncated, fds) = (got.bytes, got.truncated, got.fds);
        let pid = got.creds.map(|(pid, _)| pid);
        let uid = got.creds.map(|(_, uid)| uid);
        let mut data = self.buf.get(..len).unwrap_or_default();
        if truncated {
            // Drop the last line: it was cut.
            data = match data.iter().rposition(|&c| c == b'\n') {
                Some(i) => data.get(..i).unwrap_or_default(),
                None => &[],
            };
        }
        Ok(Some(Datagram {
            pid,
            uid,
            msgs: parse_notify(data),
            truncated,
            fds,
        }))
    }
}

impl AsRawFd for NotifySocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::sys::real::RealSys;
    use nix::sys::socket::{MsgFlags, UnixAddr};
    use std::io;
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::UnixDatagram;

    fn bv(key: &str, value: &str) -> NotifyMsg {
        NotifyMsg::BadValue {
            key: key.into(),
            value: value.into(),
        }
    }

    #[test]
    fn parses_the_whole_message_set() {
        let d = b"READY=1\nRELOADING=1\nSTOPPING=1\nSTATUS=Serving 3 clients = ok\nMAINPID=4711\nERRNO=2\n\
EXTEND_TIMEOUT_USEC=5000000\nWATCHDOG=1\nWATCHDOG=trigger\nWATCHDOG_USEC=30000000\nMONOTONIC_USEC=123\nFDSTORE=1\n";
        assert_eq!(
            parse_notify(d),
            vec![
                NotifyMsg::Ready,
                NotifyMsg::Reloading,
                NotifyMsg::Stopping,
                NotifyMsg::Status("Serving 3 clients = ok".into()),
                NotifyMsg::MainPid(4711),
                NotifyMsg::Errno(2),
                NotifyMsg::ExtendTimeout(Duration::from_secs(5)),
                NotifyMsg::Watchdog,
                NotifyMsg::WatchdogTrigger,
                NotifyMsg::WatchdogUsec(Duration::from_secs(30)),
                NotifyMsg::MonotonicUsec(123),
                NotifyMsg::Unknown {
                    key: "FDSTORE".into(),
                    value: "1".into()
                },
            ]
        );
    }

    #[test]
    fn malformed_and_bad_values() {
        assert_eq!(parse_notify(b""), vec![]);
        assert_eq!(parse_notify(b"\n\n"), vec![]);
        assert_eq!(
            parse_notify(b"READY"),
            vec![NotifyMsg::Malformed("READY".into())]
        );
        assert_eq!(parse_notify(b"READY=0"), vec![bv("READY", "0")]);
        assert_eq!(parse_notify(b"READY=1 "), vec![bv("READY", "1 ")]);
        assert_eq!(parse_notify(b"MAINPID=0"), vec![bv("MAINPID", "0")]);
        assert_eq!(parse_notify(b"MAINPID=-5"), vec![bv("MAINPID", "-5")]);
        assert_eq!(
            parse_notify(b"MAINPID=99999999999"),
            vec![bv("MAINPID", "99999999999")]
        );
        assert_eq!(parse_notify(b"MAINPID=12abc"), vec![bv("MAINPID", "12abc")]);
        assert_eq!(parse_notify(b"ERRNO="), vec![bv("ERRNO", "")]);
        assert_eq!(
            parse_notify(b"EXTEND_TIMEOUT_USEC=1e6"),
            vec![bv("EXTEND_TIMEOUT_USEC", "1e6")]
        );
        assert_eq!(parse_notify(b"WATCHDOG=2"), vec![bv("WATCHDOG", "2")]);
        assert_eq!(
            parse_notify(b"=x"),
            vec![NotifyMsg::Unknown {
                key: String::new(),
                value: "x".into()
            }]
        );
        assert_eq!(
            parse_notify(b"STATUS="),
            vec![NotifyMsg::Status(String::new())]
        );
        assert_eq!(
            parse_notify(b"STATUS=\xff"),
            vec![NotifyMsg::Status("\u{fffd}".into())]
        );
        assert_eq!(
            parse_notify(b"ready=1"),
            vec![NotifyMsg::Unknown {
                key: "ready".into(),
                value: "1".into()
            }]
        );
    }

    proptest::proptest! {
        #[test]
        fn never_panics_on_any_bytes(d in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let msgs = parse_notify(&d);
            let lines = d.split(|&c| c == b'\n').filter(|l| !l.is_empty()).count();
            proptest::prop_assert_eq!(msgs.len(), lines);
        }

        #[test]
        fn known_keys_with_any_value(
            key in proptest::sample::select(vec!["READY", "MAINPID", "ERRNO", "WATCHDOG", "STATUS", "EXTEND_TIMEOUT_USEC"]),
            value in "[ -~]{0,24}",
        ) {
            let msgs = parse_notify(format!("{key}={value}").as_bytes());
            proptest::prop_assert_eq!(msgs.len(), 1);
        }

        #[test]
        fn mainpid_round_trips(pid in 1i32..=i32::MAX) {
            proptest::prop_assert_eq!(parse_notify(format!("MAINPID={pid}\n").as_bytes()), vec![NotifyMsg::MainPid(pid)]);
        }
    }

    #[test]
    fn refuses_bad_paths() {
        let long = format!("/tmp/{}", "x".repeat(107));
        let err = NotifySocket::bind(&RealSys, Path::new(&long)).unwrap_err();
        assert!(err.to_string().contains("longer than 107 bytes"), "{err}");
        assert!(NotifySocket::bind(&RealSys, Path::new("relative/sock")).is_err());
        let file = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(
            NotifySocket::bind(&RealSys, file.path()).unwrap_err(),
            SysError::NotASocket(file.path().to_owned())
        );
    }

    #[test]
    fn receives_with_the_sender_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("unit");
        let mut sock = NotifySocket::bind(&RealSys, &path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666);
        let none = sock.recv_all().unwrap();
        assert!(none.datagrams.is_empty() && !none.more);
        let tx = UnixDatagram::unbound().unwrap();
        tx.send_to(b"READY=1\nSTATUS=up", &path).unwrap();
        tx.send_to(b"WATCHDOG=1", &path).unwrap();
        let got = sock.recv_all().unwrap();
        assert!(!got.more);
        assert_eq!(got.datagrams.len(), 2);
        let d = &got.datagrams[0];
        assert_eq!(d.pid, Some(std::process::id() as Pid));
        assert_eq!(d.uid, Some(nix::unistd::getuid().as_raw()));
        assert_eq!(
            d.msgs,
            vec![NotifyMsg::Ready, NotifyMsg::Status("up".into())]
        );
        assert_eq!(got.datagrams[1].msgs, vec![NotifyMsg::Watchdog]);
    }

    #[test]
    fn bounded_per_call_and_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("unit");
        let mut sock = NotifySocket::bind(&RealSys, &path).unwrap();
        let tx = UnixDatagram::unbound().unwrap();
        // The kernel queues few datagrams per socket
        // (net.unix.max_dgram_qlen, 10 by default), so use a small bound.
        sock.max_per_call = 4;
        for _ in 0..7 {
            tx.send_to(b"WATCHDOG=1", &path).unwrap();
        }
        let first = sock.recv_all().unwrap();
        assert_eq!((first.datagrams.len(), first.more), (4, true));
        let second = sock.recv_all().unwrap();
        assert_eq!((second.datagrams.len(), second.more), (3, false));

        let mut big = b"READY=1\nSTATUS=".to_vec();
        big.resize(MAX_DATAGRAM + 100, b'x');
        tx.send_to(&big, &path).unwrap();
        let got = sock.recv_all().unwrap();
        assert!(got.datagrams[0].truncated);
        assert_eq!(got.datagrams[0].msgs, vec![NotifyMsg::Ready]);
    }

    #[test]
    fn passed_descriptors_are_received() {
        use nix::sys::socket::{sendmsg, ControlMessage};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("unit");
        let mut sock = NotifySocket::bind(&RealSys, &path).unwrap();
        let tx = UnixDatagram::unbound().unwrap();
        let (r, _w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
        let fds = [r.as_raw_fd()];
        let iov = [io::IoSlice::new(b"FDSTORE=1")];
        let addr = UnixAddr::new(&path).unwrap();
        sendmsg(
            tx.as_raw_fd(),
            &iov,
            &[ControlMessage::ScmRights(&fds)],
            MsgFlags::empty(),
            Some(&addr),
        )
        .unwrap();
        // Descriptors open on this pipe: ours (r and _w) and, if it leaked,
        // the one received.
        let ino = nix::sys::stat::fstat(&r).unwrap().st_ino;
        let link = format!("pipe:[{ino}]");
        let count = || {
            std::fs::read_dir("/proc/self/fd")
                .unwrap()
                .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|t| t.as_os_str() == link.as_str())
                .count()
        };
        assert_eq!(count(), 2);
        let mut got = sock.recv_all().unwrap();
        assert_eq!(got.datagrams.len(), 1);
        let d = got.datagrams.pop().unwrap();
        assert_eq!(
            d.msgs,
            vec![NotifyMsg::Unknown {
                key: "FDSTORE".into(),
                value: "1".into()
            }]
        );
        // Received, close-on-exec, and the same pipe.
        assert_eq!(d.fds.len(), 1);
        assert_eq!(count(), 3);
        // SAFETY: a valid descriptor we own.
        let flags = unsafe { libc::fcntl(d.fds[0].as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
        drop(d);
        assert_eq!(count(), 2);
    }

    #[test]
    fn close_removes_only_its_own_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("unit");
        let old = NotifySocket::bind(&RealSys, &path).unwrap();
        let new = NotifySocket::bind(&RealSys, &path).unwrap();
        old.close(&RealSys);
        assert!(path.exists());
        new.close(&RealSys);
        assert!(!path.exists());
    }

    #[test]
    fn socket_is_close_on_exec() {
        let dir = tempfile::tempdir().unwrap();
        let sock = NotifySocket::bind(&RealSys, &dir.path().join("s")).unwrap();
        // SAFETY: a valid descriptor we own.
        let flags = unsafe { libc::fcntl(sock.as_raw_fd(), libc::F_GETFD) };
        assert_eq!(flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
    }

    /// The one class of the mode that applies decides, as in the kernel:
    /// the owner, else a group of the user's, else others.
    #[test]
    fn search_permission_by_class() {
        let dir = |uid, gid, mode| FileOwner { uid, gid, mode };
        // Owner: only the owner's bit counts, even when others may.
        assert!(may_search(&dir(1000, 0, 0o700), 1000, 1000, &[]));
        assert!(!may_search(&dir(1000, 0, 0o011), 1000, 1000, &[]));
        // Group, primary or supplementary.
        assert!(may_search(&dir(0, 1000, 0o710), 1000, 1000, &[]));
        assert!(may_search(&dir(0, 27, 0o710), 1000, 1000, &[1000, 27]));
        assert!(!may_search(&dir(0, 27, 0o701), 1000, 1000, &[27]));
        // Others.
        assert!(may_search(&dir(0, 0, 0o711), 1000, 1000, &[]));
        assert!(!may_search(&dir(0, 0, 0o770), 1000, 1000, &[]));
    }
}
